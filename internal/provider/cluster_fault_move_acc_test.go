package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// nodeDownBound is how long after the node's stop a move may take to stop
// with an error: the broker cancels the consumer of a queue whose node went
// down at once; should it not, the move's stall bound (15 s) and the wait
// for the close-ok (5 s) end it.
const nodeDownBound = 30 * time.Second

// nodeDownMove stops node n mid-move: the move's AMQP connection (through
// fp) is paused at offset of its traffic, n's RabbitMQ application stopped,
// and the connection resumed; run is the move, run in the background. The
// run's elapsed time is from the resume to the end of the move.
func nodeDownMove(t *testing.T, n testNode, fp faultProxies, offset int64, run func() (string, error)) faultRun {
	t.Helper()
	fp.amqp.Arm(brokertest.Fault{Kind: brokertest.FaultPause, After: offset})
	done := make(chan faultRun, 1)
	go func() {
		out, err := run()
		done <- faultRun{out: out, err: err}
	}()
	select {
	case <-fp.amqp.Struck():
	case r := <-done:
		t.Fatalf("the move ended before offset %d: %v", offset, r.err)
	}
	start := time.Now()
	n.ctl(t, "stop_app")
	stop := time.Since(start)
	resumed := time.Now()
	fp.heal()
	r := <-done
	r.struck, r.elapsed, r.note = true, time.Since(resumed), fmt.Sprintf(" (stop_app took %.1fs)", stop.Seconds())
	return r
}

// nodeDownCase is the fault of nodeDownMove, stopping node n that hosts queue.
func nodeDownCase(n testNode, queue string, offset int64) faultCase {
	return faultCase{name: "stop_app", what: fmt.Sprintf("stop_app of %s (hosts %s) in a 3-node cluster", n.name, queue),
		fault: brokertest.Fault{Kind: brokertest.FaultPause, After: offset}, bound: nodeDownBound}
}

// TestAccCluster_faultMoveNodeDown stops, mid-move, the node of a 3-node
// cluster that hosts the queue the move takes from -- q.dead for the
// redrive, q for the move aside of a re-declaration -- while the move talks
// to another node; then starts it again. The move stops within
// nodeDownBound saying how many moved and where the rest wait, running it
// again finishes it, and every message is accounted for. (The resil stage's
// Terraform has no actions: the redrive runs on the client the action
// calls, mover.Mover.Move, through the same proxies.)
func TestAccCluster_faultMoveNodeDown(t *testing.T) {
	nodes := resilNodes(t, envClusterNodes, 3)
	c1, c2 := nodes[0], nodes[1]
	seed := faultSeed(t)
	rng := rand.New(rand.NewPCG(seed, 3))
	offset := func() int64 { return 32<<10 + rng.Int64N(600<<10) }
	t.Cleanup(func() { _ = c2.tryCtl("start_app") })
	t.Run("redrive", func(t *testing.T) { nodeDownRedrive(t, c1, c2, offset(), seed) })
	t.Run("redeclare", func(t *testing.T) { nodeDownRedeclare(t, c1, c2, offset(), seed) })
}

func nodeDownRedrive(t *testing.T, c1, c2 testNode, offset int64, seed uint64) {
	name := uniqueName("nd-redrive")
	via1, via2 := c1.client(t, -1), c2.client(t, -1)
	t.Cleanup(func() { deleteQueuesWithPrefix(via1, "/", name) })
	ctx := context.Background()
	if err := via1.DeclareQueue(ctx, "/", name, map[string]any{"x-message-ttl": 3600000}); err != nil {
		t.Fatal(err)
	}
	if err := via2.DeclareQueue(ctx, "/", name+".dead", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if q := waitState(t, via1, name+".dead", true); q.Node != c2.erlang {
		t.Fatalf("%s.dead lives on %s, want %s", name, q.Node, c2.erlang)
	}
	publishDead(t, amqpChannelAt(t, c2.amqpURL), name, faultMoveN, nil)

	fp := newFaultProxies(t, c1.amqpURL, c1.endpoint)
	proxied := c1 // the management API through the proxy, with the default retry budget
	proxied.endpoint = "http://" + fp.mgmt.Addr
	client := moverOf(t, proxied.client(t, 0), "amqp://"+fp.amqp.Addr)
	redrive := mover.Move{Vhost: "/", From: name + ".dead", To: name}
	faultedMove{faultCase: nodeDownCase(c2, name+".dead", offset), seed: seed, move: "redrive",
		says: "RabbitMQ cancelled the consumer of " + name + ".dead", url: c1.amqpURL,
		from: []string{name + ".dead"}, queues: []string{name, name + ".dead"},
		strike: func() faultRun {
			return nodeDownMove(t, c2, fp, offset, func() (string, error) {
				moved, err := client.Move(ctx, redrive)
				if me := (*mover.MoveError)(nil); !errors.As(err, &me) || moved != me.Moved {
					t.Errorf("the redrive with %s stopped: moved %d, %v; want a *mover.MoveError", c2.name, moved, err)
				}
				return fmt.Sprint(err), err
			})
		},
		back: func() {
			c2.ctl(t, "start_app")
			waitState(t, via1, name+".dead", true)
		},
		rerun: func() string {
			again, err := client.Move(ctx, redrive)
			if err != nil {
				t.Errorf("the redrive once %s is back: %v", c2.name, err)
			}
			return fmt.Sprintf("rerun moved %d", again)
		},
	}.run(t)
}

func nodeDownRedeclare(t *testing.T, c1, c2 testNode, offset int64, seed uint64) {
	name := uniqueName("nd-redecl")
	via1 := c1.client(t, -1)
	t.Cleanup(func() { deleteQueuesWithPrefix(via1, "/", name) })
	// Declared through c2's management API, q and q.dead live on c2.
	tf := newRedeclareCLI(t, name, fmt.Sprintf("  endpoint = %q\n", c2.endpoint)+credentials)
	tf.configure("  message_ttl = \"1h\"\n  max_priority = 5\n")
	tf.mustRun("apply", "-auto-approve")
	if q := waitState(t, via1, name, true); q.Node != c2.erlang {
		t.Fatalf("%s lives on %s, want %s", name, q.Node, c2.erlang)
	}
	publishConfirmed(t, amqpChannelAt(t, c2.amqpURL), name, faultMoveN, jobMessage)

	// The change talks to c1, through the proxies.
	fp := newFaultProxies(t, c1.amqpURL, c1.endpoint)
	tf.provider = fp.provider + credentials
	tf.configure(newSettings + "  keep_messages_on_change = true\n")
	holding := topology.RedeclaringQueueName(name)
	faultedMove{faultCase: nodeDownCase(c2, name, offset), seed: seed, move: "redeclare (move aside)",
		says: "RabbitMQ cancelled the consumer of " + name, url: c1.amqpURL,
		from: []string{name, holding}, queues: []string{name, holding, name + ".dead"},
		strike: func() faultRun {
			return nodeDownMove(t, c2, fp, offset, func() (string, error) { return tf.run("apply", "-auto-approve") })
		},
		back: func() {
			c2.ctl(t, "start_app")
			waitState(t, via1, name, true)
		},
		rerun: func() string {
			tf.mustRun("apply", "-auto-approve")
			return "rerun finished the change"
		},
		check: func() {
			if q, err := via1.GetQueue(context.Background(), "/", name, broker.Declared); err != nil {
				t.Error(err)
			} else if err := declaredAs(q, newTable); err != nil {
				t.Error(err)
			}
		},
	}.run(t)
}
