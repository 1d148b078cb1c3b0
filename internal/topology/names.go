package topology

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ValidateQueueName checks a logical queue name: 1 to s.MaxNameBytes() bytes, no amq. prefix.
func ValidateQueueName(name string, s Suffixes) error {
	limit := s.MaxNameBytes()
	if len(name) == 0 {
		return fmt.Errorf("queue name must not be empty; it may be 1 to %d bytes", limit)
	}
	if len(name) > limit {
		longest := fmt.Sprintf("%q followed by a 10-digit TTL", s.Deferred)
		if len(s.Dead) > len(s.Deferred)+MaxTTLDigits {
			longest = fmt.Sprintf("the dead-letter queue's, ending in %q", s.Dead)
		}
		return fmt.Errorf("queue name is %d bytes; it may be 1 to %d bytes, so that its longest derived name (%s) fits RabbitMQ's %d-byte limit",
			len(name), limit, longest, MaxQueueNameBytes)
	}
	return ValidateQueueNameForm(name)
}

// ValidateQueueNameForm checks what holds whatever the suffixes: not empty, not starting with amq.
func ValidateQueueNameForm(name string) error {
	if len(name) == 0 {
		return fmt.Errorf("queue name must not be empty")
	}
	if strings.HasPrefix(name, ReservedPrefix) {
		return fmt.Errorf("queue name %q starts with %q, which RabbitMQ reserves for its own queues", name, ReservedPrefix)
	}
	return nil
}

// DeadQueueName returns the name of queue's dead-letter queue.
func DeadQueueName(queue string, s Suffixes) string { return queue + s.Dead }

// SuffixesOf reads back the suffixes behind queue's derived names, else fallback's.
func SuffixesOf(queue, dead, holdPrefix string, fallback Suffixes) Suffixes {
	if suffix, ok := strings.CutPrefix(dead, queue); ok && suffix != "" {
		fallback.Dead = suffix
	}
	if suffix, ok := strings.CutPrefix(holdPrefix, queue); ok && suffix != "" {
		fallback.Deferred = suffix
	}
	return fallback
}

// DeadQueueArgs returns the dead-letter queue's arguments: none.
func DeadQueueArgs() Arguments { return Arguments{} }

// HoldQueuePrefix returns what every hold queue of queue starts with.
func HoldQueuePrefix(queue string, s Suffixes) string { return queue + s.Deferred }

// HoldQueueName returns the hold queue of queue's ttlMs-long waits, e.g. orders.deferred.30000.
func HoldQueueName(queue string, ttlMs int64, s Suffixes) string {
	return HoldQueuePrefix(queue, s) + strconv.FormatInt(ttlMs, 10)
}

// HoldQueueArgs returns the arguments of queue's hold queue for ttlMs (1 to MaxDeferralMs): the
// TTL, dead-lettering back to queue, and an expiry of twice the TTL; nothing else, so every process
// computes the same table.
func HoldQueueArgs(queue string, ttlMs int64) (Arguments, error) {
	if err := validateHoldTTL(ttlMs); err != nil {
		return nil, err
	}
	return Arguments{
		ArgMessageTTL:           Int(ttlMs),
		ArgDeadLetterExchange:   String(""),
		ArgDeadLetterRoutingKey: String(queue),
		ArgExpires:              Int(2 * ttlMs),
	}, nil
}

func validateHoldTTL(ttlMs int64) error {
	if ttlMs < 1 || ttlMs > MaxDeferralMs {
		return fmt.Errorf("a hold queue's TTL must be a whole number of milliseconds from 1 to %d; got %d", MaxDeferralMs, ttlMs)
	}
	return nil
}

// ParseHoldQueueName reports whether name is a hold queue of queue (TTL 1 to MaxDeferralMs), and
// its TTL.
func ParseHoldQueueName(queue, name string, s Suffixes) (int64, bool) {
	rest, ok := strings.CutPrefix(name, HoldQueuePrefix(queue, s))
	if !ok {
		return 0, false
	}
	return parseTTL(rest)
}

func parseTTL(digits string) (int64, bool) {
	if digits == "" || len(digits) > MaxTTLDigits || digits[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return 0, false
		}
	}
	ttl, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || ttl > MaxDeferralMs {
		return 0, false
	}
	return ttl, true
}

// HoldQueuePattern matches queue's hold queues, e.g. ^orders\.deferred\.[0-9]+$.
func HoldQueuePattern(queue string, s Suffixes) string {
	return "^" + regexp.QuoteMeta(queue+s.Deferred) + "[0-9]+$"
}

// QueuesPattern matches queue, its dead-letter and hold queues, for configure and read permissions.
func QueuesPattern(queue string, s Suffixes) string {
	return "^" + topologyGroup(queue, s) + "$"
}

// WritePattern is QueuesPattern plus amq.default, which publishing needs.
func WritePattern(queue string, s Suffixes) string {
	return `^(amq\.default|` + topologyGroup(queue, s) + ")$"
}

func topologyGroup(queue string, s Suffixes) string {
	return regexp.QuoteMeta(queue) + "(" + regexp.QuoteMeta(s.Dead) + "|" + regexp.QuoteMeta(s.Deferred) + "[0-9]+)?"
}
