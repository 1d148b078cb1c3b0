package provider

import (
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

// heldTooLong is how long a held connection may be held and the move still
// be held to name RabbitMQ's cancel of its consumer as the cause: a move
// gives up a connection that carries nothing for 15 s (its stall bound, and
// amqp091-go's read deadline of three half heartbeats), and the connection
// is held while stop_app runs, which a loaded machine can make that long.
// The move then stops all the same, saying how many moved and where the rest
// wait, and the test checks that. (10 s leaves room for what the clock of the
// move counted before the strike; stop_app takes about a second.)
const heldTooLong = 10 * time.Second

// TestAccCluster_faultMoveNodeDownRedrive and
// TestAccCluster_faultMoveNodeDownRedeclare stop, mid-move, the node of a
// 3-node cluster that hosts the queue the move takes from -- q.dead for the
// redrive, q for the move aside of a re-declaration -- while the move talks
// to another node; then start it again. The move stops within
// nodeDownBound saying how many moved and where the rest wait, running it
// again finishes it, and every message is accounted for. (The resil stage's
// Terraform has no actions: the redrive runs on the client the action
// calls, mover.Mover.Move, through the same proxies.)
func TestAccCluster_faultMoveNodeDownRedrive(t *testing.T) {
	nodes := resilNodes(t, envClusterNodes, 3)
	c1, c2 := nodes[0], nodes[1]
	name := uniqueName("nd-redrive")
	via1, via2 := c1.client(t, -1), c2.client(t, -1)
	t.Cleanup(func() { deleteQueuesWithPrefix(via1, "/", name) })
	if err := errors.Join(via1.DeclareQueue(t.Context(), "/", name, map[string]any{"x-message-ttl": 3600000}),
		via2.DeclareQueue(t.Context(), "/", name+".dead", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	m := nodeDown(t, c1, c2, name+".dead", 3)
	publishDead(t, amqpChannelAt(t, c2.amqpURL), name, faultMoveN, nil)
	proxied := c1 // the management API through the proxy, with the default retry budget
	proxied.endpoint = "http://" + m.fp.mgmt.Addr
	client := moverOf(t, proxied.client(t, 0), "amqp://"+m.fp.amqp.Addr)
	redrive := mover.Move{Vhost: "/", From: name + ".dead", To: name}
	m.move, m.done, m.from, m.queues = "redrive", fmt.Sprintf("moved %d messages from", faultMoveN), []string{name + ".dead"}, []string{name, name + ".dead"}
	runs := 0
	m.cmd = func() (string, error) { // says, as the action does, how many it moved
		moved, err := client.Move(t.Context(), redrive)
		if runs++; err == nil {
			return fmt.Sprintf("moved %d messages from %s", moved, redrive.From), nil
		}
		if me := (*mover.MoveError)(nil); runs == 1 && (!errors.As(err, &me) || moved != me.Moved) {
			t.Errorf("the redrive through the stop of %s: moved %d, %v; want a *mover.MoveError", c2.name, moved, err)
		}
		return fmt.Sprint(err), err
	}
	m.run(t)
}

// TestAccCluster_faultMoveNodeDownRedeclare: see above; the strike's offset
// comes from stream 4 of the seed (the redrive's from stream 3).
func TestAccCluster_faultMoveNodeDownRedeclare(t *testing.T) {
	nodes := resilNodes(t, envClusterNodes, 3)
	c1, c2 := nodes[0], nodes[1]
	name := uniqueName("nd-redecl")
	via1 := c1.client(t, -1)
	t.Cleanup(func() { deleteQueuesWithPrefix(via1, "/", name) })
	// Declared through c2's management API, q and q.dead live on c2.
	tf := newRedeclareCLI(t, name, fmt.Sprintf("  endpoint = %q\n", c2.endpoint)+credentials)
	tf.configure("  message_ttl = \"1h\"\n  max_priority = 5\n")
	tf.mustRun("apply", "-auto-approve")
	m := nodeDown(t, c1, c2, name, 4)
	publishConfirmed(t, amqpChannelAt(t, c2.amqpURL), name, faultMoveN, jobMessage)
	// The change talks to c1, through the proxies.
	tf.provider = m.fp.provider + credentials
	tf.configure(newSettings + "  keep_messages_on_change = true\n")
	holding := topology.RedeclaringQueueName(name)
	m.move, m.from, m.queues = "redeclare (move aside)", []string{name, holding}, []string{name, holding, name + ".dead"}
	m.cmd = func() (string, error) { return tf.run("apply", "-auto-approve") }
	m.check = func() {
		q, err := via1.GetQueue(t.Context(), "/", name, broker.Declared)
		if err == nil {
			err = declaredAs(q, newTable)
		}
		if err != nil {
			t.Error(err)
		}
	}
	m.run(t)
}

// nodeDown is the fault of the cluster's moves: once the move's AMQP
// connection (through the proxies it starts in front of c1) reaches an
// offset drawn from the fault seed's stream, it is paused, node c2, which
// hosts the queue hosted the move takes from, stopped, and the connection
// resumed; back starts c2 again (and so does the test's cleanup). It checks
// first that hosted lives on c2.
func nodeDown(t *testing.T, c1, c2 testNode, hosted string, stream uint64) faultedMove {
	t.Helper()
	via1, seed := c1.client(t, -1), faultSeed(t)
	t.Cleanup(func() { _ = c2.ctl("start_app") })
	if q := waitState(t, via1, hosted, true); q.Node != c2.erlang {
		t.Fatalf("%s lives on %s, want %s", hosted, q.Node, c2.erlang)
	}
	offset := 32<<10 + rand.New(rand.NewPCG(seed, stream)).Int64N(600<<10)
	fp := newFaultProxies(t, c1.amqpURL, c1.endpoint)
	return faultedMove{
		faultCase: faultCase{name: "stop_app", what: fmt.Sprintf("stop_app of %s (hosts %s) in a 3-node cluster", c2.name, hosted),
			fault: brokertest.Fault{Kind: brokertest.FaultPause, After: offset}, bound: nodeDownBound},
		seed: seed, says: "RabbitMQ cancelled the consumer of " + hosted, url: c1.amqpURL,
		fp: fp,
		atStrike: func() (note, unsaid string) {
			start := time.Now()
			fatalOn(t, c2.ctl("stop_app"))
			if held := time.Since(fp.amqp.StruckAt()); held >= heldTooLong {
				unsaid = fmt.Sprintf("the connection was held %s while stop_app ran, and a move gives up a silent connection after 15 s", held.Round(time.Millisecond))
			}
			return fmt.Sprintf(" (stop_app took %.1fs)", time.Since(start).Seconds()), unsaid
		},
		back: func() {
			fatalOn(t, c2.ctl("start_app"))
			waitState(t, via1, hosted, true)
		},
	}
}
