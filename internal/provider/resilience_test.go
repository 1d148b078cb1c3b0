package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// The restart and cluster tests need nodes of their own, which they stop and
// start: the resil broker of tools/acc starts them and names them in
// QUEUEY_RESTART_NODES (single nodes) and QUEUEY_CLUSTER_NODES (three nodes
// of one cluster). `make testresil` runs them; the normal acceptance run
// leaves them out.

const (
	envRestartNodes = "QUEUEY_RESTART_NODES"
	envClusterNodes = "QUEUEY_CLUSTER_NODES"
	// outage is how long the tests keep a node's RabbitMQ application down.
	outage = 30 * time.Second
)

// testNode is a node started by scripts/rabbitmq-node.sh.
type testNode struct {
	name     string // as the script knows it, e.g. c2
	erlang   string // e.g. c2@localhost
	endpoint string
	amqpURL  string
}

// resilNodes returns the nodes named in env, or skips the test.
func resilNodes(t *testing.T, env string, want int) []testNode {
	t.Helper()
	if os.Getenv("TF_ACC") == "" || os.Getenv(env) == "" {
		t.Skipf("needs nodes of its own that it stops and starts: run with `make testresil` (%s)", env)
	}
	var nodes []testNode
	for _, name := range strings.Split(os.Getenv(env), ",") {
		out, err := exec.Command("../../scripts/rabbitmq-node.sh", "env", name).Output()
		if err != nil {
			t.Fatalf("rabbitmq-node.sh env %s: %v", name, err)
		}
		vars := map[string]string{} // the script's KEY=value lines
		for line := range strings.Lines(string(out)) {
			k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
			vars[k] = v
		}
		nodes = append(nodes, testNode{name, vars["NODE_NAME"], vars["NODE_ENDPOINT"], vars["NODE_AMQP_URL"]})
	}
	if len(nodes) < want {
		t.Fatalf("%s names %d nodes, want %d", env, len(nodes), want)
	}
	return nodes
}

