package provider

import (
	"fmt"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// Queues on a cluster node that is down: the broker still lists them, with a state other than
// running and no message counts. They exist (no phantom change), they cannot be declared, and they
// are never deleted unless force_destroy.

// bringBackHint says what to do about queues that are not running.
const bringBackHint = "Bring their node back: on that node run `rabbitmqctl start_app` (or start the service), check with " +
	"`rabbitmqctl cluster_status` and `rabbitmqctl list_queues name state`, and wait until the queues are running again"

// notRunning returns those of queues (zero values skipped) whose process does not run.
func notRunning(queues ...broker.Queue) []broker.Queue {
	var out []broker.Queue
	for _, q := range queues {
		if q.Name != "" && !q.Running() {
			out = append(out, q)
		}
	}
	return out
}

// notRunningLines describes each queue with its node and state.
func notRunningLines(queues []broker.Queue) []string {
	lines := make([]string, 0, len(queues))
	for _, q := range queues {
		node := q.Node
		if node == "" {
			node = "(unknown)"
		}
		lines = append(lines, fmt.Sprintf("%s on node %s: state %s", q.Name, node, q.State))
	}
	return lines
}
