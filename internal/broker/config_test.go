package broker

import (
	"testing"
	"time"
)

// Zero (or negative) fields of Timing mean the defaults, field by field.
func TestTimingDefaults(t *testing.T) {
	t.Parallel()
	want := Timing{BackoffFirst: 250 * time.Millisecond, BackoffMax: 5 * time.Second, ConfirmPause: 250 * time.Millisecond,
		RecoveryWindow: 10 * time.Second, RestartMemory: 2 * time.Minute, FirstContact: 10 * time.Second,
		ContactMemory: 15 * time.Minute, CheckAge: 10 * time.Second}
	if got := (Timing{}).withDefaults(); got != want {
		t.Errorf("zero Timing: %+v, want %+v", got, want)
	}
	if got := (Timing{BackoffFirst: -1, RecoveryWindow: -time.Second}).withDefaults(); got != want {
		t.Errorf("negative Timing: %+v, want %+v", got, want)
	}
	set := Timing{BackoffFirst: 1, BackoffMax: 2, ConfirmPause: 3, RecoveryWindow: 4, RestartMemory: 5, FirstContact: 6, ContactMemory: 7, CheckAge: 8}
	if got := set.withDefaults(); got != set {
		t.Errorf("Timing set: %+v, want it kept", got)
	}
}

func TestMaxRequestTime(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want time.Duration
	}{
		{Config{}, 90 * time.Second},
		{Config{RequestTimeout: time.Second, RetryBudget: 2 * time.Second}, 3 * time.Second},
		{Config{RequestTimeout: time.Second, RetryBudget: -1}, time.Second},
	} {
		if got := tc.cfg.maxRequestTime(); got != tc.want {
			t.Errorf("%+v: maxRequestTime %s, want %s", tc.cfg, got, tc.want)
		}
	}
}