// ctl runs rabbitmqctl against the node; the error carries its output.
func (n testNode) ctl(args ...string) error {
	out, err := exec.Command("../../scripts/rabbitmq-node.sh", append([]string{"ctl", n.name}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("rabbitmqctl %s on %s: %v\n%s", strings.Join(args, " "), n.name, err, out)
	}
	return nil
}

// client is a management API client of the node; budget as in broker.Config.
func (n testNode) client(t *testing.T, budget time.Duration) *broker.Client {
	t.Helper()
	return orFatal(broker.New(broker.Config{Endpoint: n.endpoint, Username: defaultUser, Password: defaultPassword,
		RequestTimeout: 10 * time.Second, RetryBudget: budget}))(t)
}

// eventually asks cond every 250 ms until it holds or within has passed, and
// says whether it held: what the nodes report after a restart lags a while.
func eventually(within time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); !cond(); time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// credentials are the provider settings of the nodes' user.
var credentials = fmt.Sprintf("  username = %q\n  password = %q\n", defaultUser, defaultPassword)

// queuesOn is a configuration of count queues named base-0 ... base-<count-1>.
// Its retry_budget outlasts the longest restart a loaded machine makes: the
// node is away for stop_app, the 30 s outage and the start, and the first and
// last grow with the machine's load. What the default budget rides through is
// held at both edges by the broker's unit tests (TestLimit_retryBudget), on a
// clock the test moves.
func queuesOn(n testNode, base string, count int) string {
	return requiredQueuey + proxiedQueuesConfig(n.endpoint, credentials+"  retry_budget = \"10m\"", base, count, `  message_ttl = "1m"`)
}

// TestAccRestart_ridesThrough restarts the broker (its RabbitMQ application
// stopped for 30 s, then started) in the middle of an apply, a plan and a
// destroy of 20 queues: each passes with no error, and nothing is lost or
// left behind. The apply and the
// destroy talk to the node through a fault proxy (After with held), which holds their requests
// after the first few declarations or deletes until the node has stopped, so
// that each meets the restart however fast the machine is; the plan starts
// with the node already stopped and talks to it directly (a refused
// connection, after an earlier run of the provider had an answer there).
func TestAccRestart_ridesThrough(t *testing.T) {
	for _, n := range resilNodes(t, envRestartNodes, 1) {
		t.Run(n.name, func(t *testing.T) {
			t.Parallel()
			const count = 20
			base := uniqueName("restart")
			c := n.client(t, 0)
			// What is left, one attempt each (a node may be recovering).
			t.Cleanup(func() { deleteQueuesWithPrefix(n.client(t, -1), "/", base) })
			p := proxyTo(t, n.endpoint, nil)
			proxied := n
			proxied.endpoint = p.URL
			tf := newTerraformCLI(t, queuesOn(proxied, base, count))
			var longest time.Duration
			ridden := func(what string, r restartRun) string {
				t.Helper()
				t.Logf("%s: %s took %s; the management API was away for %s (stop_app %s); requests held until the node had stopped: %d",
					n.name, what, r.took.Round(time.Millisecond), r.away.Round(time.Millisecond), r.stop.Round(time.Millisecond), r.held)
				longest = max(longest, r.away)
				if r.err != nil {
					t.Fatalf("%s through a restart failed: %v\n%s", what, r.err, r.out)
				}
				if r.took < outage {
					t.Errorf("%s finished in %s, before the outage of %s ended: it cannot have waited for the node it needed", what, r.took, outage)
				}
				return r.out
			}
			// The queues of the test that c lists, once they are want or after
			// 30 s: a listing answered just after a restart can lack some.
			settled := func(want int) (names []string, err error) {
				eventually(30*time.Second, func() bool {
					names, err = queuesWithPrefix(c, "/", base)
					return err == nil && len(names) == want
				})
				return names, err
			}

			// Apply: the proxy holds what follows the first two queues' declarations.
			ridden("apply", duringRestart(t, n, p, restartHold{http.MethodPut, 4}, tf, "apply", "-auto-approve", "-parallelism=1"))
			if got, err := settled(2 * count); err != nil || len(got) != 2*count {
				t.Fatalf("after the apply the broker holds %d queues of the test, want %d (%v)", len(got), 2*count, err)
			}
			// Plan: directly to the node, once with it up (so that this
			// endpoint has answered the provider before), then with the node
			// stopped just before the plan starts.
			tf.writeConfig(queuesOn(n, base, count))
			tf.mustRun("plan", "-detailed-exitcode")
			out := ridden("plan", duringRestart(t, n, nil, restartHold{}, tf, "plan", "-detailed-exitcode"))
			if !strings.Contains(out, "No changes.") {
				t.Fatalf("plan after a restart is not empty:\n%s", out)
			}
			// Destroy: the proxy holds what follows the first two queues' deletes.
			tf.writeConfig(queuesOn(proxied, base, count))
			ridden("destroy", duringRestart(t, n, p, restartHold{http.MethodDelete, 4}, tf, "destroy", "-auto-approve", "-parallelism=1"))
			if left, err := settled(0); err != nil || len(left) != 0 {
				t.Fatalf("after the destroy the broker still holds %d queues of the test: %s (%v)", len(left), strings.Join(left, ", "), err)
			}
			t.Logf("%s: longest restart ridden through: %s", n.name, longest.Round(time.Millisecond))
		})
	}
}

// restartHold is where an operation through the proxy meets a restart: once
// after requests of method went through it.
type restartHold struct {
	method string
	after  int
}

// restartRun is what duringRestart saw of one run of the CLI.
type restartRun struct {
	out  string
	err  error
	took time.Duration // the CLI's wall time
	away time.Duration // from stop_app until the management API answered again
	held int           // requests the proxy held until the node had stopped
	stop time.Duration // how long rabbitmqctl stop_app took
}

// duringRestart runs the CLI with args while node n restarts: its
// application stops, stays down for outage, and starts again. With p nil
// the node stops before the CLI starts. Otherwise the CLI talks to n
// through p, which holds every request once after hold.after of
// hold.method went through; the node then stops, and only once rabbitmqctl
// stop_app has returned does p let the held requests go on, to the stopped
// node. Either way the node starts again no sooner than outage after the
// CLI began, so an operation that needs the node takes at least that long;
// it is back once its management API answers a listing of vhost "/".
func duringRestart(t *testing.T, n testNode, p *faultProxy, hold restartHold, tf *terraformCLI, args ...string) (r restartRun) {
	t.Helper()
	stopped := time.Now()
	stop := func() error {
		stopped = time.Now()
		err := n.ctl("stop_app")
		r.stop = time.Since(stopped)
		return err
	}
	var reached <-chan struct{}
	if p != nil {
		reached = p.After(hold.method, hold.after, held)
	} else if err := stop(); err != nil {
		t.Fatal(err)
	}
	begin, done := time.Now(), make(chan struct{})
	go func() {
		defer close(done)
		r.out, r.err = tf.run(args...)
		r.took = time.Since(begin)
	}()
	var err error
	if p != nil {
		select {
		case <-reached:
		case <-done:
			p.Release()
			t.Fatalf("terraform %s ended before the proxy held a request (after %d %s): it met no restart: %v\n%s",
				args[0], hold.after, hold.method, r.err, r.out)
		}
		err = stop()
		r.held = p.Release()
	}
	if err == nil {
		time.Sleep(outage)
		err = n.ctl("start_app")
	}
	if c := n.client(t, -1); err == nil && !eventually(3*time.Minute, func() bool { _, err := listQueues(c, "/", broker.Counted); return err == nil }) {
		err = fmt.Errorf("%s: the management API did not answer within 3 minutes", n.name)
	}
	r.away = time.Since(stopped)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// clusterQueueOn is the configuration of one queue through node n, with
// extra provider settings.
func clusterQueueOn(n testNode, name, extra string) string {
	return requiredQueuey + providerQueue(fmt.Sprintf("  endpoint = %q\n", n.endpoint)+credentials+extra, name, `  message_ttl = "1h"`)
}

// waitState waits until node c reports queue's state as running (or not).
func waitState(t *testing.T, c *broker.Client, queue string, running bool) (q broker.Queue) {
	t.Helper()
	var err error
	if !eventually(2*time.Minute, func() bool {
		q, err = c.GetQueue(context.Background(), "/", queue, broker.Declared)
		return err == nil && q.Running() == running
	}) {
		t.Fatalf("queue %q: still not running = %v after 2 minutes (%+v, %v)", queue, !running, q, err)
	}
	return q
}

// TestAccCluster_nodeDown stops the node that hosts q in a 3-node cluster:
// through another node the plan shows no change and warns, destroy refuses
// before any DELETE, adopting the queue fails saying why, and once the node
// is back every message published before is still there.
func TestAccCluster_nodeDown(t *testing.T) {
	nodes := resilNodes(t, envClusterNodes, 3)
	c1, c2 := nodes[0], nodes[1]
	name := uniqueName("nodedown")
	via1 := c1.client(t, -1)
	t.Cleanup(func() {
		if err := c2.ctl("start_app"); err != nil {
			t.Error(err) // an error, not a fatal: the queues still go
		}
		deleteQueuesWithPrefix(via1, "/", name)
	})

	// Declared through c2's management API, the queues live on c2.
	tf := newTerraformCLI(t, clusterQueueOn(c2, name, ""))
	tf.mustRun("apply", "-auto-approve")
	if q := waitState(t, via1, name, true); q.Node != c2.erlang {
		t.Fatalf("queue %q lives on %s, want %s", name, q.Node, c2.erlang)
	}
	const messages = 7
	publish(t, amqpChannelAt(t, c2.amqpURL), name, messages)

	fatalOn(t, c2.ctl("stop_app"))
	down := waitState(t, via1, name, false)
	t.Logf("with %s stopped, %s reports queue %q on %s in state %q", c2.name, c1.name, name, down.Node, down.State)
	tf.writeConfig(clusterQueueOn(c1, name, ""))

	// Plan through c1: the queue still exists; no change, and a warning.
	out := tf.mustRun("plan", "-detailed-exitcode")
	warn := regexp.MustCompile(`(?s)Warning: Queue Not Running.*` + regexp.QuoteMeta(name) + ` on node ` + regexp.QuoteMeta(c2.erlang) + `: state \w+`)
	if !strings.Contains(out, "No changes.") || !warn.MatchString(out) {
		t.Fatalf("plan with the queue's node down: want no changes and a Queue Not Running warning naming queue, node and state:\n%s", out)
	}
	t.Logf("plan with the node down prints:\n%s", out[strings.Index(out, "No changes."):])

	// Destroy refuses before any DELETE, naming queue, node, state and what to do.
	out, err := tf.run("destroy", "-auto-approve")
	refused := regexp.MustCompile(`(?s)Queue Not Running: Destroy Refused.*Nothing of queue.*was deleted.*` + regexp.QuoteMeta(name) +
		` on node ` + regexp.QuoteMeta(c2.erlang) + `: state \w+.*rabbitmqctl`)
	if err == nil || !refused.MatchString(out) {
		t.Fatalf("destroy with the queue's node down: want a refusal naming queue, node, state and what to do: %v\n%s", err, out)
	}
	t.Logf("destroy with the node down prints:\n%s", out)
	if _, err := via1.GetQueue(context.Background(), "/", name, broker.Declared); err != nil {
		t.Fatalf("after the refused destroy: %v", err)
	}

	// Adopting the queue elsewhere (a new state) fails, saying why.
	other := newTerraformCLI(t, clusterQueueOn(c1, name, ""))
	out, err = other.run("apply", "-auto-approve")
	if err == nil || !strings.Contains(out, "RabbitMQ Cluster Unavailable") || !strings.Contains(out, c2.erlang) ||
		strings.Contains(out, "does not exist") || strings.Contains(out, "Different Settings") {
		t.Fatalf("apply against a queue on a down node: want a RabbitMQ Cluster Unavailable error naming the node: %v\n%s", err, out)
	}
	t.Logf("adopting the queue with its node down prints:\n%s", out[strings.Index(out, "Error:"):])

	// The node comes back with every message.
	fatalOn(t, c2.ctl("start_app"))
	waitState(t, via1, name, true)
	if got := len(readBack(t, amqpChannelAt(t, c1.amqpURL), name)); got != messages {
		t.Fatalf("after the node came back %q holds %d messages, want %d", name, got, messages)
	}
	out = tf.mustRun("plan", "-detailed-exitcode")
	if strings.Contains(out, "Warning: Queue Not Running") {
		t.Fatalf("plan once the node is back still warns:\n%s", out)
	}
	tf.mustRun("destroy", "-auto-approve")
}

// TestAccCluster_noQuorum stops two of the three nodes: the metadata store
// has no majority, and declaring a queue fails saying so (never "vhost
// missing", never a conflict); once the nodes are back the same apply works.
func TestAccCluster_noQuorum(t *testing.T) {
	nodes := resilNodes(t, envClusterNodes, 3)
	c1 := nodes[0]
	name := uniqueName("noquorum")
	via1 := c1.client(t, -1)
	t.Cleanup(func() {
		for _, n := range nodes[1:] {
			if err := n.ctl("start_app"); err != nil {
				t.Error(err) // an error, not a fatal: the other node still starts, the queues still go
			}
		}
		deleteQueuesWithPrefix(via1, "/", name)
	})
	for _, n := range nodes[1:] {
		fatalOn(t, n.ctl("stop_app"))
	}
	// The broker takes 30 s to say that its metadata store timed out: as long
	// as the default request_timeout. Either way the error says why.
	tf := newTerraformCLI(t, "")
	for _, settings := range []string{
		"  retry_budget = \"5s\"\n",                              // the attempt times out
		"  retry_budget = \"0s\"\n  request_timeout = \"45s\"\n", // the broker's own answer
	} {
		tf.writeConfig(clusterQueueOn(c1, name, settings))
		start := time.Now()
		out, err := tf.run("apply", "-auto-approve")
		if err == nil || !strings.Contains(out, "RabbitMQ Cluster Unavailable") || !strings.Contains(out, "majority") ||
			strings.Contains(out, "does not exist") || strings.Contains(out, "Different Settings") {
			t.Fatalf("apply without quorum: want a RabbitMQ Cluster Unavailable error about the majority: %v\n%s", err, out)
		}
		t.Logf("apply without quorum (%s) failed after %s:\n%s", strings.TrimSpace(settings), time.Since(start).Round(time.Millisecond),
			out[strings.Index(out, "Error:"):])
	}
	for _, n := range nodes[1:] {
		fatalOn(t, n.ctl("start_app"))
	}
	fatalOn(t, c1.ctl("await_online_nodes", "3", "--timeout", "120"))
	// With the majority back, the cluster takes declarations again. (Not of
	// name: RabbitMQ 4.3.6 commits a declaration that timed out once the
	// majority is back, and a new declaration of that queue then hangs; see
	// the operating guide.)
	again := uniqueName("quorumback")
	t.Cleanup(func() { deleteQueuesWithPrefix(via1, "/", again) })
	tf.writeConfig(clusterQueueOn(c1, again, ""))
	tf.mustRun("apply", "-auto-approve")
	tf.mustRun("destroy", "-auto-approve")
	var nf *broker.Error
	if _, err := via1.GetQueue(context.Background(), "/", again, broker.Declared); !errors.As(err, &nf) || nf.Status != http.StatusNotFound {
		t.Fatalf("after the destroy: %v", err)
	}
}
