package topology

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ValidateQueueName checks a logical queue name against the limits that
// these suffixes impose: 1 to s.MaxNameBytes() bytes (235 with the default
// suffixes) and not starting with the reserved amq. prefix.
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

// ValidateQueueNameForm checks the rules of a queue name that hold whatever
// the suffixes: not empty and not starting with the reserved amq. prefix.
// ValidateQueueName adds the length limit, which depends on the suffixes.
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

// SuffixesOf reads back the suffixes that named queue's dead-letter queue
// dead and its hold queue prefix holdPrefix: what each adds to queue. A name
// that is empty (not known) or does not extend queue leaves that suffix of
// fallback in place.
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

// HoldQueueName returns the name of the hold queue that keeps queue's
// ttlMs-long waits, e.g. orders.deferred.30000.
func HoldQueueName(queue string, ttlMs int64, s Suffixes) string {
	return HoldQueuePrefix(queue, s) + strconv.FormatInt(ttlMs, 10)
}

// HoldQueueArgs returns the arguments of queue's hold queue for ttlMs: the
// TTL, dead-lettering back to queue through the default exchange, and an
// expiry of twice the TTL. They depend on nothing else, so every process
// computes the same table for the same name. ttlMs must be 1 to MaxDeferralMs.
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

// validateHoldTTL checks that ttlMs is a hold queue's TTL: 1 to MaxDeferralMs.
func validateHoldTTL(ttlMs int64) error {
	if ttlMs < 1 || ttlMs > MaxDeferralMs {
		return fmt.Errorf("a hold queue's TTL must be a whole number of milliseconds from 1 to %d; got %d", MaxDeferralMs, ttlMs)
	}
	return nil
}

// ParseHoldQueueName reports whether name is one of queue's hold queues and
// its TTL. Only exactly queue + deferred suffix + a decimal TTL from 1 to
// MaxDeferralMs without a leading zero is recognised: not the bare prefix, not
// orders.deferred.5000.bak, not another queue's hold queue.
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

// HoldQueuePattern returns a regular expression matching the names of
// queue's hold queues, e.g. ^orders\.deferred\.[0-9]+$.
func HoldQueuePattern(queue string, s Suffixes) string {
	return "^" + regexp.QuoteMeta(queue+s.Deferred) + "[0-9]+$"
}

// QueuesPattern returns a regular expression matching queue, its dead-letter
// queue and its hold queues, for configure and read permissions, e.g.
// ^orders(\.dead|\.deferred\.[0-9]+)?$.
func QueuesPattern(queue string, s Suffixes) string {
	return "^" + topologyGroup(queue, s) + "$"
}

// WritePattern returns a regular expression for write permissions: the whole
// topology plus amq.default, which publishing through the default exchange and
// declaring a queue that dead-letters into "" both need, e.g.
// ^(amq\.default|orders(\.dead|\.deferred\.[0-9]+)?)$.
func WritePattern(queue string, s Suffixes) string {
	return `^(amq\.default|` + topologyGroup(queue, s) + ")$"
}

func topologyGroup(queue string, s Suffixes) string {
	return regexp.QuoteMeta(queue) + "(" + regexp.QuoteMeta(s.Dead) + "|" + regexp.QuoteMeta(s.Deferred) + "[0-9]+)?"
}
