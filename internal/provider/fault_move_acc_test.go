package provider

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/redact"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The fault tests run every message move of the provider -- the redrive
// action, and the move aside and back of a re-declared q -- through a TCP
// fault proxy (brokertest.FaultProxy) in front of both the AMQP port and the
// management API, and account for every message after it. The fault strikes
// at a random byte offset of the move's AMQP connection (from a seed they
// print, QUEUEY_FAULT_SEED repeats it): inside the move whatever the
// machine's speed. A fault that breaks the connection stops the move within
// its bound with an error saying how many moved and where the rest wait;
// running it again finishes the move; then every queue involved is read to
// its end, and no message id may be missing. Each prints one line,
// "==> fault ...", which the acceptance run repeats after the stage.

// faultMoveN is the number of messages of each faulted move.
const faultMoveN = 5000

// faultCase is one fault of the table.
type faultCase struct {
	name, what string // what: the fault, as the table line names it
	fault      brokertest.Fault
	// bound is how long after the strike the move may take to stop with an
	// error; 0: the move rides through the fault and ends with no error.
	bound time.Duration
}

// faultCases are the faults of the table, their offsets drawn from rng.
// Their bounds: a reset is seen at once (the close of the connection plus
// the CLI's own end); a half-open connection is given up by the move's
// stall bound (15 s without a delivery or a confirm, checked every second)
// and the wait for the broker's close-ok (5 s) once the move runs, and by
// the AMQP heartbeat's read deadline (3 x 10 s) while it sets up (the
// consumer's consume-ok may follow the first deliveries).
func faultCases(rng *rand.Rand) []faultCase {
	offset := func() int64 { return 32<<10 + rng.Int64N(600<<10) }
	return []faultCase{
		{"reset", "reset", brokertest.Fault{Kind: brokertest.FaultReset, After: offset()}, 10 * time.Second},
		{"latency", "latency 200ms", brokertest.Fault{Kind: brokertest.FaultLatency, After: offset(), All: true, Latency: 200 * time.Millisecond}, 0},
		{"halfopen", "half-open", brokertest.Fault{Kind: brokertest.FaultHalfOpen, After: offset()}, 35 * time.Second},
		{"bandwidth", "bandwidth 256 KiB/s", brokertest.Fault{Kind: brokertest.FaultBandwidth, After: offset(), All: true, Rate: 256 << 10}, 0},
	}
}

// faultSeed is QUEUEY_FAULT_SEED, else one drawn once for the test binary.
func faultSeed(t *testing.T) uint64 {
	n, err := strconv.ParseUint(cmp.Or(os.Getenv("QUEUEY_FAULT_SEED"), strconv.FormatUint(drawnSeed(), 10)), 10, 64)
	if err != nil {
		t.Fatalf("QUEUEY_FAULT_SEED: %v", err)
	}
	return n
}

var drawnSeed = sync.OnceValue(func() uint64 { return uint64(time.Now().UnixNano()) })

// faultProxies are fault proxies in front of the AMQP port and the
// management API of a broker, closed at cleanup; provider is the provider
// block's body that talks to the broker through them.
type faultProxies struct {
	amqp, mgmt *brokertest.FaultProxy
	provider   string
}

// newFaultProxies starts the proxies in front of the broker at amqpURL and
// endpoint.
func newFaultProxies(t *testing.T, amqpURL, endpoint string) faultProxies {
	t.Helper()
	start := func(raw string) (*brokertest.FaultProxy, string) { // the proxy, and the URL that reaches raw through it
		u := orFatal(url.Parse(raw))(t)
		p := orFatal(brokertest.NewFaultProxy(u.Host))(t)
		t.Cleanup(p.Close)
		return p, u.Scheme + "://" + p.Addr
	}
	a, aURL := start(amqpURL)
	m, mURL := start(endpoint)
	return faultProxies{amqp: a, mgmt: m, provider: fmt.Sprintf("  endpoint      = %q\n  amqp_endpoint = %q\n", mURL, aURL)}
}

// faultRun is what the faulted run of a move saw.
type faultRun struct {
	out     string
	err     error
	elapsed time.Duration // from the strike (or the resume, see atStrike) to the end of the command
	note    string        // for the table line, after the outcome
	// unsaid (from atStrike) is why the error need not say what says names:
	// "" holds it to it.
	unsaid string
}

