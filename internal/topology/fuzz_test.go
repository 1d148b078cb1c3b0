package topology

import (
	"testing"
	"time"
)

// FuzzDeferredTTLMs checks the rounding rule for any delay and granularity:
// the TTL is at least the delay, a whole multiple of the granularity, less
// than one step past the delay (exactly one step for a zero delay), never past
// MaxDeferralMs, and its hold queue's x-expires fits in MaxTTLMs. Refusals
// happen only for bad input or a result past the limit.
func FuzzDeferredTTLMs(f *testing.F) {
	for _, seed := range [][2]int64{
		{0, int64(time.Second)},
		{int64(29200 * time.Millisecond), int64(time.Second)},
		{int64(30 * time.Second), int64(time.Second)},
		{int64(30001 * time.Millisecond), int64(time.Second)},
		{int64(30500 * time.Millisecond), int64(5 * time.Second)},
		{int64(2147483 * time.Second), int64(time.Second)},
		{int64(2147484 * time.Second), int64(time.Second)},
		{int64(2147483647 * time.Millisecond), int64(time.Millisecond)},
		{int64(2147483648 * time.Millisecond), int64(time.Millisecond)},
		{-1, int64(time.Second)},
		{1, 0},
		{1, 1},
		{1 << 62, int64(time.Hour)},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, delayNs, granNs int64) {
		delay, gran := time.Duration(delayNs), time.Duration(granNs)
		ttl, err := DeferredTTLMs(delay, gran)
		validGran := gran > 0 && gran%time.Millisecond == 0 && gran.Milliseconds() <= MaxDeferralMs
		if !validGran || delay < 0 {
			if err == nil {
				t.Fatalf("DeferredTTLMs(%d, %d) = %d; want an error for bad input", delayNs, granNs, ttl)
			}
			return
		}
		gms := gran.Milliseconds()
		// The exact rounded-up step count, without overflow.
		steps := delayNs / granNs
		if delayNs%granNs != 0 || steps == 0 {
			steps++
		}
		if steps > MaxDeferralMs/gms {
			if err == nil {
				t.Fatalf("DeferredTTLMs(%s, %s) = %d; want an error past the longest hold", delay, gran, ttl)
			}
			return
		}
		if err != nil {
			t.Fatalf("DeferredTTLMs(%s, %s) refused a delay within the limit: %v", delay, gran, err)
		}
		ttlD := time.Duration(ttl) * time.Millisecond
		switch {
		case ttl > MaxDeferralMs:
			t.Fatalf("ttl %d past MaxDeferralMs", ttl)
		case ttl%gms != 0:
			t.Fatalf("ttl %d not a multiple of %dms", ttl, gms)
		case ttlD < delay:
			t.Fatalf("ttl %s shorter than delay %s", ttlD, delay)
		case delay == 0 && ttl != gms:
			t.Fatalf("zero delay gave %d, want one step %d", ttl, gms)
		case delay > 0 && ttlD >= delay+gran:
			t.Fatalf("ttl %s not less than delay %s + granularity %s", ttlD, delay, gran)
		}
		args, err := HoldQueueArgs("q", ttl)
		if err != nil {
			t.Fatal(err)
		}
		if exp := args[ArgExpires].Int64(); exp != 2*ttl || exp > MaxTTLMs {
			t.Fatalf("x-expires %d for ttl %d", exp, ttl)
		}
	})
}

// FuzzParseHoldQueueName checks that recognition and naming agree: whatever
// is recognised renders back to the same name, and every valid TTL's name is
// recognised.
func FuzzParseHoldQueueName(f *testing.F) {
	f.Add("orders", "orders.deferred.30000", int64(30000))
	f.Add("orders", "orders.deferred.05", int64(0))
	f.Add("a.deferred.", "a.deferred.deferred.1", int64(2147483647))
	f.Fuzz(func(t *testing.T, queue, name string, ttl int64) {
		s := DefaultSuffixes()
		if got, ok := ParseHoldQueueName(queue, name, s); ok && HoldQueueName(queue, got, s) != name {
			t.Fatalf("recognised %q as ttl %d of %q but that renders %q", name, got, queue, HoldQueueName(queue, got, s))
		}
		if ttl >= 1 && ttl <= MaxDeferralMs {
			if got, ok := ParseHoldQueueName(queue, HoldQueueName(queue, ttl, s), s); !ok || got != ttl {
				t.Fatalf("HoldQueueName(%q, %d) not recognised: %d, %v", queue, ttl, got, ok)
			}
		}
	})
}
