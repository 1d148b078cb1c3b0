package topology

import (
	"cmp"
	"errors"
	"strings"
	"testing"
)

// The engine agrees with PCRE (Erlang re, no UTF mode) on what policy
// patterns use: an unanchored search, anchors, classes, alternation,
// lookahead, escapes, bytes rather than characters.
func TestMatchPolicyPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{`.*`, "orders", true},
		{``, "orders", true},
		{`der`, "orders", true},
		{`^der`, "orders", false},
		{`^orders$`, "orders", true},
		{`^orders$`, "orders.dead", false},
		{`\.dead$`, "orders.dead", true},
		{`\.dead$`, "orders-dead", false},
		{`.dead$`, "orders-dead", true},
		{`^(orders|jobs)\.`, "jobs.dead", true},
		{`^(?!orders).*`, "orders.dead", false},
		{`^(?!orders).*`, "jobs", true},
		{`^orders(?=\.)`, "orders.dead", true},
		{`^orders(?=\.)`, "orders", false},
		{`[0-9]+$`, "q.deferred.30000", true},
		{`^\d+$`, "123", true},
		{`^\w+$`, "caf\u00e9", false},
		{`^[[:alpha:]]+$`, "abc", true},
		{`^.{5}$`, "caf\u00e9", true},
		{`^.{4}$`, "caf\u00e9", false},
		{"^caf\u00e9$", "caf\u00e9", true},
		{`^(?i)ORDERS$`, "orders", true},
		{`^(?P<n>a)(?P=n)?$`, "a", false},
		{`^(a)\1$`, "aa", true},
		{`orders$`, "orders\n", false},
		{`orders\z`, "orders\n", false},
		{`\q`, "q", true},
	} {
		got, err := MatchPolicyPattern(c.pattern, c.name)
		if c.pattern == `^(?P<n>a)(?P=n)?$` {
			if err == nil {
				t.Errorf("%q: want a PatternError, got %v", c.pattern, got)
			}
			continue
		}
		if c.pattern == `orders$` && c.name == "orders\n" {
			var pe *PatternError
			if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "newline") {
				t.Errorf("%q on %q: %v, %v; want a PatternError about the newline", c.pattern, c.name, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("MatchPolicyPattern(%q, %q) = %v, %v; want %v", c.pattern, c.name, got, err, c.want)
		}
	}
}

