package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runner runs the selected stages ACC_LANES at a time from one test binary,
// each with go test -parallel ACC_PARALLEL, after making their brokers ready
// (while the CLIs the machine lacks are built); the brokers it started stop
// when it ends unless KEEP_BROKERS=1. Then a deprecation check reads the log
// of each 4.x node the stages used: a "Deprecated features" warning written
// during the run fails it.
type runner struct {
	root, build  string
	sel          selection
	versions     cliVersions
	terraform    string // TERRAFORM: the machine's Terraform
	tofu         string // TOFU
	accRun       string // ACC_RUN: replaces the -run of every stage with a broker
	lanes        int
	parallel     int
	timeout      string
	summaryFile  string
	keepBrokers  bool
	summaryLines []string
}

func getenv(name, fallback string) string { return cmp.Or(os.Getenv(name), fallback) }

func atoi(name string, fallback int) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n < 1 {
		return fallback
	}
	return n
}

func newRunner(root string) *runner {
	return &runner{
		root: root, build: filepath.Join(root, "build"),
		sel: selection{stages: strings.Fields(os.Getenv("ACC_STAGES")), brokers: strings.Fields(getenv("BROKERS", os.Getenv("BROKER"))),
			clis: normalCLIs(os.Getenv("TF_ACC_CLIS")), noResil: getenv("ACC_RESIL", "1") != "1"},
		versions: cliVersions{getenv("TERRAFORM_NEWEST_VERSION", "1.16.4"), getenv("TERRAFORM_OLDEST_VERSION", "1.8.5"),
			getenv("OPENTOFU_VERSION", "1.12.6"), getenv("OPENTOFU_OLDEST_VERSION", "1.10.10")},
		terraform: getenv("TERRAFORM", "terraform"), tofu: os.Getenv("TOFU"), accRun: os.Getenv("ACC_RUN"),
		lanes: atoi("ACC_LANES", 2), parallel: atoi("ACC_PARALLEL", 4), timeout: getenv("ACC_TIMEOUT", "60m"),
		summaryFile: os.Getenv("ACC_SUMMARY_FILE"), keepBrokers: os.Getenv("KEEP_BROKERS") == "1",
	}
}

// say prints a summary line.
func (r *runner) say(line string) {
	fmt.Println(line)
	r.summaryLines = append(r.summaryLines, line)
}

// run runs the stages; it returns whether each passed and whether all did.
func (r *runner) run(ctx context.Context) (map[string]bool, bool) {
	all, err := parseStages(stageLines, r.versions.vars())
	if err != nil {
		fmt.Println("==> acceptance: FAIL:", err)
		return nil, false
	}
	selected := r.sel.pick(all)
	if len(selected) == 0 {
		fmt.Printf("==> no stage selected (ACC_STAGES='%s' BROKERS='%s' TF_ACC_CLIS='%s')\n",
			os.Getenv("ACC_STAGES"), strings.Join(r.sel.brokers, " "), os.Getenv("TF_ACC_CLIS"))
		return nil, false
	}
	if err := os.MkdirAll(r.build, 0o755); err != nil {
		fmt.Println("==> acceptance: FAIL:", err)
		return nil, false
	}
	b := newBrokers(r.root, os.Stderr)
	if !r.keepBrokers {
		defer b.stop(ctx)
	}
	passed := r.stages(ctx, b, selected)
	ok := ctx.Err() == nil
	for _, p := range passed {
		ok = ok && p
	}
	if r.summaryFile != "" {
		_ = os.WriteFile(r.summaryFile, []byte(strings.Join(r.summaryLines, "\n")+"\n"), 0o644)
	}
	fmt.Printf("==> acceptance: %s\n", map[bool]string{true: "PASS", false: "FAIL"}[ok])
	return passed, ok
}