// strike runs the move with its fault armed on the AMQP proxy (a latency or
// a bandwidth limit slows every request of the management API too), and
// heals the proxies after; the fault must strike. With atStrike, the fault
// pauses the connection, which resumes once atStrike returned the note of
// the table line.
func (m faultedMove) strike(t *testing.T) (r faultRun) {
	t.Helper()
	m.fp.amqp.Arm(m.fault)
	if k := m.fault.Kind; k == brokertest.FaultLatency || k == brokertest.FaultBandwidth {
		m.fp.mgmt.Arm(brokertest.Fault{Kind: k, All: true, Latency: m.fault.Latency, Rate: m.fault.Rate})
	}
	done := make(chan struct{})
	defer func() { <-done }() // should atStrike fail the test, the move still ends first, healed
	defer m.fp.mgmt.Heal()
	defer m.fp.amqp.Heal()
	go func() {
		defer close(done)
		r.out, r.err = m.cmd()
	}()
	select {
	case <-m.fp.amqp.Struck():
	case <-done:
	}
	from := m.fp.amqp.StruckAt() // zero: the move ended first
	if from.IsZero() {
		t.Fatalf("%s: the fault never struck (offset %d, skip %d): %v\n%s", m.name, m.fault.After, m.fault.Skip, r.err, r.out)
	}
	if m.atStrike != nil {
		r.note, r.unsaid = m.atStrike()
		from = time.Now()
		m.fp.amqp.Heal()
	}
	<-done
	r.elapsed = time.Since(from)
	return r
}

// faultedMove is one move of 5,000 messages through a fault: cmd runs it
// (see strike). A move that rides through (bound 0) must succeed and say
// done; one that stops must fail within the bound saying how many moved,
// where the rest wait, and says; then back (nil: nothing) undoes the fault,
// and cmd runs again and must finish the move (a redrive, which says done,
// says how many it moved). Last, check (nil: nothing) looks at the queues,
// and no message of the queues may be missing.
type faultedMove struct {
	faultCase
	seed         uint64
	move         string   // as the table line names it
	done, says   string   // what the move's output says besides the counts ("": nothing)
	url          string   // the AMQP URL of the queues' vhost
	from, queues []string // the queues the move takes from; every queue a message may be on
	fp           faultProxies
	cmd          func() (string, error)
	atStrike     func() (note, unsaid string)
	back, check  func()
}

var (
	stoppedRe = regexp.MustCompile(`moved\s+(\d+)\s+of\s+(\d+)\s+messages\s+from\s+(\S+)\s+to\s+(\S+)\s+in\s+vhost`)
	restRe    = regexp.MustCompile(`The\s+other\s+(\d+)\s+stay\s+on\s+(\S+?):`)
	movedRe   = regexp.MustCompile(`moved\s+(\d+)\s+messages\s+from`)
)

// run runs the move through its fault, checks it, accounts for every
// message and prints its table line, "==> fault ...".
func (m faultedMove) run(t *testing.T) {
	t.Helper()
	r := m.strike(t)
	outcome, rerun := fmt.Sprintf("moved %d, no error, done %.1fs after the fault", faultMoveN, r.elapsed.Seconds()), "no rerun"
	if m.bound == 0 && (r.err != nil || !saysWords(r.out, m.done)) {
		t.Errorf("%s: the move failed, or does not say %q: %v\n%s", m.name, m.done, r.err, r.out)
	} else if m.bound > 0 {
		if outcome = m.stopped(t, r); r.unsaid != "" {
			t.Logf("%s: the error need not say %q: %s", m.name, m.says, r.unsaid)
		} else if !saysWords(r.out, m.says) {
			t.Errorf("%s: the error does not say %q:\n%s", m.name, m.says, r.out)
		}
		if m.back != nil {
			m.back()
		}
		waitFor(t, "the faulted connection's consumer to go", func() bool { // the broker requeued what it held
			consumers := 0
			err := eachQueue(m.url, m.from, func(q amqp.Queue, _ *amqp.Channel) { consumers += q.Consumers })
			return err == nil && consumers == 0
		})
		out, err := m.cmd()
		switch moved := movedRe.FindStringSubmatch(out); {
		case err != nil:
			t.Errorf("%s: the rerun failed: %v\n%s", m.name, err, out)
		case m.done == "":
			rerun = "rerun finished the change"
		case moved != nil:
			rerun = "rerun moved " + moved[1]
		case saysWords(out, "nothing to move"):
			rerun = "rerun moved 0"
		default:
			t.Errorf("%s: the rerun does not say what it moved:\n%s", m.name, out)
		}
	}
	if m.check != nil {
		m.check()
	}
	var read [][]amqp.Delivery // of the queues that exist: a missing one counts as empty
	if err := eachQueue(m.url, m.queues, func(q amqp.Queue, ch *amqp.Channel) { read = append(read, readBack(t, ch, q.Name)) }); err != nil {
		t.Fatalf("reading %v back at %s: %v", m.queues, redact.URL(m.url), err)
	}
	dups, missing, unexpected := tally(faultMoveN, read...)
	if len(unexpected) > 0 {
		t.Errorf("unexpected message ids: %v", unexpected)
	}
	// The broker as the acceptance run names it, else by its endpoint.
	brokerName := "RabbitMQ " + cmp.Or(os.Getenv("BROKER_VERSION"), "at "+redact.URL(os.Getenv(EnvEndpoint)))
	fmt.Printf("==> fault %s@offset %d (seed %d) × %s %d × %s: %s%s; %s; duplicates %d, lost %d\n", m.what, m.fault.After, m.seed,
		m.move, faultMoveN, brokerName, outcome, r.note, rerun, dups, len(missing))
	if len(missing) > 0 {
		t.Errorf("%d messages lost", len(missing))
	}
}

