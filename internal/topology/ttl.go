package topology

import (
	"fmt"
	"time"
)

// ValidateGranularity checks that a granularity is a whole, positive number of
// milliseconds no longer than MaxDeferralMs (a longer one would refuse every
// delay). name is the attribute reported in the error.
func ValidateGranularity(name string, g time.Duration) error {
	if g <= 0 {
		return settingError(name, "%s must be a positive whole number of milliseconds, from 1ms to %dms; got %s", name, MaxDeferralMs, g)
	}
	if g%time.Millisecond != 0 {
		return settingError(name, "%s must be a whole number of milliseconds, from 1ms to %dms; got %s", name, MaxDeferralMs, g)
	}
	if g.Milliseconds() > MaxDeferralMs {
		return settingError(name, "%s must be at most %dms (%s), the longest hold; got %s", name, MaxDeferralMs, time.Duration(MaxDeferralMs)*time.Millisecond, g)
	}
	return nil
}

// LongestDelay returns the longest delay a hold queue accepts at granularity
// g: the largest whole multiple of g not past MaxDeferralMs.
func LongestDelay(g time.Duration) time.Duration {
	gms := g.Milliseconds()
	if gms <= 0 {
		return 0
	}
	return time.Duration(MaxDeferralMs/gms*gms) * time.Millisecond
}

// DeferredTTLMs returns the TTL, in milliseconds, of the hold queue that
// keeps a wait of delay: delay rounded up to a whole multiple of granularity,
// and at least one step (a zero delay waits one step). A negative delay, a
// granularity that is not a whole positive number of milliseconds, and a
// result past MaxDeferralMs are errors, naming attribute (the delay's
// attribute or argument): the TTL is never clamped.
func DeferredTTLMs(attribute string, delay, granularity time.Duration) (int64, error) {
	if err := ValidateGranularity("granularity", granularity); err != nil {
		return 0, err
	}
	if delay < 0 {
		return 0, settingError(attribute, "%s must not be negative: it may be from 0s to %s (the longest hold at granularity %s); got %s",
			attribute, FormatWhole(LongestDelay(granularity)), FormatWhole(granularity), delay)
	}
	steps := int64(delay / granularity)
	if delay%granularity != 0 || steps == 0 {
		steps++
	}
	gms := granularity.Milliseconds()
	if steps > MaxDeferralMs/gms {
		longest := LongestDelay(granularity)
		return 0, settingError(attribute, "%s %s is past the longest hold: at granularity %s the longest delay accepted is %s (%s), because a hold queue's TTL may be at most %dms, half of RabbitMQ's largest TTL",
			attribute, delay, granularity, FormatWhole(longest), longest, MaxDeferralMs)
	}
	return steps * gms, nil
}

// MessageTTLMs converts a main queue's message TTL to milliseconds. It must
// be a whole number of milliseconds (a sub-millisecond part is refused, not
// rounded) from 0 to MaxTTLMs.
func MessageTTLMs(ttl time.Duration) (int64, error) {
	if ttl < 0 || ttl%time.Millisecond != 0 || ttl.Milliseconds() > MaxTTLMs {
		return 0, settingError("message_ttl", "message TTL must be a whole number of milliseconds from 0 to %dms (%s); got %s",
			MaxTTLMs, time.Duration(MaxTTLMs)*time.Millisecond, ttl)
	}
	return ttl.Milliseconds(), nil
}

// ValidateMaxPriority checks a main queue's x-max-priority: 1 to 255.
func ValidateMaxPriority(p int64) error {
	if p < MinPriority || p > MaxPriority {
		return settingError("max_priority", "max priority must be from %d to %d; got %d", MinPriority, MaxPriority, p)
	}
	return nil
}

// QueueArgs returns the main queue's arguments: x-message-ttl when a message
// TTL is given, x-max-priority when a max priority is given, nothing else.
func QueueArgs(messageTTLMs, maxPriority *int64) (Arguments, error) {
	args := Arguments{}
	if messageTTLMs != nil {
		if *messageTTLMs < 0 || *messageTTLMs > MaxTTLMs {
			return nil, settingError("message_ttl", "message TTL must be from 0 to %dms; got %dms", MaxTTLMs, *messageTTLMs)
		}
		args[ArgMessageTTL] = Int(*messageTTLMs)
	}
	if maxPriority != nil {
		if err := ValidateMaxPriority(*maxPriority); err != nil {
			return nil, err
		}
		args[ArgMaxPriority] = Int(*maxPriority)
	}
	return args, nil
}

// FormatWhole writes a duration as a whole number of its largest exact unit
// among seconds and milliseconds: 2147483s, 2147483647ms.
func FormatWhole(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	if d%time.Millisecond == 0 {
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return d.String()
}