// stages readies the brokers, CLIs and test binary, then runs the stages and
// the deprecation check; a stage left out by a failure before is absent.
func (r *runner) stages(ctx context.Context, b *brokers, selected []stage) map[string]bool {
	passed := map[string]bool{}
	needed := neededBrokers(selected)
	ready := make(chan error, 1)
	if len(needed) > 0 {
		fmt.Printf("==> brokers: queuey-acc brokers start %s\n", strings.Join(needed, " "))
		go func() { ready <- b.start(ctx, needed...) }()
	} else {
		ready <- nil
	}
	bins, versions := r.clis(ctx, selected)
	if err := <-ready; err != nil {
		fmt.Fprintln(os.Stderr, "brokers:", err)
		r.say(fmt.Sprintf("==> brokers: FAIL (queuey-acc brokers start %s)", strings.Join(needed, " ")))
		passed["brokers"] = false
		return passed
	}
	fmt.Println("==> building the test binary: go test -c ./internal/provider")
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", filepath.Join(r.build, "provider.test"), "./internal/provider")
	build.Dir, build.Stdout, build.Stderr = r.root, os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		r.say("==> acceptance: FAIL (the tests do not build)")
		passed["build"] = false
		return passed
	}
	// An empty CLI configuration: neither CLI reads ~/.terraformrc.
	_ = os.WriteFile(filepath.Join(r.build, "acc.terraformrc"), nil, 0o644)

	results := make([]chan report, len(selected))
	lanes := make(chan struct{}, r.lanes)
	for i, st := range selected {
		results[i] = make(chan report, 1)
		lanes <- struct{}{}
		fmt.Printf("==> stage %s: %s on %s, -run %s -skip %s -parallel %d\n", st.name, st.cli,
			cmp.Or(strings.TrimPrefix(st.broker, "-"), "no broker"), r.runOf(st), st.skip, r.parallel)
		go func() {
			results[i] <- r.runStage(ctx, st, bins[st.cli], versions[st.cli])
			<-lanes
		}()
	}
	for i, st := range selected {
		rep := <-results[i]
		lines := rep.lines()
		r.say(lines[0])
		if len(lines) > 1 {
			fmt.Println(strings.Join(lines[1:], "\n"))
		}
		passed[st.name] = rep.pass
	}
	for _, name := range needed {
		if !r.deprecationCheck(name) {
			passed["deprecation check "+name] = false
		}
	}
	return passed
}

func (r *runner) runOf(st stage) string {
	if r.accRun != "" && st.broker != "-" {
		return r.accRun
	}
	return st.run
}

var cliVersionRE = regexp.MustCompile(`(?m)^(?:Terraform|OpenTofu) v(\S+)`)

// cliVersion is the version BIN reports, "1.11.4" from "Terraform v1.11.4"
// on any line (OpenTofu may print a warning first).
func cliVersion(bin string) string {
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, _ := cmd.Output()
	if m := cliVersionRE.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return ""
}

// clis finds the binary and version of each CLI of the stages ("" when
// there is none, or it is not the version wanted).
func (r *runner) clis(ctx context.Context, selected []stage) (bins, versions map[string]string) {
	bins, versions = map[string]string{}, map[string]string{}
	for _, st := range selected {
		cli := st.cli
		if _, done := bins[cli]; done {
			continue
		}
		bins[cli] = r.cliBin(ctx, cli)
		switch {
		case bins[cli] == "":
			fmt.Printf("==> no %s binary: install Terraform or set TERRAFORM=; the versioned CLIs come from scripts/cli.sh (see above)\n", cli)
		case strings.Contains(cli, "@"):
			versions[cli] = cliVersion(bins[cli])
			if want := strings.SplitN(cli, "@", 2)[1]; versions[cli] != want {
				fmt.Printf("==> %s: %s reports version '%s'\n", cli, bins[cli], versions[cli])
				bins[cli] = ""
			}
		default:
			versions[cli] = cliVersion(bins[cli])
		}
	}
	return bins, versions
}

func lookPath(name string) string {
	p, _ := exec.LookPath(name)
	return p
}

