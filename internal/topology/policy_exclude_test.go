package topology

import (
	"errors"
	"strings"
	"testing"
)

func mustMatch(t *testing.T, pattern, name string) bool {
	t.Helper()
	ok, err := MatchPolicyPattern(pattern, name)
	if err != nil {
		t.Fatalf("%q on %q: %v", pattern, name, err)
	}
	return ok
}

// The exclusion leaves out each topology and keeps every other name the
// pattern matched, whatever the pattern starts with.
func TestExcludeTopologies(t *testing.T) {
	t.Parallel()
	s := DefaultSuffixes()
	others := []string{"other", "orders2", "orders.dead2", "orders.deferred.", "orders.deferred.1x", "xorders", "orders\n", "orders.dead\n", "jobs.redeclaring.x", "ORDERS", "a.b"}
	for _, pattern := range []string{`.*`, ``, `^orders`, `s$`, `(?i)ORDERS`, `^(o)(r)\2?ders`, `^(?!other)`, `a|d`, `^a\.b$|orders`, `\.dead$`, `(?=o)`} {
		got, err := ExcludeTopologies(pattern, []string{"orders", "jobs"}, s)
		if err != nil {
			t.Fatalf("%q: %v", pattern, err)
		}
		for _, q := range []string{"orders", "jobs"} {
			// What the exclusion must leave out for q, a few hold queue TTLs included.
			for _, name := range []string{q, DeadQueueName(q, s), HoldQueueName(q, 30000, s), HoldQueuePrefix(q, s) + "0", RedeclaringQueueName(q)} {
				if mustMatch(t, got, name) {
					t.Errorf("%s still matches %q", got, name)
				}
			}
		}
		for _, name := range others {
			if strings.HasSuffix(name, "\n") && strings.Contains(pattern, "$") {
				continue
			}
			if want := mustMatch(t, pattern, name); mustMatch(t, got, name) != want {
				t.Errorf("%s on %q: %v, the original %q says %v", got, name, !want, pattern, want)
			}
		}
	}
}

// The form, spelled out once: only non-capturing groups added, \z ends
// the names, the suffixes quoted.
func TestExcludeTopologies_form(t *testing.T) {
	t.Parallel()
	got, err := ExcludeTopologies(`^(a)\1`, []string{"or.ders"}, Suffixes{Dead: "-dlq", Deferred: "+wait+"})
	want := `^(?!(?:or\.ders(?:\-dlq|\+wait\+[0-9]+|\.redeclaring)?)\z)[\s\S]*?(?:^(a)\1)`
	if err != nil || got != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}
	if !mustMatch(t, got, "aa") || mustMatch(t, got, "ab") || mustMatch(t, got, "or.ders-dlq") || !mustMatch(t, `^(a)\1`, "aa") {
		t.Errorf("%s keeps the backreference", got)
	}
}

// QuotePCRE keeps letters, digits and _, escapes printable punctuation and
// writes every other byte as \xHH; the quote matches exactly its input.
func TestQuotePCRE(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"az_AZ09":     "az_AZ09",
		`a.b*c+d?`:    `a\.b\*c\+d\?`,
		"a b":         `a\x20b`,
		"é":           `\xc3\xa9`,
		"\x00\x7f~!":  `\x00\x7f\~\!`,
		`[](){}^$|\/`: `\[\]\(\)\{\}\^\$\|\\\/`,
		"@`":          "\\@\\`",
	} {
		if got := QuotePCRE(in); got != want {
			t.Errorf("QuotePCRE(%q) = %s, want %s", in, got, want)
		}
		if !mustMatch(t, "^"+QuotePCRE(in)+`\z`, in) {
			t.Errorf("%s does not match %q", QuotePCRE(in), in)
		}
	}
}

// Refused inputs name the argument to change.
func TestExcludeTopologies_errors(t *testing.T) {
	t.Parallel()
	s := DefaultSuffixes()
	for _, c := range []struct {
		pattern string
		queues  []string
		arg     string
		words   string
	}{
		{`.*`, nil, "queues", "at least one queue"},
		{`.*`, []string{""}, "queues", "must not be empty"},
		{`.*`, []string{"amq.q"}, "queues", `starts with "amq."`},
		{`.*`, []string{strings.Repeat("q", 236)}, "queues", "236 bytes"},
		{`(`, []string{"q"}, "pattern", "cannot be evaluated"},
		{`\h`, []string{"q"}, "pattern", `\h`},
		{`(*UCP)\w`, []string{"q"}, "pattern", "start-of-pattern option"},
		{"(?x)q # comment", []string{"q"}, "pattern", "cannot be wrapped"},
		{`.*`, []string{strings.Repeat("a", 235), strings.Repeat("b", 235), strings.Repeat("c", 235), strings.Repeat("d", 235),
			strings.Repeat("e", 235)}, "queues", "refuse a pattern over 1024 bytes"},
	} {
		got, err := ExcludeTopologies(c.pattern, c.queues, s)
		var ee *ExcludeError
		if got != "" || !errors.As(err, &ee) || ee.Arg != c.arg || !strings.Contains(err.Error(), c.words) {
			t.Errorf("ExcludeTopologies(%q, %d queues) = %q, %v; want an ExcludeError on %s saying %q", c.pattern, len(c.queues), got, err, c.arg, c.words)
		}
	}
	var se *SettingError
	if _, err := ExcludeTopologies(`.*`, []string{"q"}, Suffixes{}); !errors.As(err, &se) {
		t.Errorf("empty suffixes: %v", err)
	}
}

// The longest pattern that fits is accepted, one byte more refused.
func TestExcludeTopologies_limit(t *testing.T) {
	t.Parallel()
	s := DefaultSuffixes()
	base, err := ExcludeTopologies("", []string{"q"}, s)
	if err != nil {
		t.Fatal(err)
	}
	fits := strings.Repeat("a", MaxPolicyPatternBytes-len(base))
	if got, err := ExcludeTopologies(fits, []string{"q"}, s); err != nil || len(got) != MaxPolicyPatternBytes {
		t.Errorf("%d bytes: %v", len(got), err)
	}
	if _, err := ExcludeTopologies(fits+"a", []string{"q"}, s); err == nil {
		t.Error("1025 bytes accepted")
	}
}
