package topology

import (
	"errors"
	"strings"
	"testing"
)

// The holding queue is named by a fixed suffix, has no arguments, and is
// never taken for a hold queue nor matched by the permission patterns.
func TestRedeclaringQueue(t *testing.T) {
	t.Parallel()
	q := RedeclaringQueue("orders")
	if q.Name != "orders.redeclaring" || q.Args.JSON() != "{}" {
		t.Errorf("RedeclaringQueue = %+v", q)
	}
	for _, s := range []Suffixes{DefaultSuffixes(), {Dead: "-dlq", Deferred: "."}, {Dead: ".dead", Deferred: ".redeclaring"}} {
		if _, ok := ParseHoldQueueName("orders", q.Name, s); ok {
			t.Errorf("%s is recognised as a hold queue with %+v", q.Name, s)
		}
	}
	s := DefaultSuffixes()
	for _, pattern := range []string{HoldQueuePattern("orders", s), QueuesPattern("orders", s), WritePattern("orders", s)} {
		if strings.Contains(pattern, "redeclaring") {
			t.Errorf("pattern %s names the holding queue", pattern)
		}
	}
}

// A dead_suffix equal to the holding queue's would make q.dead the holding
// queue: refused, naming dead_suffix.
func TestSuffixesValidate_redeclaring(t *testing.T) {
	t.Parallel()
	err := Suffixes{Dead: RedeclaringSuffix, Deferred: ".deferred."}.Validate()
	var se *SettingError
	if !errors.As(err, &se) || se.Setting != "dead_suffix" || !strings.Contains(err.Error(), `must not be ".redeclaring"`) {
		t.Errorf("Validate = %v, want a SettingError for dead_suffix", err)
	}
	if err := (Suffixes{Dead: ".redeclaring2", Deferred: ".deferred."}).Validate(); err != nil {
		t.Errorf("a dead_suffix that only starts like the holding queue's: %v", err)
	}
}

// The holding queue's name fits RabbitMQ's limit with the default suffixes
// at the longest name; short custom suffixes allow names whose holding queue
// does not fit, which is refused.
func TestValidateRedeclaringName(t *testing.T) {
	t.Parallel()
	longest := strings.Repeat("a", DefaultSuffixes().MaxNameBytes())
	if err := ValidateRedeclaringName(longest); err != nil {
		t.Errorf("the longest name with the default suffixes: %v", err)
	}
	if err := ValidateRedeclaringName(strings.Repeat("a", 243)); err != nil {
		t.Errorf("a 243-byte name: %v", err)
	}
	err := ValidateRedeclaringName(strings.Repeat("a", 244))
	if err == nil || !strings.Contains(err.Error(), "256 bytes, past RabbitMQ's 255-byte limit") {
		t.Errorf("a 244-byte name: %v", err)
	}
}
