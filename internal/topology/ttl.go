package topology

import (
	"fmt"
	"time"
)

// ValidateGranularity checks that g is whole positive ms, at most MaxDeferralMs.
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

// LongestDelay is the largest multiple of g within MaxDeferralMs.
func LongestDelay(g time.Duration) time.Duration {
	gms := g.Milliseconds()
	if gms <= 0 {
		return 0
	}
	return time.Duration(MaxDeferralMs/gms*gms) * time.Millisecond
}

// DeferredTTLMs returns the TTL of the hold queue for delay: rounded up to a multiple of
// granularity, at least one step. A negative delay, a bad granularity or a result past
// MaxDeferralMs is an error naming attribute: never clamped.
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

// MessageTTLMs converts a main queue's TTL to ms: whole ms (never rounded), 0 to MaxTTLMs.
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

// QueueArgs returns the main queue's arguments: x-message-ttl and x-max-priority when given.
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

// FormatWhole writes d in its largest exact unit of s and ms: 2147483s, 2147483647ms.
func FormatWhole(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	if d%time.Millisecond == 0 {
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return d.String()
}
