package topology

import (
	"fmt"
	"strings"
)

// Suffixes are the name parts a deployment may tune: dead-letter suffix and hold queue infix.
type Suffixes struct {
	Dead     string
	Deferred string
}

// DefaultSuffixes returns the backend's default suffixes, .dead and .deferred.
func DefaultSuffixes() Suffixes {
	return Suffixes{Dead: DefaultDeadSuffix, Deferred: DefaultDeferredSuffix}
}

// MaxNameBytes is the longest logical queue name that keeps every derived name, a ten-digit TTL
// included, within 255 bytes: 235 with the defaults, zero or less when no room is left.
func (s Suffixes) MaxNameBytes() int {
	return MaxQueueNameBytes - max(len(s.Dead), len(s.Deferred)+MaxTTLDigits)
}

// SettingError breaks a rule; Setting names what to change (e.g. "deferred_suffix").
type SettingError struct {
	Setting string
	msg     string
}

func (e *SettingError) Error() string { return e.msg }

func settingError(setting, format string, args ...any) *SettingError {
	return &SettingError{Setting: setting, msg: fmt.Sprintf(format, args...)}
}

// Validate checks the suffixes: non-empty and different, the dead suffix not RedeclaringSuffix, the
// deferred suffix not ending in a digit, room for a name, and no dead-letter name that could be a
// hold queue's. Errors are *SettingError.
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

// deadLooksLikeHold reports whether a dead-letter queue name could equal another queue's hold queue
// name, with an example. Only a dead suffix ending in digits can: its digits extend a name ending
// in the deferred suffix, or its head must line up with that suffix's end. Any digits count,
// leading zeros too, as permission patterns use [0-9]+.
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
		// head ends in the deferred suffix: "q"+dead is a hold queue of "q" plus the rest of head.
		return clashExample{dead: "q" + s.Dead, holdOf: "q" + strings.TrimSuffix(head, s.Deferred)}, true
	case strings.HasSuffix(s.Deferred, head):
		p := "q"
		q := p + strings.TrimSuffix(s.Deferred, head)
		return clashExample{dead: q + s.Dead, holdOf: p}, true
	}
	return clashExample{}, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
