package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/plugintune"
)

const (
	kindQueuey = "queuey_queue"
	kindWrites = "noop_writes"    // the floor for apply and destroy: tools/bench/noop sending the broker writes
	kindNoop   = "noop_queue"     // the plugin floor (and plan's): tools/bench/noop doing nothing
	kindFloor  = "terraform_data" // Terraform's floor: no plugin at all
	kindPeer   = "rabbitmq_queue" // cyrilgdn/rabbitmq, the provider users migrate from (-peer)
)

// kinds run in this order in every run; rabbitmq_queue joins last when -peer gives its binary.
var kinds = []string{kindQueuey, kindWrites, kindNoop, kindFloor}

func (e *env) runKinds() []string {
	out := slices.Clone(kinds)
	if e.o.peer != "" {
		out = append(out, kindPeer)
	}
	if e.crowded != "" {
		out = slices.Insert(out, 1, kindCrowded)
	}
	return out
}

// touchesBroker says whether kind's resources are queues on the broker, checked after apply and
// destroy.
func touchesBroker(kind string) bool {
	return isQueuey(kind) || kind == kindWrites || kind == kindPeer
}

// namePrefix starts the queue names of kind's run r; no kind's prefix starts another's, so a check
// or clean-up never touches another kind's queues.
func (e *env) namePrefix(kind string, r int) string {
	switch kind {
	case kindWrites:
		return fmt.Sprintf("bench-%s-writes-r%d-", e.id, r)
	case kindPeer:
		return fmt.Sprintf("bench-%s-peer-r%d-", e.id, r)
	}
	return fmt.Sprintf("bench-%s-r%d-", e.id, r)
}

var phases = []string{"apply", "plan", "refresh", "destroy"}

// env is one bench invocation: the proxy, the shim, the broker and the vhost.
type env struct {
	o         options
	id        string
	vhost     string
	madeVhost bool
	// crowded is the vhost of the crowded case (-fill; see crowded.go), or "".
	crowded    string
	admin      *brokertest.Admin
	client     *broker.Client // lists and deletes the bench's queues
	proxy      *countingProxy
	rc         string
	shimLog    string
	shimOff    int64
	tfVersion  string
	brokerVer  string
	brokerPids []int
	profiles   string
	apiURL     string
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// setup readies everything a run needs, in this order: the broker's clients, what the report says
// of the machine, the vhosts, the counting proxy, and the CLI configuration that puts the shim in
// place of the providers. Whatever it made before an error, cleanup undoes.
func (e *env) setup(ctx context.Context) error {
	if err := e.connect(); err != nil {
		return err
	}
	if err := e.describe(ctx); err != nil {
		return err
	}
	if err := e.makeVhosts(ctx); err != nil {
		return err
	}
	var err error
	e.proxy, err = startProxy(e.o.endpoint)
	if err != nil {
		return err
	}
	e.apiURL = e.proxy.URL()
	return e.writeCLIConfig()
}

// connect makes the invocation's work directory and the clients the bench itself talks to the
// broker with (not through the proxy, so that they are not counted).
func (e *env) connect() error {
	var err error
	if err := os.MkdirAll(filepath.Join(e.o.dir, e.id), 0o755); err != nil {
		return err
	}
	e.client, err = broker.New(broker.Config{Endpoint: e.o.endpoint, Username: e.o.username, Password: e.o.password})
	if err != nil {
		return err
	}
	e.admin, err = brokertest.NewAdmin(e.o.endpoint, e.o.username, e.o.password, false)
	return err
}

// describe finds the versions of Terraform and the broker for the report, the broker's node
// processes whose CPU each phase measures, and where profiles go under -profile.
func (e *env) describe(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, e.o.terraform, "version").Output()
	if err != nil {
		return fmt.Errorf("%s version: %w", e.o.terraform, err)
	}
	e.tfVersion = strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "Terraform ")
	e.brokerVer = "unknown"
	if ov, err := e.admin.Overview(ctx); err == nil {
		e.brokerVer = ov.RabbitMQVersion + " (Erlang " + ov.ErlangVersion + ")"
	}
	pids, err := e.admin.NodePids(ctx)
	if err != nil {
		return fmt.Errorf("finding the broker's processes: %w", err)
	}
	for _, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			e.brokerPids = append(e.brokerPids, pid)
		}
	}
	if e.o.profile {
		e.profiles = filepath.Join(e.o.dir, "profiles-"+e.id)
	}
	return nil
}

