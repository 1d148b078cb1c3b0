package topology

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The edges of the TTL rules, each on both sides: the longest granularity,
// a granularity under a millisecond, a message TTL of exactly 0 and of
// exactly MaxTTLMs, and the limits the errors spell out.
func TestTTLEdges(t *testing.T) {
	t.Parallel()
	longestGranularity := time.Duration(MaxDeferralMs) * time.Millisecond
	for _, tt := range []struct {
		name    string
		g       time.Duration
		wantErr string
	}{
		{"the longest hold as granularity", longestGranularity, ""},
		{"one ms longer", longestGranularity + time.Millisecond, "must be at most 2147483647ms (596h31m23.647s), the longest hold"},
		{"1ms", time.Millisecond, ""},
	} {
		err := ValidateGranularity("retry_granularity", tt.g)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: ValidateGranularity(%s) = %v, want %q", tt.name, tt.g, err, tt.wantErr)
		}
	}

	for _, tt := range []struct {
		g    time.Duration
		want time.Duration
	}{
		{0, 0},                // no granularity: no delay fits
		{time.Microsecond, 0}, // under a millisecond: none either
		{-time.Second, 0},
		{time.Millisecond, 2147483647 * time.Millisecond},
		{time.Second, 2147483 * time.Second},
		{longestGranularity, longestGranularity},
	} {
		if got := LongestDelay(tt.g); got != tt.want {
			t.Errorf("LongestDelay(%s) = %s, want %s", tt.g, got, tt.want)
		}
	}

	maxTTL := time.Duration(MaxTTLMs) * time.Millisecond
	for _, tt := range []struct {
		ttl     time.Duration
		want    int64
		wantErr bool
	}{
		{0, 0, false}, // a TTL of exactly 0: messages expire unless delivered at once
		{time.Millisecond, 1, false},
		{maxTTL, MaxTTLMs, false},
		{-time.Millisecond, 0, true},
		{-time.Nanosecond, 0, true},
		{time.Nanosecond, 0, true},
		{maxTTL + time.Millisecond, 0, true},
	} {
		got, err := MessageTTLMs(tt.ttl)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("MessageTTLMs(%s) = %d, %v; want %d, error %v", tt.ttl, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "from 0 to 4294967295ms (1193h2m47.295s)") {
			t.Errorf("MessageTTLMs(%s) error does not state the range: %v", tt.ttl, err)
		}
	}

	for _, tt := range []struct {
		ms      int64
		wantErr bool
	}{
		{0, false},
		{MaxTTLMs, false},
		{-1, true},
		{MaxTTLMs + 1, true},
	} {
		args, err := QueueArgs(&tt.ms, nil)
		if (err != nil) != tt.wantErr {
			t.Errorf("QueueArgs(message TTL %d) = %v, %v; want error %v", tt.ms, args, err, tt.wantErr)
			continue
		}
		if err == nil && args.JSON() != `{"x-message-ttl":`+strconv.FormatInt(tt.ms, 10)+`}` {
			t.Errorf("QueueArgs(message TTL %d) = %s", tt.ms, args.JSON())
		}
	}
}

func TestFormatWhole(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0:                             "0s",
		2147483 * time.Second:         "2147483s",
		2147483647 * time.Millisecond: "2147483647ms",
		1500 * time.Microsecond:       "1.5ms",
	} {
		if got := FormatWhole(d); got != want {
			t.Errorf("FormatWhole(%s) = %q, want %q", d, got, want)
		}
	}
}
