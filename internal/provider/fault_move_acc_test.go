package provider

import (
	"errors"
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
	name  string
	fault brokertest.Fault
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
		{name: "reset", fault: brokertest.Fault{Kind: brokertest.FaultReset, After: offset()}, bound: 10 * time.Second},
		{name: "latency", fault: brokertest.Fault{Kind: brokertest.FaultLatency, After: offset(), All: true, Latency: 200 * time.Millisecond}},
		{name: "halfopen", fault: brokertest.Fault{Kind: brokertest.FaultHalfOpen, After: offset()}, bound: 35 * time.Second},
		{name: "bandwidth", fault: brokertest.Fault{Kind: brokertest.FaultBandwidth, After: offset(), All: true, Rate: 256 << 10}},
	}
}

// faultSeed is QUEUEY_FAULT_SEED, else one drawn once for the test binary.
func faultSeed(t *testing.T) uint64 {
	if s := os.Getenv("QUEUEY_FAULT_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("QUEUEY_FAULT_SEED: %v", err)
		}
		return n
	}
	return drawnSeed()
}

var drawnSeed = sync.OnceValue(func() uint64 { return uint64(time.Now().UnixNano()) })

// faultProxies are fault proxies in front of the AMQP port and the
// management API of the broker at amqpURL and endpoint, closed at cleanup;
// provider is the provider block's body that talks to the broker through
// them.
type faultProxies struct {
	amqp, mgmt *brokertest.FaultProxy
	provider   string
}