// makeVhosts makes the run's vhost unless -vhost names one, the crowded vhost under -fill, and the
// -policies policies in each vhost the bench made.
func (e *env) makeVhosts(ctx context.Context) error {
	e.vhost = e.o.vhost
	if e.vhost == "" {
		e.vhost = "queuey-bench-" + e.id
		if err := e.admin.PutVhost(ctx, e.vhost, ""); err != nil {
			return fmt.Errorf("creating vhost %q: %w", e.vhost, err)
		}
		e.madeVhost = true
		if err := e.admin.SetPermissions(ctx, e.vhost, e.o.username, brokertest.Permissions{Configure: ".*", Write: ".*", Read: ".*"}); err != nil {
			return fmt.Errorf("permissions on vhost %q: %w", e.vhost, err)
		}
	}

	if e.o.fill > 0 {
		if err := e.setupCrowded(ctx); err != nil {
			return err
		}
	}
	for _, vhost := range []string{e.vhost, e.crowded} {
		if vhost == e.o.vhost {
			continue // a vhost of the user's keeps its policies as they are
		}
		if err := e.putPolicies(ctx, vhost); err != nil {
			return err
		}
	}
	return nil
}

// writeCLIConfig installs the rusage shim under every provider's name and writes the Terraform CLI
// configuration whose dev_overrides make Terraform start the shim, which starts the real provider.
func (e *env) writeCLIConfig() error {
	shimDir := filepath.Join(e.o.dir, "plugin")
	shims := []string{"terraform-provider-queuey", "terraform-provider-noop"}
	overrides := fmt.Sprintf("    %q = %q\n    %q = %q\n",
		"registry.terraform.io/queuey/queuey", shimDir, "registry.terraform.io/queuey/noop", shimDir)
	runs := e.o.provider + " or " + e.o.noop
	if e.o.peer != "" {
		shims = append(shims, "terraform-provider-rabbitmq")
		overrides += fmt.Sprintf("    %q = %q\n", "registry.terraform.io/cyrilgdn/rabbitmq", shimDir)
		runs = e.o.provider + ", " + e.o.noop + " or " + e.o.peer
	}
	if err := installShim(shimDir, shims...); err != nil {
		return fmt.Errorf("installing the rusage shim: %w", err)
	}
	e.shimLog = filepath.Join(e.o.dir, e.id, "provider-rusage.jsonl")
	e.rc = filepath.Join(e.o.dir, "terraformrc")
	rc := fmt.Sprintf(`# Written by tools/bench: the providers come from %s (a shim that runs %s).
provider_installation {
  dev_overrides {
%s  }
  direct {}
}
`, shimDir, runs, overrides)
	return os.WriteFile(e.rc, []byte(rc), 0o644)
}

// open sets e up, cleaning up on failure; the function it returns cleans up, keeping the first
// error in *err.
func (e *env) open(ctx context.Context) (func(err *error), error) {
	if err := e.setup(ctx); err != nil {
		_ = e.cleanup()
		return nil, err
	}
	return func(err *error) {
		if cerr := e.cleanup(); cerr != nil && *err == nil {
			*err = cerr
		}
	}, nil
}

// putPolicies puts o.policies policies in vhost, as a vhost of a real cluster holds: one harmless
// one (queue-version) on every queue, and others whose patterns match names the bench never makes,
// each with keys that would break the topology if they matched. They go with the vhost.
func (e *env) putPolicies(ctx context.Context, vhost string) error {
	for i := range e.o.policies {
		p := brokertest.Policy{Name: fmt.Sprintf("bench-policy-%02d", i), Pattern: fmt.Sprintf(`^team-%02d\.`, i), Priority: i,
			Definition: map[string]any{"message-ttl": 60000, "max-length": 1000, "expires": 3600000}}
		if i == 0 {
			p.Pattern, p.Definition = ".*", map[string]any{"queue-version": 2}
		}
		if vhost == "" {
			return nil
		}
		if err := e.admin.PutPolicy(ctx, vhost, p); err != nil {
			return fmt.Errorf("policy %s in vhost %q: %w", p.Name, vhost, err)
		}
	}
	return nil
}