// A pattern the engine cannot evaluate as PCRE would is an error, never "no
// match": compile failures, PCRE-only escapes, {,n}, and a match that runs
// past its time bound.
func TestMatchPolicyPattern_unevaluable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ pattern, name, reason string }{
		{`(`, "q", "("},
		{`a\`, "q", "illegal"},
		{`(*UTF8)q`, "q", "repetition"},
		{`\h`, "q", `\h`},
		{`[\v]`, "q", `\v`},
		{`\Qa.b\E`, "a.b", `\Q`},
		{`a{,2}`, "a", "{,n}"},
		{`orders\Z`, "orders\n", "newline"},
		{`^(a+)+$`, strings.Repeat("a", 40) + "!", "time bound"},
	} {
		got, err := MatchPolicyPattern(c.pattern, c.name)
		var pe *PatternError
		if !errors.As(err, &pe) || got || !strings.Contains(pe.Reason, c.reason) || pe.Pattern != c.pattern {
			t.Errorf("MatchPolicyPattern(%q) = %v, %v; want a PatternError naming %q", c.pattern, got, err, c.reason)
		}
	}
	for _, ok := range []string{`\\h`, `a{,}`, `a{,x}`, `a{2,}`, `a{,2`, `\x41`} {
		if _, err := MatchPolicyPattern(ok, "q"); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if ok, err := MatchPolicyPattern(`orders`, "orders\n"); !ok || err != nil {
		t.Errorf("no $ against a newline-ended name: %v, %v", ok, err)
	}
}

// PatternError says which policy, of which kind, and why.
func TestPatternError(t *testing.T) {
	t.Parallel()
	e := &PatternError{Policy: "p", Pattern: "(", Reason: "bad"}
	if got := e.Error(); got != `the pattern "(" of policy "p" cannot be evaluated: bad` {
		t.Errorf("Error() = %s", got)
	}
	e.Operator = true
	if got := e.Error(); !strings.Contains(got, `of operator policy "p"`) {
		t.Errorf("Error() = %s", got)
	}
}

func pol(name, pattern string, prio int, def map[string]any) Policy {
	return Policy{Name: name, Pattern: pattern, ApplyTo: "all", Priority: prio, Definition: def}
}

func names(ps []Policy) string { return joined(ps, func(p Policy) string { return p.Name }) }

// nameOf is the name of the chosen policy p, "-" for none.
func nameOf(p *Policy) string { return cmp.Or(p, &Policy{Name: "-"}).Name }

// Selection: the highest priority among matching, applicable policies
// covering classic queues; ties kept; unsupported keys skip to the next.
func TestApplyingPolicies(t *testing.T) {
	t.Parallel()
	ttl := map[string]any{"message-ttl": 1}
	for _, c := range []struct {
		name     string
		policies []Policy
		want     string
		tied     string
	}{
		{"none", nil, "-", ""},
		{"no match", []Policy{pol("a", "^x", 0, ttl)}, "-", ""},
		{"one", []Policy{pol("a", "q", 0, ttl)}, "a", ""},
		{"higher wins", []Policy{pol("a", "q", 1, ttl), pol("b", "q", 2, ttl), pol("c", "q", 0, ttl)}, "b", ""},
		{"negative", []Policy{pol("a", "q", -2, ttl), pol("b", "q", -1, ttl)}, "b", ""},
		{"tie", []Policy{pol("a", "q", 1, ttl), pol("b", "q", 1, ttl), pol("c", "q", 0, ttl)}, "a", "b"},
		{"tie reset", []Policy{pol("a", "q", 1, ttl), pol("b", "q", 1, ttl), pol("c", "q", 2, ttl)}, "c", ""},
		{"unsupported key", []Policy{pol("a", "q", 0, ttl), pol("b", "q", 5, map[string]any{"delivery-limit": 3})}, "a", ""},
		{"dead-letter-strategy", []Policy{pol("b", "q", 5, map[string]any{"dead-letter-strategy": "at-least-once"})}, "-", ""},
		{"stream key", []Policy{pol("b", "q", 5, map[string]any{"max-age": "1D"})}, "-", ""},
		{"queues", []Policy{{Name: "a", Pattern: "q", ApplyTo: "queues", Definition: ttl}}, "a", ""},
		{"classic_queues", []Policy{{Name: "a", Pattern: "q", ApplyTo: "classic_queues", Definition: ttl}}, "a", ""},
		{"absent apply-to", []Policy{{Name: "a", Pattern: "q", Definition: ttl}}, "a", ""},
		{"exchanges", []Policy{{Name: "a", Pattern: "q", ApplyTo: "exchanges", Definition: ttl}}, "-", ""},
		{"quorum_queues", []Policy{{Name: "a", Pattern: "q", ApplyTo: "quorum_queues", Definition: ttl}}, "-", ""},
		{"streams", []Policy{{Name: "a", Pattern: "q", ApplyTo: "streams", Definition: ttl}}, "-", ""},
	} {
		a := ApplyingPoliciesOn(BrokerVersion{}, "q", c.policies, nil)
		if nameOf(a.User) != c.want || names(a.TiedUser) != c.tied || a.Operator != nil {
			t.Errorf("%s: user %s tied %q; want %s tied %q", c.name, nameOf(a.User), names(a.TiedUser), c.want, c.tied)
		}
		o := ApplyingPoliciesOn(BrokerVersion{}, "q", nil, c.policies)
		if nameOf(o.Operator) != c.want || names(o.TiedOperator) != c.tied || o.User != nil {
			t.Errorf("%s as operator policies: %s tied %q", c.name, nameOf(o.Operator), names(o.TiedOperator))
		}
	}
}

// User and operator policies are picked each among their own.
func TestApplyingPolicies_both(t *testing.T) {
	t.Parallel()
	a := ApplyingPoliciesOn(BrokerVersion{}, "q.dead", []Policy{pol("u", `\.dead$`, 0, nil)}, []Policy{pol("o", `^q`, 0, nil), pol("o2", `^x`, 9, nil)})
	if nameOf(a.User) != "u" || nameOf(a.Operator) != "o" || len(a.Unevaluable) != 0 {
		t.Errorf("got %+v", a)
	}
}

// The keys and apply-to values per broker version, as each version's source has them.
func TestApplyingPoliciesOn_versions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    BrokerVersion
		def  map[string]any
		to   string
		want bool
	}{
		{BrokerVersion{3, 10}, map[string]any{"queue-leader-locator": "balanced"}, "all", false},
		{BrokerVersion{3, 13}, map[string]any{"queue-leader-locator": "balanced"}, "all", false},
		{BrokerVersion{4, 0}, map[string]any{"queue-leader-locator": "balanced"}, "all", true},
		{BrokerVersion{3, 10}, map[string]any{"max-in-memory-length": 1}, "all", true},
		{BrokerVersion{3, 12}, map[string]any{"max-in-memory-length": 1}, "all", true},
		{BrokerVersion{3, 13}, map[string]any{"max-in-memory-length": 1}, "all", false},
		{BrokerVersion{3, 13}, map[string]any{"target-group-size": 1}, "all", false},
		{BrokerVersion{4, 2}, map[string]any{"selector-fields": 1}, "all", true},
		{BrokerVersion{4, 3}, map[string]any{"selector-fields": 1}, "all", false},
		{BrokerVersion{4, 3}, map[string]any{"selector-field-max-bytes": 1}, "all", false},
		{BrokerVersion{}, map[string]any{"selector-field-max-bytes": 1}, "all", false},
		{BrokerVersion{3, 11}, nil, "classic_queues", false},
		{BrokerVersion{3, 12}, nil, "classic_queues", true},
		{BrokerVersion{5, 0}, nil, "classic_queues", true},
		{BrokerVersion{3, 10}, nil, "queues", true},
	} {
		p := Policy{Name: "p", Pattern: "q", ApplyTo: c.to, Definition: c.def}
		a := ApplyingPoliciesOn(c.v, "q", []Policy{p}, nil)
		if (a.User != nil) != c.want {
			t.Errorf("%+v %v apply-to %s: applies %v, want %v", c.v, c.def, c.to, a.User != nil, c.want)
		}
	}
}

// An unevaluable pattern is reported when it could have applied (priority
// at or above the chosen one, or nothing chosen), and never taken for a match.
func TestApplyingPolicies_unevaluable(t *testing.T) {
	t.Parallel()
	bad := func(name string, prio int) Policy { return pol(name, `(`, prio, nil) }
	for _, c := range []struct {
		name      string
		policies  []Policy
		want      string
		reported  string
		operators bool
	}{
		{"alone", []Policy{bad("b", 0)}, "-", "b", false},
		{"above", []Policy{pol("a", "q", 1, nil), bad("b", 2)}, "a", "b", false},
		{"equal", []Policy{pol("a", "q", 1, nil), bad("b", 1)}, "a", "b", true},
		{"below", []Policy{pol("a", "q", 1, nil), bad("b", 0)}, "a", "", false},
		{"not for classic queues", []Policy{{Name: "b", Pattern: "(", ApplyTo: "exchanges"}}, "-", "", false},
	} {
		var a Applied
		chosen := func() *Policy { return a.User }
		if c.operators {
			a = ApplyingPoliciesOn(BrokerVersion{}, "q", nil, c.policies)
			chosen = func() *Policy { return a.Operator }
		} else {
			a = ApplyingPoliciesOn(BrokerVersion{}, "q", c.policies, nil)
		}
		var got []string
		for _, u := range a.Unevaluable {
			got = append(got, u.Policy)
			if u.Operator != c.operators || u.Pattern != "(" || u.Reason == "" {
				t.Errorf("%s: %+v", c.name, u)
			}
		}
		if nameOf(chosen()) != c.want || strings.Join(got, ",") != c.reported {
			t.Errorf("%s: chose %s, reported %v; want %s, %q", c.name, nameOf(chosen()), got, c.want, c.reported)
		}
	}
}

// The cache gives the same answer on a second look, errors included.
func TestCompilePolicyPattern_cache(t *testing.T) {
	t.Parallel()
	for range 2 {
		if ok, err := MatchPolicyPattern(`^cache-probe$`, "cache-probe"); !ok || err != nil {
			t.Fatalf("%v %v", ok, err)
		}
		if _, err := MatchPolicyPattern(`cache-probe(`, "x"); err == nil {
			t.Fatal("a bad pattern matched from the cache")
		}
	}
}

// The cache keeps patterns up to its limit and compiles the others each time.
func TestPatternCache_limit(t *testing.T) {
	t.Parallel()
	c := &patternCache{limit: 2, m: map[string]compiled{}}
	for _, p := range []string{"a", "(", "b", "a"} {
		if _, err := c.compile(p); (err != nil) != (p == "(") {
			t.Errorf("%q: %v", p, err)
		}
	}
	if _, a := c.m["a"]; !a || len(c.m) != 2 || c.m["("].err == nil {
		t.Errorf("cache holds %v", c.m)
	}
}

func TestParseBrokerVersion(t *testing.T) {
	for in, want := range map[string]BrokerVersion{
		"3.10.8": {3, 10}, "4.3.6": {4, 3}, "4.0": {4, 0}, "4.3.0-rc.1": {4, 3}, "3.13.7+1.g123": {3, 13},
	} {
		if got, err := ParseBrokerVersion(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "4", "x.1", "4.x", "0.9.1", "-1.2", "4.-1"} {
		if got, err := ParseBrokerVersion(in); err == nil {
			t.Errorf("%q: %v, want an error", in, got)
		}
	}
}
