package mover

import (
	"errors"
	"strings"
	"testing"
)

// The error says how many moved, how many stay and where, and lets
// errors.Is see its kind.
func TestMoveError(t *testing.T) {
	t.Parallel()
	c := newMoveCore(Move{Vhost: "v", From: "q.dead", To: "q"}, "amqp://h:5672", 10, "me", false, moveStart)
	acts := c.Step(moveStart, dlv(1), dlv(2), ok(1))
	acts = append(acts, c.Step(moveStart, acked, nack(2))...)
	stop, isStop := acts[len(acts)-1].(moveStop)
	if !isStop {
		t.Fatalf("a nack did not stop the move: %q", acts)
	}
	err := error(stop.Err)
	wantText := `moved 1 of 10 messages from q.dead to q in vhost "v" (amqp://h:5672), then stopped: the broker nacked a ` +
		`publish to q. The other 9 stay on q.dead: a message leaves it only once its copy on q is confirmed`
	if err.Error() != wantText || !errors.Is(err, errNotConfirmed) || stop.Err.Cause != Nacked {
		t.Errorf("got %q (kind %v, cause %v),\nwant %q", err, stop.Err.Kind, stop.Err.Cause, wantText)
	}
	noHint := &MoveError{Vhost: "v", From: "a", To: "b", URL: "u", Moved: 0, Total: 2, Reason: "interrupted."}
	if got := noHint.Error(); got != `moved 0 of 2 messages from a to b in vhost "v" (u), then stopped: interrupted. The other 2 `+
		`stay on a: a message leaves it only once its copy on b is confirmed` {
		t.Errorf("a reason ending in a full stop: %q", got)
	}
}

// The error of each problem says what is wrong and which value.
func TestEndpointErrorText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e    EndpointError
		want string
	}{
		{EndpointError{Value: "x", Problem: unparsable}, `"x" does not parse`},
		{EndpointError{Value: "http://h", Scheme: "http", Problem: NotAMQPScheme}, `"http://h" has scheme "http"`},
		{EndpointError{Value: "amqp://", Problem: NoHost}, `"amqp://" has no host`},
		{EndpointError{Value: "amqp://u:xxxxx@h", Problem: HasCredentials}, `without credentials; "amqp://u:xxxxx@h" has some`},
		{EndpointError{Value: "amqp://h/v", Problem: HasPath}, `without a path or query; got "amqp://h/v"`},
	} {
		if got := tc.e.Error(); !strings.HasPrefix(got, "an AMQP endpoint must be an amqp or amqps URL") || !strings.HasSuffix(got, tc.want) {
			t.Errorf("%v: %q, want ...%q", tc.e.Problem, got, tc.want)
		}
	}
}