// cleanup deletes every queue this invocation made, and its vhost.
func (e *env) cleanup() error {
	if e.proxy != nil {
		e.proxy.Close()
	}
	if e.admin == nil || e.client == nil || e.vhost == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n, err := e.deleteLeftovers(ctx, e.vhost, "bench-"+e.id+"-")
	if n > 0 {
		fmt.Fprintf(os.Stderr, "bench: cleanup deleted %d queues left in vhost %q\n", n, e.vhost)
	}
	if e.crowded != "" {
		if derr := e.admin.DeleteVhost(ctx, e.crowded); derr != nil && !brokertest.IsNotFound(derr) && err == nil {
			err = derr
		}
	}
	if e.madeVhost {
		if derr := e.admin.DeleteVhost(ctx, e.vhost); derr != nil && !brokertest.IsNotFound(derr) && err == nil {
			err = derr
		}
	}
	if err != nil {
		return fmt.Errorf("cleanup of vhost %q: %w", e.vhost, err)
	}
	return nil
}

func (e *env) deleteLeftovers(ctx context.Context, vhost, prefix string) (int, error) {
	allList, err := e.client.ListQueues(ctx, vhost, broker.Counted, broker.Live)
	all := allList.Queues
	if errors.Is(err, broker.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for name := range all {
		if strings.HasPrefix(name, prefix) {
			if err := e.client.DeleteQueue(ctx, vhost, name, false); err != nil && !errors.Is(err, broker.ErrNotFound) {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

func (e *env) countQueues(ctx context.Context, vhost, prefix string) (int, error) {
	allList, err := e.client.ListQueues(ctx, vhost, broker.Counted, broker.Live)
	all := allList.Queues
	if err != nil {
		return 0, err
	}
	n := 0
	for name := range all {
		if strings.HasPrefix(name, prefix) {
			n++
		}
	}
	return n, nil
}

type phaseResult struct {
	wall       time.Duration
	tfCPU      time.Duration // terraform with the plugins it reaped
	provCPU    time.Duration
	provRSSKiB int64
	provProcs  int
	brokerCPU  time.Duration
	counts     counters
}

type runResult struct {
	kind   string
	run    int
	phases map[string]phaseResult
}

func (r runResult) line(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-14s run %d:", r.kind, r.run)
	for _, p := range phases {
		pr := r.phases[p]
		fmt.Fprintf(&b, "  %s %.2fs", p, pr.wall.Seconds())
		if touchesBroker(r.kind) {
			fmt.Fprintf(&b, " (%.2f req/q, %d conns)", float64(pr.counts.requests())/float64(n), pr.counts.conns)
		}
	}
	return b.String()
}

// config is the configuration of kind's resources, named prefix + index.
func (e *env) config(kind, prefix string) (string, error) {
	switch kind {
	case kindFloor:
		return fmt.Sprintf(`resource "terraform_data" "q" {
  count = %d
  input = {
    name         = "%s${count.index}"
    message_ttl  = %q
    max_priority = %d
  }
}
`, e.o.n, prefix, e.o.ttl, e.o.priority), nil
	case kindPeer:
		return e.peerConfig(prefix)
	}
	// queuey takes its vhost from RABBITMQ_VHOST; noop_writes, which has no such default, is given
	// it in the configuration.
	vhost := ""
	if kind == kindWrites {
		vhost = "  vhost        = " + hclString(e.vhost) + "\n"
	}
	kind = resourceType(kind)
	provider, _, _ := strings.Cut(kind, "_")
	return fmt.Sprintf(`terraform {
  required_providers {
    %[1]s = { source = "queuey/%[1]s" }
  }
}

provider "%[1]s" {}

resource "%[2]s" "q" {
  count        = %[3]d
  name         = "%[4]s${count.index}"
%[7]s  message_ttl  = %[5]q
  max_priority = %[6]d
}
`, provider, kind, e.o.n, prefix, e.o.ttl, e.o.priority, vhost), nil
}

// hclString quotes s as an HCL string: quotes, backslashes and control characters escaped, "${" and
// "%{" doubled.
func hclString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		case (r == '$' || r == '%') && strings.HasPrefix(s[i+1:], "{"):
			b.WriteRune(r)
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (e *env) runOnce(ctx context.Context, kind string, r int) (runResult, error) {
	res := runResult{kind: kind, run: r, phases: map[string]phaseResult{}}
	prefix := e.namePrefix(kind, r)
	dir := filepath.Join(e.o.dir, e.id, fmt.Sprintf("%s-r%d", kind, r))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	cfg, err := e.config(kind, prefix)
	if err != nil {
		return res, err
	}
	// 0600: rabbitmq_queue's configuration holds the broker's password.
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		return res, err
	}
	for _, phase := range phases {
		pr, err := e.phase(ctx, dir, kind, phase)
		if err != nil {
			return res, fmt.Errorf("%s: %w", phase, err)
		}
		res.phases[phase] = pr
		if !touchesBroker(kind) {
			continue
		}
		switch phase {
		case "apply":
			if n, err := e.countQueues(ctx, e.vhostOf(kind), prefix); err != nil || n != 2*e.o.n {
				return res, fmt.Errorf("after apply the broker holds %d queues named %s*, want %d (%v)", n, prefix, 2*e.o.n, err)
			}
		case "destroy":
			if n, err := e.deleteLeftovers(ctx, e.vhostOf(kind), prefix); err != nil || n != 0 {
				return res, fmt.Errorf("destroy left %d queues named %s* (deleted now) (%v)", n, prefix, err)
			}
		}
	}
	return res, nil
}

// phase runs terraform's command for phase (apply, plan, refresh, destroy or query) on kind's
// configuration in dir, its output in dir/PHASE.log, and returns what it measured. Everything but
// the run of the command itself (its arguments, log file, environment, profile directory) is ready
// before measure starts the clocks, and the checks of the outcome come after it stops them.
func (e *env) phase(ctx context.Context, dir, kind, phase string) (phaseResult, error) {
	args := phaseArgs(phase, e.o.parallelism)
	logPath := filepath.Join(dir, phase+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return phaseResult{}, err
	}
	defer func() { _ = logf.Close() }()
	cmd, err := e.phaseCmd(ctx, dir, kind, phase, args, logf)
	if err != nil {
		return phaseResult{}, err
	}
	pr, runErr := e.measure(cmd)
	return pr, phaseOutcome(kind, phase, args, logPath, runErr)
}

// phaseArgs are terraform's arguments for phase, with -parallelism=parallelism where it applies.
func phaseArgs(phase string, parallelism int) []string {
	par := fmt.Sprintf("-parallelism=%d", parallelism)
	var args []string
	switch phase {
	case "apply":
		args = []string{"apply", "-auto-approve", par}
	case "plan":
		args = []string{"plan", "-detailed-exitcode", par}
	case "refresh":
		// Not -detailed-exitcode: Terraform 1.11 exits 2 from a refresh-only plan of this provider
		// even when Read returns the state unchanged; the output is checked.
		args = []string{"plan", "-refresh-only", par}
	case "destroy":
		args = []string{"destroy", "-auto-approve", par}
	case "query":
		args = []string{"query"}
	}
	if phase != "query" {
		args = append(args, "-input=false")
	}
	return append(args, "-no-color")
}

// phaseCmd is the terraform command of phase in dir, writing to logf, with an environment of its
// own: the bench's CLI configuration, the proxy as the management API, the shim's target for kind,
// and under -profile a fresh directory for the providers' CPU profiles.
func (e *env) phaseCmd(ctx context.Context, dir, kind, phase string, args []string, logf *os.File) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, e.o.terraform, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	cmd.Env = append(filterEnv(os.Environ()),
		"TF_CLI_CONFIG_FILE="+e.rc,
		"TF_IN_AUTOMATION=1",
		"CHECKPOINT_DISABLE=1",
		"RABBITMQ_ENDPOINT="+e.apiURL,
		"RABBITMQ_USERNAME="+e.o.username,
		"RABBITMQ_PASSWORD="+e.o.password,
		"RABBITMQ_VHOST="+e.vhostOf(kind),
		envShimLog+"="+e.shimLog,
	)
	switch kind {
	case kindQueuey, kindCrowded:
		cmd.Env = append(cmd.Env, envShimTarget+"="+e.o.provider)
	case kindNoop, kindWrites:
		cmd.Env = append(cmd.Env, envShimTarget+"="+e.o.noop)
	case kindPeer:
		cmd.Env = append(cmd.Env, envShimTarget+"="+e.o.peer)
	}
	// Only queuey and tools/bench/noop know QUEUEY_CPUPROFILE.
	if kind != kindFloor && kind != kindPeer && e.profiles != "" {
		pdir := e.profileDir(kind, phase)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return nil, err
		}
		cmd.Env = append(cmd.Env, plugintune.EnvCPUProfile+"="+pdir)
	}
	return cmd, nil
}

// measure runs cmd and returns its measures: the wall time of cmd.Run alone, the broker's CPU and
// the proxy's counts read right before and right after it, terraform's CPU, and the peak RSS and
// CPU of each provider process the shim logged meanwhile. The error is cmd.Run's.
func (e *env) measure(cmd *exec.Cmd) (phaseResult, error) {
	before := e.proxy.snapshot()
	cpu0 := e.brokerCPU()
	start := time.Now()
	runErr := cmd.Run()
	pr := phaseResult{wall: time.Since(start)}
	pr.brokerCPU = e.brokerCPU() - cpu0
	pr.counts = e.proxy.snapshot().sub(before)
	if cmd.ProcessState != nil {
		pr.tfCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var recs []shimRecord
	recs, e.shimOff = readShimLog(e.shimLog, e.shimOff)
	for _, rec := range recs {
		pr.provProcs++
		pr.provCPU += time.Duration((rec.UserS + rec.SysS) * float64(time.Second))
		pr.provRSSKiB = max(pr.provRSSKiB, rec.MaxRSSKiB)
	}
	return pr, runErr
}

// phaseOutcome is the error of a phase whose command ended with runErr: a plan that is not empty,
// a command that failed (with the end of its log), or a refresh-only plan that found changes
// (other than rabbitmq_queue's own noise). Nil when the phase did what it must.
func phaseOutcome(kind, phase string, args []string, logPath string, runErr error) error {
	if runErr != nil {
		var ee *exec.ExitError
		if phase == "plan" {
			if errors.As(runErr, &ee) && ee.ExitCode() == 2 {
				return fmt.Errorf("terraform %s is not empty (exit 2); see %s", strings.Join(args, " "), logPath)
			}
		}
		return fmt.Errorf("terraform %s: %v; last lines of %s:\n%s", strings.Join(args, " "), runErr, logPath, tail(logPath, 30))
	}
	if phase == "refresh" {
		b, _ := os.ReadFile(logPath)
		if !bytes.Contains(b, []byte("No changes.")) && (kind != kindPeer || !peerRefreshNoise(string(b))) {
			return fmt.Errorf("terraform %s found changes; see %s", strings.Join(args, " "), logPath)
		}
	}
	return nil
}

// filterEnv drops settings that would change what is measured.
func filterEnv(in []string) []string {
	var out []string
	for _, kv := range in {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "TF_CLI_CONFIG_FILE", k == "TF_CLI_ARGS", strings.HasPrefix(k, "TF_CLI_ARGS_"),
			strings.HasPrefix(k, "TF_LOG"), k == "TF_REATTACH_PROVIDERS", k == "GOGC", k == "GOMAXPROCS",
			strings.HasPrefix(k, "RABBITMQ_"):
			continue
		}
		out = append(out, kv)
	}
	return out
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// brokerCPU returns the CPU time the broker's nodes used so far, from the kernel's accounting of
// their pids, or 0 when none is visible.
func (e *env) brokerCPU() time.Duration {
	var total time.Duration
	for _, pid := range e.brokerPids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command name: state is field 3, utime 14, stime 15.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 13 {
			continue
		}
		var ut, st int64
		_, _ = fmt.Sscan(fields[11], &ut)
		_, _ = fmt.Sscan(fields[12], &st)
		total += time.Duration(ut+st) * time.Second / clockTicks
	}
	return total
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