func newFaultProxies(t *testing.T, amqpURL, endpoint string) faultProxies {
	t.Helper()
	au, aerr := url.Parse(amqpURL)
	mu, merr := url.Parse(endpoint)
	if err := errors.Join(aerr, merr); err != nil {
		t.Fatal(err)
	}
	proxy := func(host string) *brokertest.FaultProxy {
		p, err := brokertest.NewFaultProxy(host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	fp := faultProxies{amqp: proxy(au.Host), mgmt: proxy(mu.Host)}
	fp.provider = fmt.Sprintf("  endpoint      = %q\n  amqp_endpoint = %q\n", mu.Scheme+"://"+fp.mgmt.Addr, au.Scheme+"://"+fp.amqp.Addr)
	return fp
}

// arm arms f on the AMQP proxy; a latency or a bandwidth limit also slows
// every request of the management API.
func (fp faultProxies) arm(f brokertest.Fault) {
	fp.amqp.Arm(f)
	if f.Kind == brokertest.FaultLatency || f.Kind == brokertest.FaultBandwidth {
		g := f
		g.After, g.Skip, g.All = 0, 0, true
		fp.mgmt.Arm(g)
	}
}

func (fp faultProxies) heal() {
	fp.amqp.Heal()
	fp.mgmt.Heal()
}

// faultRun is what one faulted run saw.
type faultRun struct {
	out     string
	err     error
	struck  bool
	elapsed time.Duration // from the strike to the end of the command
}

// runFaulted runs the CLI with the fault armed, and heals the proxies after.
func runFaulted(tf *terraformCLI, fp faultProxies, f brokertest.Fault, args ...string) faultRun {
	fp.arm(f)
	out, err := tf.run(args...)
	end := time.Now()
	r := faultRun{out: out, err: err}
	select {
	case <-fp.amqp.Struck():
		r.struck, r.elapsed = true, end.Sub(fp.amqp.StruckAt())
	default:
	}
	fp.heal()
	return r
}

var (
	stoppedRe = regexp.MustCompile(`moved\s+(\d+)\s+of\s+(\d+)\s+messages\s+from\s+(\S+)\s+to\s+(\S+)\s+in\s+vhost`)
	restRe    = regexp.MustCompile(`The\s+other\s+(\d+)\s+stay\s+on\s+(\S+?):`)
	movedRe   = regexp.MustCompile(`moved\s+(\d+)\s+messages\s+from`)
)

// checkStopped checks the run of a fault that breaks the connection: it
// failed within the bound, saying how many moved and where the rest wait;
// it returns the phrase of the table line.
func checkStopped(t *testing.T, c faultCase, r faultRun) string {
	t.Helper()
	if r.err == nil {
		t.Errorf("%s: the run did not fail:\n%s", c.name, r.out)
		return "no error"
	}
	t.Logf("%s: the faulted run prints:\n%s", c.name, errorPart(r.out))
	m, rest := stoppedRe.FindStringSubmatch(errorPart(r.out)), restRe.FindStringSubmatch(errorPart(r.out))
	if m == nil || rest == nil {
		t.Errorf("%s: the error does not say how many moved and where the rest wait:\n%s", c.name, r.out)
		return "error without counts"
	}
	if r.elapsed > c.bound {
		t.Errorf("%s: the error came %.1fs after the fault, past the bound %s:\n%s", c.name, r.elapsed.Seconds(), c.bound, r.out)
	}
	return fmt.Sprintf("moved %s of %s then error after %.2fs (bound %s), the other %s wait on %s", m[1], m[2],
		r.elapsed.Seconds(), c.bound, rest[1], rest[2])
}

// errorPart is the CLI output from its first error on.
func errorPart(out string) string {
	if i := strings.Index(out, "Error:"); i >= 0 {
		return out[i:]
	}
	return out
}

// faultLine prints the table line of one run.
func faultLine(c faultCase, seed uint64, move, broker, outcome, rerun string, dups, lost int) {
	what := c.fault.Kind.String()
	switch c.fault.Kind {
	case brokertest.FaultLatency:
		what += " " + c.fault.Latency.String()
	case brokertest.FaultBandwidth:
		what += fmt.Sprintf(" %d KiB/s", c.fault.Rate>>10)
	}
	fmt.Printf("==> fault %s@offset %d (seed %d) × %s %d × %s: %s; %s; duplicates %d, lost %d\n", what, c.fault.After, seed, move,
		faultMoveN, broker, outcome, rerun, dups, lost)
}

// brokerLabel names the test broker as the acceptance run does.
func brokerLabel() string {
	if v := os.Getenv("BROKER_VERSION"); v != "" {
		return "RabbitMQ " + v
	}
	return "RabbitMQ at " + redact.URL(os.Getenv(EnvEndpoint))
}

// account reads every queue of queues to its end through ch (a missing
// one counts as empty) and counts the message ids m-000000 to
// m-(faultMoveN-1): duplicates (copies beyond the first), lost (none), and
// unexpected ids.
func account(t *testing.T, u string, queues ...string) (dups, lost int) {
	t.Helper()
	var counts []map[string]int
	for _, q := range queues {
		if queueExistsAt(t, u, q) {
			counts = append(counts, idCounts(readBack(t, amqpChannelAt(t, u), q)))
		}
	}
	dups, missing, unexpected := tally(faultMoveN, counts...)
	if len(unexpected) > 0 {
		t.Errorf("unexpected message ids: %v", unexpected)
	}
	return dups, len(missing)
}

// queueExistsAt says whether queue exists, by a passive declaration through
// the AMQP URL u (with its vhost).
func queueExistsAt(t *testing.T, u, queue string) bool {
	t.Helper()
	_, err := amqpChannelAt(t, u).QueueDeclarePassive(queue, true, false, false, false, nil)
	return err == nil
}

// waitNoConsumer waits until no consumer is left on the queues that exist:
// the broker has requeued what the faulted move's connection held.
func waitNoConsumer(t *testing.T, u string, queues ...string) {
	t.Helper()
	waitFor(t, "the faulted connection's consumer to go", func() bool {
		for _, q := range queues {
			conn, err := amqp.Dial(u)
			if err != nil {
				return false
			}
			ch, err := conn.Channel()
			if err != nil {
				_ = conn.Close()
				return false
			}
			info, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
			_ = conn.Close()
			if err == nil && info.Consumers > 0 {
				return false
			}
		}
		return true
	})
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
			faultRedrive(t, c, seed)
		})
	}
}

