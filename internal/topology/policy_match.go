package topology

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
)

// Policy is a user or operator policy as the management API lists it. Definition holds values as
// encoding/json decodes them with UseNumber (json.Number); Go integers and whole float64 values
// are read the same way, so integers compare exactly.
type Policy struct {
	Name       string
	Pattern    string
	ApplyTo    string
	Priority   int
	Definition map[string]any
}

// Applied is what applies to one queue name: at most one user and one operator policy, the other
// matching policies of the same top priority (which of them applies is the broker's choice), and
// the patterns that could not be evaluated (never taken for "no match").
type Applied struct {
	User, Operator         *Policy
	TiedUser, TiedOperator []Policy
	Unevaluable            []PatternError
}

// PatternError is a policy pattern the engine cannot evaluate for a name.
type PatternError struct {
	Policy   string
	Pattern  string
	Operator bool
	Reason   string
}

func (e *PatternError) Error() string {
	kind := "policy"
	if e.Operator {
		kind = "operator policy"
	}
	return fmt.Sprintf("the pattern %q of %s %q cannot be evaluated: %s", e.Pattern, kind, e.Policy, e.Reason)
}

// BrokerVersion is a RabbitMQ major and minor version; the zero value stands for the newest known.
type BrokerVersion struct{ Major, Minor int }

// ParseBrokerVersion reads a RabbitMQ version such as "3.10.8" or "4.3.0-rc.1": its major and minor.
func ParseBrokerVersion(s string) (BrokerVersion, error) {
	f := strings.SplitN(s, ".", 3)
	if len(f) >= 2 {
		major, err1 := strconv.Atoi(f[0])
		minor, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil && major > 0 && minor >= 0 {
			return BrokerVersion{Major: major, Minor: minor}, nil
		}
	}
	return BrokerVersion{}, fmt.Errorf("RabbitMQ version %q is not MAJOR.MINOR[.PATCH]", s)
}

