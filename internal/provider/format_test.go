package provider

import (
	"strings"
	"testing"
	"time"
)

// Errors that list names list them in a stable order.
func TestSorted(t *testing.T) {
	t.Parallel()
	in := []string{"retry_granularity", "dead_suffix", "deferred_suffix"}
	if got := strings.Join(sorted(in), ","); got != "dead_suffix,deferred_suffix,retry_granularity" {
		t.Errorf("sorted = %s", got)
	}
	if in[0] != "retry_granularity" {
		t.Error("sorted changed its argument")
	}
}

func TestShortDuration(t *testing.T) {
	t.Parallel()
	for ms, want := range map[int64]string{
		0: "0s", 1: "1ms", 1500: "1.5s", 5000: "5s", 60000: "1m", 90000: "1m30s",
		3600000: "1h", 3605000: "1h0m5s", 5400000: "1h30m", 86400000: "24h", 4294967295: "1193h2m47.295s",
	} {
		if got := shortDuration(time.Duration(ms) * time.Millisecond); got != want {
			t.Errorf("shortDuration(%dms) = %q, want %q", ms, got, want)
		}
	}
}