func faultRedrive(t *testing.T, c faultCase, seed uint64) {
	name := actionTopology(t, "fault-"+c.name)
	fp := newFaultProxies(t, amqpURL(""), os.Getenv(EnvEndpoint))
	tf := actionCLI(t, "")
	tf.writeConfig(requiredQueuey + "\n" +
		"provider \"queuey\" {\n" + fp.provider + "}\n" + redriveBlock(name, ""))
	publishDead(t, amqpChannel(t, "/"), name, faultMoveN, nil)

	invoke := []string{"apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r"}
	r := runFaulted(tf, fp, c.fault, invoke...)
	if !r.struck {
		t.Fatalf("the fault never struck (offset %d):\n%s", c.fault.After, r.out)
	}
	var outcome, rerun string
	if c.bound > 0 {
		outcome = checkStopped(t, c, r)
		waitNoConsumer(t, amqpURL("/"), name+".dead")
		out := tf.mustRun(invoke...)
		m := movedRe.FindStringSubmatch(out)
		if m == nil && !saysWords(out, "nothing to move") {
			t.Errorf("the rerun does not say what it moved:\n%s", out)
		}
		rerun = "rerun moved 0"
		if m != nil {
			rerun = "rerun moved " + m[1]
		}
	} else {
		if r.err != nil || !saysWords(r.out, fmt.Sprintf("moved %d messages from", faultMoveN)) {
			t.Errorf("the move through %s failed: %v\n%s", c.name, r.err, r.out)
		}
		outcome = fmt.Sprintf("moved %d, no error, done %.1fs after the fault", faultMoveN, r.elapsed.Seconds())
		rerun = "no rerun"
	}
	if n := messagesIn(t, "/", name+".dead"); n != 0 {
		t.Errorf("%s.dead holds %d messages after the move", name, n)
	}
	dups, lost := account(t, amqpURL("/"), name, name+".dead", name+".deferred.600000", topology.RedeclaringQueueName(name))
	faultLine(c, seed, "redrive", brokerLabel(), outcome, rerun, dups, lost)
	if lost > 0 {
		t.Errorf("%d messages lost", lost)
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
			faultRedeclare(t, c, seed)
		})
	}
}

func faultRedeclare(t *testing.T, c faultCase, seed uint64) {
	name := uniqueName("fault-redecl-" + c.name)
	cleanupQueues(t, "/", name)
	fp := newFaultProxies(t, amqpURL(""), os.Getenv(EnvEndpoint))
	tf := newRedeclareCLI(t, name, fp.provider)
	tf.configure("  message_ttl = \"1h\"\n  max_priority = 5\n")
	tf.mustRun("apply", "-auto-approve")
	publishConfirmed(t, amqpChannel(t, "/"), name, faultMoveN, jobMessage)
	tf.configure(newSettings + "  keep_messages_on_change = true\n")

	r := runFaulted(tf.terraformCLI, fp, c.fault, "apply", "-auto-approve")
	if !r.struck {
		t.Fatalf("the fault never struck (offset %d, skip %d):\n%s", c.fault.After, c.fault.Skip, r.out)
	}
	holding := topology.RedeclaringQueueName(name)
	move := [...]string{"aside", "back"}[c.fault.Skip]
	var outcome, rerun string
	if c.bound > 0 {
		outcome = checkStopped(t, c, r)
		if !saysWords(r.out, "Nothing is lost: the messages not moved back wait in "+holding) {
			t.Errorf("the interrupted apply does not say where the messages wait:\n%s", r.out)
		}
		waitNoConsumer(t, amqpURL("/"), name, holding)
		tf.mustRun("apply", "-auto-approve")
		rerun = "rerun finished the change"
	} else {
		if r.err != nil {
			t.Errorf("the change through %s failed: %v\n%s", c.name, r.err, r.out)
		}
		outcome = fmt.Sprintf("moved %d aside and back, no error, done %.1fs after the fault", faultMoveN, r.elapsed.Seconds())
		rerun = "no rerun"
	}
	if err := declaredAs(getQueue(t, name), newTable); err != nil {
		t.Error(err)
	}
	if queueExists(t, "/", holding) {
		t.Errorf("%s is left after the change", holding)
	}
	dups, lost := account(t, amqpURL("/"), name, holding, name+".dead")
	faultLine(c, seed, "redeclare (fault in the move "+move+")", brokerLabel(), outcome, rerun, dups, lost)
	if lost > 0 {
		t.Errorf("%d messages lost", lost)
	}
}