func (v BrokerVersion) atLeast(major, minor int) bool {
	if v == (BrokerVersion{}) {
		return true
	}
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// classicUnsupportedKeys lists the policy keys that keep a policy off classic queues
// (rabbit_classic_queue:capabilities/0, unsupported_policies; rabbit_queue_type:is_policy_applicable/2).
func classicUnsupportedKeys(v BrokerVersion) []string {
	keys := []string{"max-age", "stream-max-segment-size-bytes", "initial-cluster-size", "delivery-limit", "dead-letter-strategy"}
	if !v.atLeast(4, 0) {
		keys = append(keys, "queue-leader-locator")
	}
	if v.atLeast(3, 13) {
		keys = append(keys, "max-in-memory-length", "max-in-memory-bytes", "target-group-size")
	}
	if v.atLeast(4, 3) {
		keys = append(keys, "selector-fields", "selector-field-max-bytes")
	}
	return keys
}

// appliesToClassic reports whether apply-to covers a classic queue (rabbit_policy:matches_queue_type/3;
// classic_queues is known from 3.12; an absent apply-to is stored as all).
func appliesToClassic(v BrokerVersion, applyTo string) bool {
	switch applyTo {
	case "", "all", "queues":
		return true
	case "classic_queues":
		return v.atLeast(3, 12)
	}
	return false
}

// applicable reports whether a policy's definition holds no key classic queues refuse.
func applicable(v BrokerVersion, def map[string]any) bool {
	for _, k := range classicUnsupportedKeys(v) {
		if _, ok := def[k]; ok {
			return false
		}
	}
	return true
}

// ApplyingPoliciesOn returns the user and operator policies that apply to a classic queue named
// name as broker version v (the zero value: the newest known) picks them (rabbit_policy:match_all/3:
// apply-to, applicability, then the pattern; the highest priority first).
func ApplyingPoliciesOn(v BrokerVersion, name string, user, operator []Policy) Applied {
	var a Applied
	var errs []PatternError
	a.User, a.TiedUser, errs = pick(v, name, user, false)
	a.Unevaluable = append(a.Unevaluable, errs...)
	a.Operator, a.TiedOperator, errs = pick(v, name, operator, true)
	a.Unevaluable = append(a.Unevaluable, errs...)
	return a
}

// pick returns the first matching policy of the top priority, the others tied with it, and the
// unevaluable patterns that could have applied instead (priority at or above the top).
func pick(v BrokerVersion, name string, policies []Policy, operator bool) (*Policy, []Policy, []PatternError) {
	var top, unknown []Policy
	var reasons []PatternError
	for _, p := range policies {
		if !appliesToClassic(v, p.ApplyTo) || !applicable(v, p.Definition) {
			continue
		}
		ok, err := MatchPolicyPattern(p.Pattern, name)
		var pe *PatternError
		if errors.As(err, &pe) {
			unknown = append(unknown, p)
			reasons = append(reasons, PatternError{Policy: p.Name, Pattern: p.Pattern, Operator: operator, Reason: pe.Reason})
			continue
		}
		if !ok {
			continue
		}
		if len(top) == 0 || p.Priority > top[0].Priority {
			top = []Policy{p}
		} else if p.Priority == top[0].Priority {
			top = append(top, p)
		}
	}
	var kept []PatternError
	for i, u := range unknown {
		if len(top) == 0 || u.Priority >= top[0].Priority {
			kept = append(kept, reasons[i])
		}
	}
	if len(top) == 0 {
		return nil, nil, kept
	}
	chosen := top[0]
	return &chosen, top[1:], kept
}

// policyMatchTimeout bounds one match, so that a catastrophic pattern cannot hang a plan.
const policyMatchTimeout = 200 * time.Millisecond

type compiled struct {
	re  *regexp2.Regexp
	err error
}

// patternCache keeps each pattern's compilation, up to limit patterns (past it they are compiled
// each time); safe for concurrent use.
type patternCache struct {
	mu    sync.Mutex
	limit int
	m     map[string]compiled
}

var policyPatterns = &patternCache{limit: 4096, m: map[string]compiled{}}

func (c *patternCache) compile(pattern string) (*regexp2.Regexp, error) {
	c.mu.Lock()
	got, ok := c.m[pattern]
	c.mu.Unlock()
	if ok {
		return got.re, got.err
	}
	got.re, got.err = compileUncached(pattern)
	c.mu.Lock()
	if len(c.m) < c.limit {
		c.m[pattern] = got
	}
	c.mu.Unlock()
	return got.re, got.err
}

// MatchPolicyPattern reports whether pattern finds a match anywhere in name, as RabbitMQ's
// re:run does: bytes, not characters (both are read as Latin-1), \d \w \s ASCII only. An error
// (a *PatternError, Policy unset) means the engine cannot tell: a pattern it cannot compile, a
// PCRE construct it reads otherwise (\h \v \R \K \Q... and {,n}), a $ or \Z against a name
// ending in a newline (PCRE's match before it, the engine's does not), or a match that runs past
// its time bound.
// Known disagreement, not detected: (?i) folds non-ASCII bytes here (Latin-1), not in PCRE.
func MatchPolicyPattern(pattern, name string) (bool, error) {
	re, err := compilePolicyPattern(pattern)
	if err != nil {
		return false, err
	}
	if strings.HasSuffix(name, "\n") && (strings.Contains(pattern, "$") || strings.Contains(pattern, `\Z`)) {
		return false, &PatternError{Pattern: pattern, Reason: "the name ends in a newline, before which PCRE's $ and \\Z also match"}
	}
	ok, err := re.MatchString(latin1(name))
	if err != nil {
		return false, &PatternError{Pattern: pattern, Reason: "the match ran past its time bound (catastrophic backtracking)"}
	}
	return ok, nil
}

func compilePolicyPattern(pattern string) (*regexp2.Regexp, error) {
	return policyPatterns.compile(pattern)
}

func compileUncached(pattern string) (*regexp2.Regexp, error) {
	if what := pcreOnly(pattern); what != "" {
		return nil, &PatternError{Pattern: pattern, Reason: what}
	}
	re, err := regexp2.Compile(latin1(pattern), regexp2.RE2)
	if err != nil {
		return nil, &PatternError{Pattern: pattern, Reason: err.Error()}
	}
	re.MatchTimeout = policyMatchTimeout
	return re, nil
}

// latin1 maps each byte to the rune of the same value, so the engine matches bytes as PCRE does
// without its UTF mode.
func latin1(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// pcreEscapes are PCRE escapes the engine reads as something else (or as a plain letter).
const pcreEscapes = "hHvVRKNXCgQEo"

// pcreOnly names the first PCRE-only construct in pattern, or returns "".
func pcreOnly(pattern string) string {
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == '\\' && i+1 < len(pattern) {
			if strings.IndexByte(pcreEscapes, pattern[i+1]) >= 0 {
				return fmt.Sprintf("the PCRE escape \\%c has no equal in the engine", pattern[i+1])
			}
			i++
			continue
		}
		if strings.HasPrefix(pattern[i:], "{,") && isUpperOnly(pattern[i+2:]) {
			return "{,n} is a quantifier in PCRE2 and a literal in PCRE"
		}
	}
	return ""
}

// isUpperOnly reports whether s starts with digits closed by }, the rest of a {,n} quantifier.
func isUpperOnly(s string) bool {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i > 0 && i < len(s) && s[i] == '}'
}
