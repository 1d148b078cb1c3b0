package topology

import (
	"fmt"
	"strings"
)

// Suffixes are the two name parts a deployment may tune: the dead-letter
// queue's suffix and the infix between a queue's name and a hold queue's TTL.
type Suffixes struct {
	Dead     string
	Deferred string
}

// DefaultSuffixes returns the backend's default suffixes, .dead and .deferred.
func DefaultSuffixes() Suffixes {
	return Suffixes{Dead: DefaultDeadSuffix, Deferred: DefaultDeferredSuffix}
}

// MaxNameBytes is the longest logical queue name these suffixes allow: every
// derived name, including a hold queue with a ten-digit TTL, must fit in
// RabbitMQ's 255 bytes. It is 235 with the default suffixes and may be zero or
// negative for suffixes that leave no room.
func (s Suffixes) MaxNameBytes() int {
	return MaxQueueNameBytes - max(len(s.Dead), len(s.Deferred)+MaxTTLDigits)
}

// SettingError is a setting or input that breaks a rule; Setting names the
// attribute, function argument or option to change, e.g. "deferred_suffix",
// "retry_delays[1]", "message_ttl", so that callers report it there without
// reading the message, which names it too.
type SettingError struct {
	Setting string
	msg     string
}

func (e *SettingError) Error() string { return e.msg }

func settingError(setting, format string, args ...any) *SettingError {
	return &SettingError{Setting: setting, msg: fmt.Sprintf(format, args...)}
}

// Validate checks the suffixes: both non-empty and different, the dead
// suffix not the holding queue's (RedeclaringSuffix), the deferred suffix not
// ending in a digit, room left for a queue name, and no dead-letter
// queue name that could be taken for a hold queue. Its errors are
// *SettingError, naming the suffix to change.
func (s Suffixes) Validate() error {
	if s.Dead == "" {
		return settingError("dead_suffix", "dead_suffix must not be empty (the default is %q)", DefaultDeadSuffix)
	}
	if s.Deferred == "" {
		return settingError("deferred_suffix", "deferred_suffix must not be empty (the default is %q)", DefaultDeferredSuffix)
	}
	if s.Dead == s.Deferred {
		return settingError("deferred_suffix", "dead_suffix and deferred_suffix must differ; both are %q", s.Dead)
	}
	if s.Dead == RedeclaringSuffix {
		return settingError("dead_suffix", "dead_suffix must not be %q: that names the holding queue that keeps a queue's messages while it is declared again with new arguments", RedeclaringSuffix)
	}
	if isDigit(s.Deferred[len(s.Deferred)-1]) {
		return settingError("deferred_suffix", "deferred_suffix %q must not end in a digit: the TTL that follows it would run into it", s.Deferred)
	}
	if s.MaxNameBytes() < 1 {
		longer := "dead_suffix"
		if len(s.Deferred)+MaxTTLDigits > len(s.Dead) {
			longer = "deferred_suffix"
		}
		return settingError(longer, "dead_suffix (%d bytes) and deferred_suffix (%d bytes, plus 10 digits of TTL) leave no room for a queue name within RabbitMQ's %d-byte limit; dead_suffix may be at most %d bytes and deferred_suffix at most %d",
			len(s.Dead), len(s.Deferred), MaxQueueNameBytes, MaxQueueNameBytes-1, MaxQueueNameBytes-1-MaxTTLDigits)
	}
	if example, clash := s.deadLooksLikeHold(); clash {
		return settingError("dead_suffix", "dead_suffix %q would make dead-letter queue names look like hold queues (for example %q is also a hold queue of %q with deferred_suffix %q); choose a dead_suffix that does not end in digits",
			s.Dead, example.dead, example.holdOf, s.Deferred)
	}
	return nil
}

type clashExample struct{ dead, holdOf string }

// deadLooksLikeHold reports whether some queue's dead-letter queue name could
// equal some (other) queue's hold-queue name, with an example. Hold-queue
// names end in a TTL without a leading zero, so a dead suffix that does not
// end in a digit can never clash. Otherwise split the dead suffix into a head
// and its trailing digits: when the head is empty the digits can extend a
// queue name that already ends in the deferred suffix; else a clash needs the
// head to line up with the end of the deferred suffix. Any run of digits
// counts, leading zeros and all, because permissions and policies use the
// pattern [0-9]+, not the stricter rule by which hold queues are recognised.
func (s Suffixes) deadLooksLikeHold() (clashExample, bool) {
	i := len(s.Dead)
	for i > 0 && isDigit(s.Dead[i-1]) {
		i--
	}
	head, digits := s.Dead[:i], s.Dead[i:]
	if digits == "" {
		return clashExample{}, false
	}
	if head == "" {
		q := "q" + s.Deferred + "1"
		return clashExample{dead: q + s.Dead, holdOf: "q"}, true
	}
	switch {
	case strings.HasSuffix(head, s.Deferred):
		// head ends in the deferred suffix, so "q"+dead is a hold queue of
		// "q" followed by the rest of head.
		return clashExample{dead: "q" + s.Dead, holdOf: "q" + strings.TrimSuffix(head, s.Deferred)}, true
	case strings.HasSuffix(s.Deferred, head):
		p := "q"
		q := p + strings.TrimSuffix(s.Deferred, head)
		return clashExample{dead: q + s.Dead, holdOf: p}, true
	}
	return clashExample{}, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
