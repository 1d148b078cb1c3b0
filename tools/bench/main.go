// Command bench measures terraform-provider-queuey against the floors of its targets: N
// queuey_queue, N noop_writes (tools/bench/noop: only the writes no provider can skip), N
// noop_queue (a plugin doing nothing) and N terraform_data go through apply, plan, refresh and
// destroy, interleaved run after run (with -peer, rabbitmq_queue too). A counting proxy sits before
// the management API, and a shim records each provider's peak RSS and CPU. See
// tools/bench/README.md.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

type options struct {
	n           int
	runs        int
	parallelism int
	provider    string
	noop        string
	peer        string
	profile     bool
	profileTop  int
	terraform   string
	dir         string
	endpoint    string
	username    string
	password    string
	vhost       string
	ttl         string
	priority    int
	query       bool
	fill        int
	redrive     int
	change      int
	policies    int
}

func main() {
	if target := os.Getenv(envShimTarget); target != "" {
		runShim(target, os.Getenv(envShimLog))
	}
	var o options
	flag.IntVar(&o.n, "n", 300, "logical queues (and terraform_data resources) per run")
	flag.IntVar(&o.runs, "runs", 3, "runs of each kind; the table shows the median")
	flag.IntVar(&o.parallelism, "parallelism", 10, "terraform -parallelism")
	flag.StringVar(&o.provider, "provider", "build/terraform-provider-queuey", "the provider binary to measure")
	flag.StringVar(&o.noop, "noop", "build/bench/terraform-provider-noop", "the do-nothing provider binary (make bench builds it: cd tools && go build ./bench/noop)")
	flag.StringVar(&o.peer, "peer", "", "the binary of cyrilgdn/rabbitmq v1.10.1, to run rabbitmq_queue on the same topology and report queuey's speed-up (default: skipped)")
	flag.BoolVar(&o.profile, "profile", false, "have the providers write CPU profiles per phase (QUEUEY_CPUPROFILE) and print the top of each")
	flag.IntVar(&o.profileTop, "profile-top", 20, "lines of each profile's top to print")
	flag.StringVar(&o.terraform, "terraform", "terraform", "the terraform binary")
	flag.StringVar(&o.dir, "dir", "build/bench", "work directory (CLI config, state, logs)")
	flag.StringVar(&o.endpoint, "endpoint", os.Getenv("RABBITMQ_ENDPOINT"), "management API base URL (default $RABBITMQ_ENDPOINT)")
	flag.StringVar(&o.username, "username", envOr("RABBITMQ_USERNAME", "guest"), "management API user (default $RABBITMQ_USERNAME)")
	flag.StringVar(&o.password, "password", envOr("RABBITMQ_PASSWORD", "guest"), "management API password (default $RABBITMQ_PASSWORD)")
	flag.StringVar(&o.vhost, "vhost", "", "existing vhost to use (default: a fresh vhost made for this run and deleted after it)")
	flag.StringVar(&o.ttl, "message-ttl", "24h", "message_ttl of every queue")
	flag.IntVar(&o.priority, "max-priority", 10, "max_priority of every queue")
	flag.BoolVar(&o.query, "query", false, "measure `terraform query` (Terraform 1.14+) over a vhost of n logical queues instead")
	flag.IntVar(&o.fill, "fill", 0, "also run the queuey_queue resources in a second vhost holding this many unrelated queues (the crowded case), side by side")
	flag.IntVar(&o.redrive, "redrive", 0, "measure instead the redrive of this many dead letters by queuey_redrive_dead_letters's engine against a bare amqp091-go loop")
	flag.IntVar(&o.policies, "policies", 0, "put this many policies in the vhost (and the crowded one) first: one harmless policy on every queue, the others on names the bench never makes, so that every plan reads and matches them")
	flag.IntVar(&o.change, "change", 0, "measure instead a change of max_priority keeping this many messages of 1 KiB on q, by terraform apply of the provider against a bare amqp091-go loop")
	flag.Parse()
	if o.endpoint == "" {
		fmt.Fprintln(os.Stderr, "bench: no management API: set RABBITMQ_ENDPOINT or -endpoint (make bench runs scripts/broker-ready.sh first)")
		os.Exit(2)
	}
	if o.n < 1 || o.runs < 1 || o.parallelism < 1 || o.fill < 0 {
		fmt.Fprintln(os.Stderr, "bench: -n, -runs and -parallelism must be at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	do := run
	switch {
	case o.redrive > 0:
		do = runRedrive
	case o.change > 0:
		do = runChange
	}
	if err := do(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench: FAIL:", err)
		stop()
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func runID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("0102t1504") + hex.EncodeToString(b)
}

// withPaths makes o's work directory and provider binary absolute; an error when the binary is
// missing.
func (o options) withPaths() (options, error) {
	var err error
	if o.dir, err = filepath.Abs(o.dir); err != nil {
		return o, err
	}
	if o.provider, err = filepath.Abs(o.provider); err != nil {
		return o, err
	}
	if _, err := os.Stat(o.provider); err != nil {
		return o, fmt.Errorf("provider binary: %w (run make build)", err)
	}
	return o, nil
}

// withBinaries is withPaths with the do-nothing provider's binary, and the peer's when -peer names
// one, made absolute too; an error when one is missing. run needs all three before it makes anything.
func (o options) withBinaries() (options, error) {
	p, err := o.withPaths()
	if err != nil {
		return p, err
	}
	if p.noop, err = filepath.Abs(o.noop); err != nil {
		return p, err
	}
	if _, err := os.Stat(p.noop); err != nil {
		return p, fmt.Errorf("do-nothing provider binary: %w (cd tools && go build -o %s ./bench/noop)", err, o.noop)
	}
	if o.peer != "" {
		if p.peer, err = filepath.Abs(o.peer); err != nil {
			return p, err
		}
		if _, err := os.Stat(p.peer); err != nil {
			return p, fmt.Errorf("cyrilgdn/rabbitmq provider binary (-peer): %w", err)
		}
	}
	return p, nil
}

func run(ctx context.Context, o options) (err error) {
	e := env{id: runID()}
	if e.o, err = o.withBinaries(); err != nil {
		return err
	}
	if o.query {
		e.o.fill = 0
		e.o.peer = ""
	}
	done, err := e.open(ctx)
	if err != nil {
		return err
	}
	// From here on, every queue made is deleted.
	defer done(&err)
	if o.query {
		return runQuery(ctx, &e)
	}
	loadBefore := e.printHeader()
	results, err := e.runAll(ctx)
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Print(report(e, results, loadBefore, loadavg()))
	fmt.Print(peerReport(e, results))
	fmt.Print(crowdedReport(e, results))
	if e.profiles != "" {
		fmt.Print(e.profileTops(ctx))
	}
	// The work directory (state, logs) is kept only when something failed.
	_ = os.RemoveAll(filepath.Join(e.o.dir, e.id))
	return nil
}

// printHeader prints what this invocation runs and on what machine, and returns the load average
// read between the two, where the report's "load average before" has always been taken.
func (e *env) printHeader() (loadBefore string) {
	fmt.Printf("bench %s: N=%d, %d runs of each kind, -parallelism=%d, vhost %q, provider %s\n",
		e.id, e.o.n, e.o.runs, e.o.parallelism, e.vhost, e.o.provider)
	fmt.Printf("machine: %s\n", machineLine(e))
	loadBefore = loadavg()
	if e.crowded != "" {
		fmt.Printf("crowded case: the same %d queuey_queue in vhost %q, which also holds %d unrelated queues\n", e.o.n, e.crowded, e.o.fill)
	}
	if e.o.peer != "" {
		fmt.Printf("peer: %d logical queues as %d rabbitmq_queue of cyrilgdn/rabbitmq, binary %s\n", e.o.n, 2*e.o.n, e.o.peer)
	}
	return loadBefore
}

// runAll runs every kind o.runs times, interleaved (run 1 of each kind, then run 2, ...), printing
// each run's line as it ends, and returns the results by kind for the report.
func (e *env) runAll(ctx context.Context) (map[string][]runResult, error) {
	results := map[string][]runResult{}
	for r := 1; r <= e.o.runs; r++ {
		for _, kind := range e.runKinds() {
			res, err := e.runOnce(ctx, kind, r)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %w", kind, r, err)
			}
			results[kind] = append(results[kind], res)
			fmt.Println(res.line(e.o.n))
		}
	}
	return results, nil
}
