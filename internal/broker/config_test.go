package broker

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Zero (or negative) fields of timing mean the defaults, field by field.
func TestTimingDefaults(t *testing.T) {
	t.Parallel()
	want := timing{backoffFirst: 250 * time.Millisecond, backoffMax: 5 * time.Second, confirmPause: 250 * time.Millisecond,
		recoveryWindow: 10 * time.Second, restartMemory: 2 * time.Minute, firstContact: 10 * time.Second,
		contactMemory: 15 * time.Minute, checkAge: 10 * time.Second}
	if got := (timing{}).withDefaults(); got != want {
		t.Errorf("zero timing: %+v, want %+v", got, want)
	}
	if got := (timing{backoffFirst: -1, recoveryWindow: -time.Second}).withDefaults(); got != want {
		t.Errorf("negative timing: %+v, want %+v", got, want)
	}
	set := timing{backoffFirst: 1, backoffMax: 2, confirmPause: 3, recoveryWindow: 4, restartMemory: 5, firstContact: 6, contactMemory: 7, checkAge: 8}
	if got := set.withDefaults(); got != set {
		t.Errorf("timing set: %+v, want it kept", got)
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

// The retry transport's defaults have their rows in the Operating guide's
// table (the rest of the table: internal/provider's TestDocsLimitsTable).
func TestDocsRetryLimits(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/guides/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	for row, want := range map[string]time.Duration{
		"Trying a request again":                defaultRetryBudget,
		"Nothing answering at first contact":    defaultFirstContact,
		"Remembering that an endpoint answered": defaultContactMemory,
		"Remembering a restart":                 defaultRestartMemory,
		"Recovery window after a restart":       defaultRecoveryWindow,
		"Confirming a `404`":                    defaultConfirmPause,
	} {
		prefix := "| " + row + " |"
		found := false
		for line := range strings.Lines(string(b)) {
			if !strings.HasPrefix(line, prefix) {
				continue
			}
			found = true
			cell := strings.Trim(strings.TrimSpace(strings.Split(line[len(prefix):], "|")[0]), "`")
			if d, err := time.ParseDuration(cell); err != nil || d != want {
				t.Errorf("%s: the table says %q, the code waits %s", row, cell, want)
			}
		}
		if !found {
			t.Errorf("the Operating guide's table lacks %q", prefix)
		}
	}
}