// cliBin is a CLI's binary: the machine's when it is the version wanted,
// else the build scripts/cli.sh keeps in the cache (built when missing).
func (r *runner) cliBin(ctx context.Context, cli string) string {
	product, want, versioned := strings.Cut(cli, "@")
	switch {
	case cli == "terraform":
		return lookPath(r.terraform)
	case cli == "opentofu" && r.tofu != "":
		return lookPath(r.tofu)
	case cli == "opentofu":
		return r.cliBin(ctx, "opentofu@"+strings.TrimPrefix(r.versions.tofuNewest, "v"))
	case !versioned:
		return ""
	}
	own := lookPath(map[string]string{"terraform": r.terraform, "opentofu": cmp.Or(r.tofu, "tofu")}[product])
	if own != "" && cliVersion(own) == want {
		return own
	}
	fmt.Fprintf(os.Stderr, "==> %s: scripts/cli.sh %s %s\n", cli, product, want)
	cmd := exec.CommandContext(ctx, filepath.Join(r.root, "scripts", "cli.sh"), product, want)
	cmd.Stderr = os.Stderr
	out, _ := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// runStage runs one stage into build/acc-NAME.log and judges it.
func (r *runner) runStage(ctx context.Context, st stage, bin, version string) report {
	start := time.Now()
	logPath := filepath.Join(r.build, "acc-"+st.name+".log")
	expected := filepath.Join(r.build, "acc-"+st.name+".expected-skips")
	_ = os.WriteFile(expected, nil, 0o644)
	args := []string{"-test.count=1", "-test.v", "-test.timeout", r.timeout, "-test.parallel", strconv.Itoa(r.parallel)}
	if run := r.runOf(st); run != "-" {
		args = append(args, "-test.run", run)
	}
	if st.skip != "-" {
		args = append(args, "-test.skip", st.skip)
	}
	host := "registry.opentofu.org"
	if strings.HasPrefix(st.cli, "terraform") {
		host = "registry.terraform.io"
	}
	label := strings.SplitN(st.cli, "@", 2)[0] + " " + cmp.Or(version, "?")
	env := slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "TF_ACC=") })
	if st.broker != "-" {
		text, err := os.ReadFile(filepath.Join(r.build, "brokers", st.broker+".env"))
		if err != nil {
			return report{summary: fmt.Sprintf("==> acceptance %s: FAIL (no result)", st.name)}
		}
		a := parseAssignments(string(text))
		v := a.get("BROKER_VERSION")
		label += " × RabbitMQ " + v
		if !strings.HasPrefix(v, st.broker+".") {
			label += " (" + st.broker + ")" // a broker with settings of its own
		}
		for _, x := range a {
			env = append(env, x.name+"="+x.value)
		}
		env = append(env, "TF_ACC=1")
	} else {
		label += ", CLI-driven unit tests"
	}
	code := r.exec(ctx, bin, args, logPath, append(env, "QUEUEY_EXPECTED_SKIPS="+expected, "TF_ACC_TERRAFORM_PATH="+bin,
		"TF_ACC_PROVIDER_HOST="+host, "TF_ACC_PROVIDER_NAMESPACE=queuey",
		"TF_CLI_CONFIG_FILE="+filepath.Join(r.build, "acc.terraformrc"), "CHECKPOINT_DISABLE=1"), st.cli)
	log, _ := os.ReadFile(logPath)
	want, _ := os.ReadFile(expected)
	exp := map[string]bool{}
	for _, t := range strings.Fields(string(want)) {
		exp[t] = true
	}
	rel, _ := filepath.Rel(r.root, logPath)
	return judge(parseLog(string(log)), stageRun{label: label, log: rel, seconds: int(time.Since(start).Seconds()),
		exitCode: code, expected: exp, accRun: r.accRun != "" && st.broker != "-"})
}

// exec runs the test binary in internal/provider, its output into logPath;
// it returns its exit code (1 when there is no binary of the CLI).
func (r *runner) exec(ctx context.Context, bin string, args []string, logPath string, env []string, cli string) int {
	f, err := os.Create(logPath)
	if err != nil {
		return 1
	}
	defer func() { _ = f.Close() }()
	if bin == "" {
		_, _ = fmt.Fprintf(f, "no %s binary\n", cli)
		return 1
	}
	cmd := exec.CommandContext(ctx, filepath.Join(r.build, "provider.test"), args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = filepath.Join(r.root, "internal", "provider"), env, f, f
	if err := cmd.Run(); err != nil {
		if x, ok := err.(*exec.ExitError); ok && x.ExitCode() > 0 {
			return x.ExitCode()
		}
		return 1
	}
	return 0
}

// deprecationCheck prints the check of one broker's 4.x node log (nothing
// for another broker) and says whether it passed.
func (r *runner) deprecationCheck(name string) bool {
	text, err := os.ReadFile(filepath.Join(r.build, "brokers", name+".env"))
	if err != nil {
		return true
	}
	a := parseAssignments(string(text))
	version, logPath := a.get("BROKER_VERSION"), a.get("BROKER_LOG")
	if !strings.HasPrefix(version, "4.") || logPath == "" {
		return true
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		return true
	}
	if off, _ := strconv.Atoi(a.get("BROKER_LOG_OFFSET")); off <= len(log) {
		log = log[off:]
	}
	found := deprecations(string(log))
	if len(found) == 0 {
		r.say(fmt.Sprintf("==> deprecation check RabbitMQ %s (%s): PASS, no deprecated feature used", version, name))
		return true
	}
	r.say(fmt.Sprintf("==> deprecation check RabbitMQ %s (%s): FAIL, the run used deprecated features (see %s):", version, name, logPath))
	fmt.Println(strings.Join(found, "\n"))
	return false
}
