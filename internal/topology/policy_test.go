package topology

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestRoleString(t *testing.T) {
	t.Parallel()
	for r, want := range map[Role]string{RoleMain: "main", RoleDead: "dead", RoleHold: "hold", RoleHolding: "holding", Role(9): "Role(9)"} {
		if r.String() != want {
			t.Errorf("%d.String() = %s, want %s", int(r), r, want)
		}
	}
}

// The effective value of each key: the lowest of argument, user and
// operator policy for the min keys; the argument for overflow and the
// dead-letter keys; the operator's overflow over the user's; policy keys
// otherwise.
func TestEffectiveDefinition(t *testing.T) {
	t.Parallel()
	n := func(s string) json.Number { return json.Number(s) }
	for _, c := range []struct {
		name           string
		args, user, op map[string]any
		want           map[string]any
	}{
		{"nothing", nil, nil, nil, map[string]any{}},
		{"argument only", map[string]any{"x-message-ttl": int64(5000), "x-max-priority": int64(3)}, nil, nil, map[string]any{"message-ttl": int64(5000)}},
		{"policy lower", map[string]any{"x-message-ttl": int64(5000)}, map[string]any{"message-ttl": n("4999")}, nil, map[string]any{"message-ttl": n("4999")}},
		{"argument lower", map[string]any{"x-expires": int64(5000)}, map[string]any{"expires": n("5001")}, nil, map[string]any{"expires": int64(5000)}},
		{"operator lower", nil, map[string]any{"max-length": n("10")}, map[string]any{"max-length": n("9")}, map[string]any{"max-length": n("9")}},
		{"user lower", nil, map[string]any{"max-length-bytes": n("9")}, map[string]any{"max-length-bytes": n("10")}, map[string]any{"max-length-bytes": n("9")}},
		{"exact above 2^32", nil, map[string]any{"expires": n("4294967297")}, map[string]any{"expires": float64(4294967296)}, map[string]any{"expires": float64(4294967296)}},
		{"argument wins dlx", map[string]any{"x-dead-letter-exchange": ""}, map[string]any{"dead-letter-exchange": "dlx", "dead-letter-routing-key": "k"}, nil, map[string]any{"dead-letter-exchange": "", "dead-letter-routing-key": "k"}},
		{"argument wins overflow", map[string]any{"x-overflow": "reject-publish"}, map[string]any{"overflow": "drop-head"}, map[string]any{"overflow": "reject-publish-dlx"}, map[string]any{"overflow": "reject-publish"}},
		{"operator overflow", nil, map[string]any{"overflow": "drop-head"}, map[string]any{"overflow": "reject-publish"}, map[string]any{"overflow": "reject-publish"}},
		{"operator queue-version", nil, map[string]any{"queue-version": n("1")}, map[string]any{"queue-version": n("2")}, map[string]any{"queue-version": n("2")}},
		{"operator boolean", nil, map[string]any{"flag": true}, map[string]any{"flag": false}, map[string]any{"flag": false}},
		{"user other", nil, map[string]any{"ha-mode": "all"}, map[string]any{"ha-mode": "exactly"}, map[string]any{"ha-mode": "all"}},
		{"user boolean over string", nil, map[string]any{"flag": true}, map[string]any{"flag": "x"}, map[string]any{"flag": true}},
		{"policy keys", nil, map[string]any{"queue-mode": "lazy"}, map[string]any{"delivery-limit": n("3")}, map[string]any{"queue-mode": "lazy", "delivery-limit": n("3")}},
		{"equal keeps the policy's", map[string]any{"x-message-ttl": int64(5000)}, map[string]any{"message-ttl": n("5000")}, nil, map[string]any{"message-ttl": n("5000")}},
		{"equal keeps the user's", nil, map[string]any{"expires": n("9")}, map[string]any{"expires": 9}, map[string]any{"expires": n("9")}},
		{"number beats string", map[string]any{"x-message-ttl": "x"}, map[string]any{"message-ttl": n("7")}, nil, map[string]any{"message-ttl": n("7")}},
		{"string loses to number", map[string]any{"x-message-ttl": int64(7)}, map[string]any{"message-ttl": "x"}, nil, map[string]any{"message-ttl": int64(7)}},
	} {
		got := EffectiveDefinition(c.args, c.user, c.op)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func hold(ttl int64) CheckedQueue {
	args, _ := HoldQueueArgs("q", ttl)
	return CheckedQueue{Name: HoldQueueName("q", ttl, DefaultSuffixes()), Role: RoleHold, TTLMs: ttl, Args: args.Map()}
}

// joined lists name(x) for each x of xs, comma-separated.
func joined[T any](xs []T, name func(T) string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = name(x)
	}
	return strings.Join(s, ",")
}

func keys(effects []Effect) string { return joined(effects, func(e Effect) string { return e.Key }) }

// The contract, at both edges of every comparison.
func TestPolicyEffects_contract(t *testing.T) {
	t.Parallel()
	main := CheckedQueue{Name: "q", Role: RoleMain, Args: map[string]any{}}
	mainTTL := CheckedQueue{Name: "q", Role: RoleMain, Args: map[string]any{"x-message-ttl": int64(5000)}}
	dead := CheckedQueue{Name: "q.dead", Role: RoleDead}
	holding := CheckedQueue{Name: "q.redeclaring", Role: RoleHolding, Args: map[string]any{}}
	bare := CheckedQueue{Name: "q.deferred.30000", Role: RoleHold, TTLMs: 30000}
	for _, c := range []struct {
		name string
		q    CheckedQueue
		def  map[string]any
		want string
	}{
		{"dead: each key", dead, map[string]any{"message-ttl": 1 << 31, "max-length": 1000000, "max-length-bytes": 1, "expires": 1 << 31}, "expires,message-ttl,max-length,max-length-bytes"},
		{"dead: harmless", dead, map[string]any{"queue-version": 2, "dead-letter-exchange": "x", "overflow": "reject-publish"}, ""},
		{"holding: each key", holding, map[string]any{"message-ttl": 0, "max-length": 0, "max-length-bytes": 0, "expires": 1}, "expires,message-ttl,max-length,max-length-bytes"},
		{"holding: dlx harmless", holding, map[string]any{"dead-letter-exchange": "x"}, ""},
		{"main: expires", main, map[string]any{"expires": 1 << 31}, "expires"},
		{"main: lengths", main, map[string]any{"max-length": 1 << 20, "max-length-bytes": 1 << 30}, "max-length,max-length-bytes"},
		{"main: any ttl without own", main, map[string]any{"message-ttl": 1 << 31}, "message-ttl"},
		{"main: ttl below own", mainTTL, map[string]any{"message-ttl": 4999}, "message-ttl"},
		{"main: ttl equal own", mainTTL, map[string]any{"message-ttl": 5000}, ""},
		{"main: ttl above own", mainTTL, map[string]any{"message-ttl": 5001}, ""},
		{"main: dlx without own", main, map[string]any{"dead-letter-exchange": ""}, "dead-letter-exchange"},
		{"main: dlx with own", CheckedQueue{Name: "q", Args: map[string]any{"x-dead-letter-exchange": "mine"}}, map[string]any{"dead-letter-exchange": "theirs"}, ""},
		{"main: harmless", main, map[string]any{"queue-mode": "lazy", "dead-letter-routing-key": "k", "overflow": "drop-head", "ha-mode": "all"}, ""},
		{"hold: ttl below", hold(30000), map[string]any{"message-ttl": 29999}, "message-ttl"},
		{"hold: ttl equal", hold(30000), map[string]any{"message-ttl": 30000}, ""},
		{"hold: ttl above", hold(30000), map[string]any{"message-ttl": 30001}, ""},
		{"hold: expires equal", hold(30000), map[string]any{"expires": 30000}, "expires"},
		{"hold: expires one above", hold(30000), map[string]any{"expires": 30001}, ""},
		{"hold: expires one below", hold(30000), map[string]any{"expires": 29999}, "expires"},
		{"hold: not declared, expires equal", bare, map[string]any{"expires": 30000}, "expires"},
		{"hold: not declared, expires above", bare, map[string]any{"expires": 30001}, ""},
		{"hold: not declared, ttl below", bare, map[string]any{"message-ttl": 29999}, "message-ttl"},
		{"hold: not declared, ttl equal", bare, map[string]any{"message-ttl": 30000}, ""},
		{"hold: lengths", hold(30000), map[string]any{"max-length": 1 << 20, "max-length-bytes": 1}, "max-length,max-length-bytes"},
		{"hold: dlx harmless", hold(30000), map[string]any{"dead-letter-exchange": "x"}, ""},
		{"hold: non-number ttl", bare, map[string]any{"message-ttl": "soon"}, "message-ttl"},
		{"hold: non-number expires", bare, map[string]any{"expires": "soon"}, "expires"},
	} {
		for _, operator := range []bool{false, true} {
			p := &Policy{Name: "limits", Definition: c.def}
			a := Applied{User: p}
			if operator {
				a = Applied{Operator: p}
			}
			got := PolicyEffects(c.q, a)
			if keys(got) != c.want {
				t.Errorf("%s (operator %v): %q, want %q", c.name, operator, keys(got), c.want)
			}
			for _, e := range got {
				if e.Policy != "limits" || e.Operator != operator || e.Queue != c.q.Name || e.Role != c.q.Role || e.Tied || e.Text == "" || !reflect.DeepEqual(e.Value, c.def[e.Key]) {
					t.Errorf("%s: %+v", c.name, e)
				}
			}
		}
	}
}

// With both a user and an operator policy, each is named for its own value
// when that value alone breaks the contract; Effective is what the queue runs
// with. An operator dead-letter exchange yields to the user's.
func TestPolicyEffects_attribution(t *testing.T) {
	t.Parallel()
	q := hold(2000)
	for _, c := range []struct {
		name     string
		user, op map[string]any
		want     string
		eff      any
	}{
		{"both break", map[string]any{"message-ttl": 1000}, map[string]any{"message-ttl": 500}, "limits/message-ttl,ops/message-ttl", 500},
		{"only the operator's", map[string]any{"message-ttl": 5000}, map[string]any{"message-ttl": 1000}, "ops/message-ttl", 1000},
		{"only the user's", map[string]any{"message-ttl": 1000}, map[string]any{"message-ttl": 5000}, "limits/message-ttl", 1000},
		{"neither", map[string]any{"message-ttl": 2000}, map[string]any{"message-ttl": 3000}, "", nil},
	} {
		a := Applied{User: &Policy{Name: "limits", Definition: c.user}, Operator: &Policy{Name: "ops", Definition: c.op}}
		var got []string
		for _, e := range PolicyEffects(q, a) {
			got = append(got, e.Policy+"/"+e.Key)
			if e.Operator != (e.Policy == "ops") || !reflect.DeepEqual(e.Effective, c.eff) {
				t.Errorf("%s: %+v", c.name, e)
			}
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("%s: %v, want %s", c.name, got, c.want)
		}
	}
	main := CheckedQueue{Name: "q", Role: RoleMain}
	dlx := map[string]any{"dead-letter-exchange": "x"}
	if got := PolicyEffects(main, Applied{User: &Policy{Name: "u", Definition: dlx}, Operator: &Policy{Name: "o", Definition: dlx}}); len(got) != 1 || got[0].Policy != "u" {
		t.Errorf("dead-letter exchange in both: %+v", got)
	}
	if got := PolicyEffects(main, Applied{User: &Policy{Name: "u"}, Operator: &Policy{Name: "o", Definition: dlx}}); len(got) != 1 || got[0].Policy != "o" || !got[0].Operator {
		t.Errorf("dead-letter exchange in the operator policy alone: %+v", got)
	}
}

// Each tied policy that would break is listed, marked Tied, beside the
// applying one; a harmless tie adds nothing.
func TestPolicyEffects_ties(t *testing.T) {
	t.Parallel()
	q := CheckedQueue{Name: "q.dead", Role: RoleDead}
	a := Applied{
		User:         &Policy{Name: "a", Definition: map[string]any{"queue-version": 2}},
		TiedUser:     []Policy{{Name: "b", Definition: map[string]any{"max-length": 3}}, {Name: "c"}},
		Operator:     &Policy{Name: "o", Definition: map[string]any{"expires": 1}},
		TiedOperator: []Policy{{Name: "p", Definition: map[string]any{"message-ttl": 1}}},
	}
	var got []string
	for _, e := range PolicyEffects(q, a) {
		got = append(got, e.Policy+"/"+e.Key+"/"+map[bool]string{true: "tied", false: "applies"}[e.Tied])
	}
	if want := "o/expires/applies,b/max-length/tied,p/message-ttl/tied"; strings.Join(got, ",") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

// The words say what happens to the backend's messages, by role, key and
// overflow.
func TestPolicyEffects_text(t *testing.T) {
	t.Parallel()
	main := CheckedQueue{Name: "q", Role: RoleMain}
	dead := CheckedQueue{Name: "q.dead", Role: RoleDead}
	holding := CheckedQueue{Name: "q.redeclaring", Role: RoleHolding}
	for _, c := range []struct {
		q    CheckedQueue
		def  map[string]any
		want string
	}{
		{main, map[string]any{"expires": 8000}, "deletes q, whatever it holds, after 8000 ms without a consumer: its messages are lost"},
		{hold(30000), map[string]any{"expires": 30000}, "deletes q.deferred.30000 30000 ms after its last use, no later than the 30000 ms wait it owes: a waiting message is lost with it"},
		{hold(30000), map[string]any{"message-ttl": 2000}, "ends waits in q.deferred.30000 after 2000 ms instead of 30000 ms: retries and deferrals fire early"},
		{main, map[string]any{"message-ttl": 2000}, "expires messages on q after 2000 ms, before a worker takes them: they are lost"},
		{dead, map[string]any{"message-ttl": 2000}, "expires messages on q.dead after 2000 ms: they are lost before anyone consumes or moves them"},
		{dead, map[string]any{"max-length": 3}, "limits q.dead to 3 messages and then drops the oldest messages: they are lost (drop-head)"},
		{dead, map[string]any{"max-length": 1}, "limits q.dead to 1 message and then drops the oldest messages: they are lost (drop-head)"},
		{hold(30000), map[string]any{"max-length-bytes": 3}, "limits q.deferred.30000 to 3 bytes of message bodies and then sends the oldest waits back to their queue early (drop-head)"},
		{main, map[string]any{"max-length": 3, "overflow": "reject-publish"}, "limits q to 3 messages and then refuses the application's publishes (reject-publish)"},
		{dead, map[string]any{"max-length": 3, "overflow": "reject-publish-dlx"}, "limits q.dead to 3 messages and then refuses dead letters (reject-publish-dlx)"},
		{hold(5), map[string]any{"max-length": 3, "overflow": "reject-publish"}, "limits q.deferred.5 to 3 messages and then refuses deferrals (reject-publish)"},
		{holding, map[string]any{"max-length": 3, "overflow": "reject-publish"}, "limits q.redeclaring to 3 messages and then refuses the messages moved aside (reject-publish)"},
		{CheckedQueue{Name: "q", Args: map[string]any{"x-overflow": "reject-publish"}}, map[string]any{"max-length": 3, "overflow": "drop-head"}, "limits q to 3 messages and then refuses the application's publishes (reject-publish)"},
		{main, map[string]any{"dead-letter-exchange": "dlx"}, `sends messages that q rejects or expires to the exchange "dlx", out of the backend's topology`},
	} {
		got := PolicyEffects(c.q, Applied{User: &Policy{Name: "p", Definition: c.def}})
		if len(got) != 1 || got[0].Text != c.want {
			t.Errorf("%s %v: %+v\nwant %s", c.q.Name, c.def, got, c.want)
		}
	}
}

// A move refuses on what would expire, drop or delete the moved messages,
// ties included, and on a pattern that cannot be evaluated.
func TestMoveLosses(t *testing.T) {
	t.Parallel()
	main := CheckedQueue{Name: "q", Role: RoleMain, Args: map[string]any{"x-message-ttl": int64(5000)}}
	holding := CheckedQueue{Name: "q.redeclaring", Role: RoleHolding}
	for _, c := range []struct {
		name string
		q    CheckedQueue
		a    Applied
		want string
	}{
		{"redrive: lengths, expires, lower ttl", main, Applied{User: &Policy{Name: "p", Definition: map[string]any{"max-length": 1, "max-length-bytes": 1, "expires": 1, "message-ttl": 4999, "dead-letter-exchange": "x"}}}, "expires,message-ttl,max-length,max-length-bytes"},
		{"redrive: ttl at q's own", main, Applied{User: &Policy{Name: "p", Definition: map[string]any{"message-ttl": 5000}}}, ""},
		{"redrive: tied", main, Applied{User: &Policy{Name: "p"}, TiedUser: []Policy{{Name: "t", Definition: map[string]any{"max-length": 1}}}}, "max-length"},
		{"move aside: any ttl", holding, Applied{Operator: &Policy{Name: "o", Definition: map[string]any{"message-ttl": 1 << 31}}}, "message-ttl"},
		{"move aside: harmless", holding, Applied{User: &Policy{Name: "p", Definition: map[string]any{"queue-version": 2}}}, ""},
	} {
		got, err := MoveLosses(c.q, c.a)
		if err != nil || keys(got) != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, keys(got), err, c.want)
		}
	}
	a := Applied{Unevaluable: []PatternError{{Policy: "a", Pattern: "("}, {Policy: "b", Pattern: `\h`, Operator: true}}}
	got, err := MoveLosses(holding, a)
	var pe *PatternError
	if got != nil || !errors.As(err, &pe) || pe.Policy != "a" || !strings.Contains(err.Error(), `operator policy "b"`) {
		t.Errorf("unevaluable: %v, %v", got, err)
	}
}
