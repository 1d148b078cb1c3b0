package topology

import (
	"fmt"
	"strings"
)

// MaxPolicyPatternBytes is the longest policy pattern RabbitMQ accepts from 4.2.9 and 4.3.5
// (rabbit_re:compile/2, MAX_PATTERN_LENGTH); earlier versions set no limit.
const MaxPolicyPatternBytes = 1024

// ExcludeError is an ExcludeTopologies input it refuses; Arg names it ("pattern" or "queues").
type ExcludeError struct {
	Arg string
	msg string
}

func (e *ExcludeError) Error() string { return e.msg }

// ExcludeTopologies returns a policy pattern that matches exactly the names pattern matches (as an
// unanchored PCRE search) except the queues of each logical queue's topology: q, q.dead, q and the
// deferred suffix and digits, and q.redeclaring. The form is
//
//	^(?!(?:Q1(?:DEAD|DEFERRED[0-9]+|\.redeclaring)?|Q2...)\z)[\s\S]*?(?:PATTERN)
//
// with only non-capturing groups added, so PATTERN's backreferences keep their numbers, its
// inline options keep their scope, and ^ in it still means the start of the name; \z, not $,
// ends the excluded names, as PCRE's $ also matches before a final newline. Hold queue digits are
// [0-9]+, as in the permission patterns. Errors are *ExcludeError, or *SettingError for s.
func ExcludeTopologies(pattern string, queues []string, s Suffixes) (string, error) {
	if err := validateExclusion(pattern, queues, s); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(`^(?!(?:`)
	for i, q := range queues {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(QuotePCRE(q))
		fmt.Fprintf(&b, `(?:%s|%s[0-9]+|%s)?`, QuotePCRE(s.Dead), QuotePCRE(s.Deferred), QuotePCRE(RedeclaringSuffix))
	}
	b.WriteString(`)\z)[\s\S]*?(?:`)
	b.WriteString(pattern)
	b.WriteByte(')')
	out := b.String()
	if _, err := compilePolicyPattern(out); err != nil {
		return "", &ExcludeError{Arg: "pattern", msg: fmt.Sprintf("the pattern %q cannot be wrapped (a trailing comment in (?x) mode swallows the closing parenthesis?): %v", pattern, err)}
	}
	if len(out) > MaxPolicyPatternBytes {
		return "", &ExcludeError{Arg: "queues", msg: fmt.Sprintf("the pattern excluding %d topologies is %d bytes; RabbitMQ 4.2.9 and later refuse a pattern over %d bytes: exclude fewer queues per policy, or shorten the pattern", len(queues), len(out), MaxPolicyPatternBytes)}
	}
	return out, nil
}

func validateExclusion(pattern string, queues []string, s Suffixes) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if len(queues) == 0 {
		return &ExcludeError{Arg: "queues", msg: "name at least one queue whose topology the pattern leaves out"}
	}
	for _, q := range queues {
		if err := ValidateQueueName(q, s); err != nil {
			return &ExcludeError{Arg: "queues", msg: err.Error()}
		}
	}
	if strings.HasPrefix(pattern, "(*") {
		return &ExcludeError{Arg: "pattern", msg: fmt.Sprintf("the pattern %q starts with a PCRE start-of-pattern option, which the provider can neither evaluate nor keep in front", pattern)}
	}
	if _, err := compilePolicyPattern(pattern); err != nil {
		return &ExcludeError{Arg: "pattern", msg: err.Error()}
	}
	return nil
}

// QuotePCRE returns a pattern matching s literally in PCRE (bytes, no UTF mode) and in the
// engine: letters, digits and _ as they are, other printable ASCII after a backslash, and every
// other byte as \xHH, so the result is ASCII.
func QuotePCRE(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		quoteByte(&b, s[i])
	}
	return b.String()
}

func quoteByte(b *strings.Builder, c byte) {
	if c == '_' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') {
		b.WriteByte(c)
		return
	}
	if c > ' ' && c < 0x7f {
		b.WriteByte('\\')
		b.WriteByte(c)
		return
	}
	fmt.Fprintf(b, `\x%02x`, c)
}