// stopped checks the run of a fault that breaks the connection: it failed
// within the bound, saying how many moved and where the rest wait; it
// returns the outcome of the table line.
func (m faultedMove) stopped(t *testing.T, r faultRun) string {
	t.Helper()
	if r.err == nil {
		t.Errorf("%s: the run did not fail:\n%s", m.name, r.out)
		return "no error"
	}
	errs := r.out[max(strings.Index(r.out, "Error:"), 0):] // from the CLI's first error on
	t.Logf("%s: the faulted run prints:\n%s", m.name, errs)
	moved, rest := stoppedRe.FindStringSubmatch(errs), restRe.FindStringSubmatch(errs)
	if moved == nil || rest == nil {
		t.Errorf("%s: the error does not say how many moved and where the rest wait:\n%s", m.name, r.out)
		return "error without counts"
	}
	if r.elapsed > m.bound {
		t.Errorf("%s: the error came %.1fs after the fault, past the bound %s:\n%s", m.name, r.elapsed.Seconds(), m.bound, r.out)
	}
	return fmt.Sprintf("moved %s of %s then error after %.2fs (bound %s), the other %s wait on %s", moved[1], moved[2],
		r.elapsed.Seconds(), m.bound, rest[1], rest[2])
}

// eachQueue calls f with the state of each queue of queues that exists at
// the AMQP URL u (with its vhost) and a channel of its own on one
// connection: the passive declaration of a missing queue closes its
// channel.
func eachQueue(u string, queues []string, f func(amqp.Queue, *amqp.Channel)) error {
	conn, err := amqp.Dial(u)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	for _, name := range queues {
		ch, err := conn.Channel()
		if err != nil {
			return err
		}
		if q, err := ch.QueueDeclarePassive(name, true, false, false, false, nil); err == nil {
			f(q, ch)
		}
	}
	return nil
}

// TestAccFaultMove_redrive runs the redrive action (terraform apply
// -invoke) of 5,000 dead letters through each fault, then again with none.
func TestAccFaultMove_redrive(t *testing.T) {
	testAccPreCheck(t)
	seed := faultSeed(t)
	for _, c := range faultCases(rand.New(rand.NewPCG(seed, 1))) {
		t.Run(c.name, func(t *testing.T) {
			needsCLI(t, featureActions)
			t.Parallel()
			name := actionTopology(t, "fault-"+c.name)
			fp := newFaultProxies(t, amqpURL(""), os.Getenv(EnvEndpoint))
			tf := newTerraformCLI(t, requiredQueuey+"\nprovider \"queuey\" {\n"+fp.provider+"}\n"+redriveBlock(name, ""))
			publishDead(t, amqpChannel(t, "/"), name, faultMoveN, nil)
			faultedMove{faultCase: c, seed: seed, move: "redrive", done: fmt.Sprintf("moved %d messages from", faultMoveN), url: amqpURL("/"),
				from:   []string{name + ".dead"},
				queues: []string{name, name + ".dead", name + ".deferred.600000", topology.RedeclaringQueueName(name)},
				fp:     fp, cmd: func() (string, error) {
					return tf.run("apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r")
				},
				check: func() {
					if n := messagesIn(t, "/", name+".dead"); n != 0 {
						t.Errorf("%s.dead holds %d messages after the move", name, n)
					}
				},
			}.run(t)
		})
	}
}

// TestAccFaultMove_redeclare changes the message_ttl and max_priority of a
// queue holding 5,000 messages, with keep_messages_on_change, through each
// fault (striking the move aside or the move back, as the seed picks), then
// applies again with none.
func TestAccFaultMove_redeclare(t *testing.T) {
	testAccPreCheck(t)
	seed := faultSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	for _, c := range faultCases(rng) {
		c.fault.Skip = rng.IntN(2)
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			name := uniqueName("fault-redecl-" + c.name)
			cleanupQueues(t, "/", name)
			fp := newFaultProxies(t, amqpURL(""), os.Getenv(EnvEndpoint))
			tf := newRedeclareCLI(t, name, fp.provider)
			tf.configure("  message_ttl = \"1h\"\n  max_priority = 5\n")
			tf.mustRun("apply", "-auto-approve")
			publishConfirmed(t, amqpChannel(t, "/"), name, faultMoveN, jobMessage)
			tf.configure(newSettings + "  keep_messages_on_change = true\n")
			holding := topology.RedeclaringQueueName(name)
			faultedMove{faultCase: c, seed: seed, move: "redeclare (fault in the move " + [...]string{"aside", "back"}[c.fault.Skip] + ")",
				says: "Nothing is lost: the messages not moved back wait in " + holding, url: amqpURL("/"),
				from: []string{name, holding}, queues: []string{name, holding, name + ".dead"},
				fp: fp, cmd: func() (string, error) { return tf.run("apply", "-auto-approve") },
				check: func() {
					if err := declaredAs(getQueue(t, name), newTable); err != nil {
						t.Error(err)
					}
					if queueExists(t, "/", holding) {
						t.Errorf("%s is left after the change", holding)
					}
				},
			}.run(t)
		})
	}
}
