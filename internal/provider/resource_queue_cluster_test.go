package provider

import (
	"slices"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// A queue whose process does not run is named with its node and state; a
// working state and an unreported one are left out.
func TestNotRunning(t *testing.T) {
	t.Parallel()
	queues := []broker.Queue{
		{Name: "q", State: "running"},
		{Name: "q.dead", State: "down", Node: "rabbit@b"},
		{Name: "q.deferred.5000", State: "live"},
		{Name: "q.deferred.60000", State: "stopped"},
		{Name: "q.unreported"},
	}
	got := notRunningLines(notRunning(queues...))
	want := []string{"q.dead on node rabbit@b: state down", "q.deferred.60000 on node (unknown): state stopped"}
	if !slices.Equal(got, want) {
		t.Errorf("notRunningLines = %q, want %q", got, want)
	}
}
