package broker

import "testing"

// A queue runs while its state says it works or is not reported; a vhost is classic when it
// names no default queue type or names classic.
func TestQueueRunningAndVhostClassic(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]bool{"": true, "running": true, "live": true, "idle": true, "flow": true,
		"down": false, "stopped": false, "crashed": false, "terminated": false} {
		if got := (Queue{State: state}).Running(); got != want {
			t.Errorf("Queue{State: %q}.Running() = %v, want %v", state, got, want)
		}
	}
	for qt, want := range map[string]bool{"": true, "classic": true, "quorum": false, "stream": false} {
		if got := (Vhost{DefaultQueueType: qt}).IsClassic(); got != want {
			t.Errorf("Vhost{DefaultQueueType: %q}.IsClassic() = %v, want %v", qt, got, want)
		}
	}
}
