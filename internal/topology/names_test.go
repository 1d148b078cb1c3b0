package topology

import (
	"strings"
	"testing"
)

// A name too long is explained by the derived name that sets the limit: the
// hold queue's when both derived names are equally long.
func TestValidateQueueName_longestDerivedName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    Suffixes
		want string
	}{
		{Suffixes{Dead: strings.Repeat("d", 11), Deferred: "."}, `("." followed by a 10-digit TTL)`},
		{Suffixes{Dead: strings.Repeat("d", 12), Deferred: "."}, `(the dead-letter queue's, ending in "dddddddddddd")`},
		{Suffixes{Dead: strings.Repeat("d", 10), Deferred: "."}, `("." followed by a 10-digit TTL)`},
	} {
		limit := tt.s.MaxNameBytes()
		if err := ValidateQueueName(strings.Repeat("a", limit), tt.s); err != nil {
			t.Errorf("a name of %d bytes with %+v: %v", limit, tt.s, err)
		}
		err := ValidateQueueName(strings.Repeat("a", limit+1), tt.s)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("a name of %d bytes with %+v: %v, want %q", limit+1, tt.s, err, tt.want)
		}
	}
}
