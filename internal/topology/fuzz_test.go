package topology

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
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
		ttl, err := DeferredTTLMs("delay", delay, gran)
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

// FuzzDestroyOrder: whatever names exist, the order holds only the queue's
// own queues, each once, hold queues by ascending TTL, then the holding
// queue, before q, and q.dead last.
func FuzzDestroyOrder(f *testing.F) {
	f.Add("orders", "orders.deferred.30000,orders,orders.dead,orders.deferred.5,x,orders.redeclaring")
	f.Add("q", "q.deferred.01,q.deferred.,q.dead.deferred.1")
	f.Fuzz(func(t *testing.T, queue, list string) {
		s := DefaultSuffixes()
		order := DestroyOrder(queue, s, strings.Split(list, ","))
		seen := map[string]bool{}
		var lastTTL int64
		for i, name := range order {
			if seen[name] {
				t.Fatalf("%q listed twice in %q", name, order)
			}
			seen[name] = true
			if ttl, ok := ParseHoldQueueName(queue, name, s); ok && name != queue && name != DeadQueueName(queue, s) {
				if ttl <= lastTTL || seen[RedeclaringQueueName(queue)] {
					t.Fatalf("hold queues out of order: %q", order)
				}
				lastTTL = ttl
				continue
			}
			switch name {
			case RedeclaringQueueName(queue):
				if slices.Contains(order[:i], queue) || slices.Contains(order[:i], DeadQueueName(queue, s)) {
					t.Fatalf("the holding queue after q or q.dead: %q", order)
				}
			case queue:
				if i != len(order)-1 && (i != len(order)-2 || order[i+1] != DeadQueueName(queue, s)) {
					t.Fatalf("q not after the hold queues: %q", order)
				}
			case DeadQueueName(queue, s):
				if i != len(order)-1 {
					t.Fatalf("q.dead not last: %q", order)
				}
			default:
				t.Fatalf("%q does not belong to %q: %q", name, queue, order)
			}
		}
	})
}

// FuzzObservedJSON: the broker's table always renders as a JSON object that
// gives back every argument and every flag that differs from the backend's
// declaration, each with its value.
func FuzzObservedJSON(f *testing.F) {
	f.Add("x-message-ttl", "5000", int64(7), true, false)
	f.Add("x-queue-type", "quorum", int64(-1), false, true)
	f.Fuzz(func(t *testing.T, k1, v1 string, n int64, durable, autoDelete bool) {
		switch k1 {
		case "n", "durable", "auto_delete", "exclusive", "type":
			t.Skip("an argument named as a flag is shadowed by it")
		}
		got := ObservedJSON(Existing{Durable: durable, AutoDelete: autoDelete, Arguments: map[string]any{k1: v1, "n": n}})
		dec := json.NewDecoder(strings.NewReader(got))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("ObservedJSON gave %s: %v", got, err)
		}
		want := map[string]any{"n": json.Number(strconv.FormatInt(n, 10))}
		if k1 != ArgQueueType || v1 != ClassicType {
			// As JSON gives them back: each byte of invalid UTF-8 U+FFFD, as []rune makes it.
			want[string([]rune(k1))] = string([]rune(v1))
		}
		if durable != Declared.Durable {
			want["durable"] = durable
		}
		if autoDelete != Declared.AutoDelete {
			want["auto_delete"] = autoDelete
		}
		if !reflect.DeepEqual(m, want) {
			t.Fatalf("ObservedJSON gave %s, which reads back as %v; want %v", got, m, want)
		}
	})
}

// FuzzExcludeTopologies: for any pattern the engine evaluates and any name,
// the exclusion matches exactly when the pattern does and the name is not
// one of the queue's topology.
func FuzzExcludeTopologies(f *testing.F) {
	f.Add(`.*`, "orders", "orders.deferred.30000")
	f.Add(`^(o)\1?`, "o", "o.dead")
	f.Add(`a|(?i)B`, "q", "xb")
	f.Add(`(?=q)q\.`, "q", "q.redeclaring")
	f.Fuzz(func(t *testing.T, pattern, queue, name string) {
		s := DefaultSuffixes()
		got, err := ExcludeTopologies(pattern, []string{queue}, s)
		if err != nil {
			return
		}
		want, err := MatchPolicyPattern(pattern, name)
		if err != nil {
			return
		}
		_, isHold := ParseHoldQueueName(queue, name, s)
		digits, _ := strings.CutPrefix(name, HoldQueuePrefix(queue, s))
		isHold = isHold || (digits != "" && digits != name && strings.Trim(digits, "0123456789") == "")
		in := name == queue || name == DeadQueueName(queue, s) || name == RedeclaringQueueName(queue) || isHold
		ok, err := MatchPolicyPattern(got, name)
		if err != nil {
			t.Skipf("the exclusion of %q is not evaluable on %q: %v", pattern, name, err)
		}
		if ok != (want && !in) {
			t.Fatalf("%s on %q = %v; the pattern %q gives %v, in the topology: %v", got, name, ok, pattern, want, in)
		}
	})
}

// FuzzHoldEffects: a hold queue breaks exactly on a message-ttl below its
// TTL, an expires at or below it, and any length limit, whichever policy
// holds them.
func FuzzHoldEffects(f *testing.F) {
	f.Add(int64(30000), int64(29999), int64(30000), true, false)
	f.Add(int64(1), int64(1), int64(2), false, true)
	f.Fuzz(func(t *testing.T, ttl, msgTTL, expires int64, limit, operator bool) {
		if ttl < 1 || ttl > MaxDeferralMs || msgTTL < 0 || expires < 1 {
			return
		}
		def := map[string]any{"message-ttl": json.Number(strconv.FormatInt(msgTTL, 10)), "expires": expires}
		if limit {
			def["max-length"] = 1
		}
		p := &Policy{Name: "p", Definition: def}
		a := Applied{User: p}
		if operator {
			a = Applied{Operator: p}
		}
		var want []string
		if expires <= ttl {
			want = append(want, "expires")
		}
		if msgTTL < ttl {
			want = append(want, "message-ttl")
		}
		if limit {
			want = append(want, "max-length")
		}
		if got := keys(PolicyEffects(hold(ttl), a)); got != strings.Join(want, ",") {
			t.Fatalf("ttl %d, %v: %q, want %v", ttl, def, got, want)
		}
	})
}
