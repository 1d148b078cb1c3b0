package provider

import (
	"strings"
	"testing"
	"time"
)

func TestQueueID(t *testing.T) {
	t.Parallel()
	tests := []struct{ vhost, name, id string }{
		{"/", "orders", "%2F/orders"},
		{"team/a b", "odd name@x", "team%2Fa%20b/odd%20name@x"},
		{"v", "a%b?c#d", "v/a%25b%3Fc%23d"},
		{"ünï", "ç", "%C3%BCn%C3%AF/%C3%A7"},
	}
	for _, tt := range tests {
		if got := queueID(tt.vhost, tt.name); got != tt.id {
			t.Errorf("queueID(%q, %q) = %q, want %q", tt.vhost, tt.name, got, tt.id)
		}
		v, n, err := parseQueueID(tt.id)
		if err != nil || v != tt.vhost || n != tt.name {
			t.Errorf("parseQueueID(%q) = %q, %q, %v", tt.id, v, n, err)
		}
	}
	for _, bad := range []string{"orders", "/orders", "%2F/", "a/b/c", "%zz/orders", "v/%zz", ""} {
		if _, _, err := parseQueueID(bad); err == nil || !strings.Contains(err.Error(), "import ID") {
			t.Errorf("parseQueueID(%q) error = %v", bad, err)
		}
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
