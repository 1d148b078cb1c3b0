package topology

import (
	"errors"
	"strings"
	"testing"
)

// The room the suffixes leave for a queue name, at its edges: one byte left
// is enough, none is not, and the error names the suffix that takes the room
// (the dead suffix when both take the same) and each suffix's own limit.
func TestSuffixesValidate_room(t *testing.T) {
	t.Parallel()
	d := func(n int) string { return strings.Repeat("d", n) }
	w := func(n int) string { return strings.Repeat("w", n) }
	for _, tt := range []struct {
		name    string
		s       Suffixes
		setting string // empty: valid
	}{
		{"dead suffix leaves one byte", Suffixes{Dead: d(254), Deferred: "."}, ""},
		{"deferred suffix leaves one byte", Suffixes{Dead: ".dead", Deferred: w(244)}, ""},
		{"dead suffix leaves none", Suffixes{Dead: d(255), Deferred: "."}, "dead_suffix"},
		{"deferred suffix leaves none", Suffixes{Dead: ".dead", Deferred: w(245)}, "deferred_suffix"},
		{"both leave none, equally", Suffixes{Dead: d(256), Deferred: w(246)}, "dead_suffix"},
		{"the deferred suffix with its TTL is longer", Suffixes{Dead: d(250), Deferred: w(246)}, "deferred_suffix"},
		{"the dead suffix is longer", Suffixes{Dead: d(257), Deferred: w(246)}, "dead_suffix"},
	} {
		err := tt.s.Validate()
		if tt.setting == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			if got := tt.s.MaxNameBytes(); got != 1 {
				t.Errorf("%s: MaxNameBytes = %d, want 1", tt.name, got)
			}
			continue
		}
		var se *SettingError
		if !errors.As(err, &se) || se.Setting != tt.setting {
			t.Errorf("%s: Validate = %#v, want a SettingError for %s", tt.name, err, tt.setting)
			continue
		}
		if !strings.Contains(err.Error(), "within RabbitMQ's 255-byte limit; dead_suffix may be at most 254 bytes and deferred_suffix at most 244") {
			t.Errorf("%s: the error does not state the limits: %v", tt.name, err)
		}
	}
}
