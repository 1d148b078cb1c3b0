package broker

import (
	"errors"
	"testing"
)

// An Error says the operation, the endpoint, the status and the broker's reason (without its
// closing period), and errors.Is sees its kind.
func TestError_wording(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Op: "declaring queue \"q\"", Endpoint: "http://h:15672", Status: 406, Reason: "inequivalent arg 'x-max-priority'.", Kind: ErrArgumentsConflict},
			`declaring queue "q" at http://h:15672 failed: HTTP 406: inequivalent arg 'x-max-priority'`},
		{Error{Op: "listing queues", Endpoint: "http://h:15672", Status: 503, Kind: ErrUnavailable},
			"listing queues at http://h:15672 failed: HTTP 503"},
		{Error{Op: "listing queues", Endpoint: "http://h:15672", Reason: "connection refused", Kind: ErrUnreachable},
			"listing queues at http://h:15672 failed: connection refused"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		err := error(&tc.e)
		if !errors.Is(err, tc.e.Kind) {
			t.Errorf("%q: errors.Is does not see its kind %v", tc.want, tc.e.Kind)
		}
	}
}
