// Command queuey-acc runs the acceptance stages of make test and provides
// their brokers:
//
//	queuey-acc run                 the stages (make test, make testacc, make testresil)
//	queuey-acc oauth               the OAuth 2.0 stages of OAUTH_VERSIONS alone (make testacc-oauth)
//	queuey-acc brokers start NAME… make brokers ready: build/brokers/NAME.env
//	queuey-acc brokers stop        stop the nodes a start started
//	queuey-acc brokers list        the brokers' names
//	queuey-acc wait [-any|-refused] [-user U -password P] [-seconds N] URL
//	                               wait until a management API answers
//
// The stages are stageLines; run selects them with ACC_STAGES, BROKERS (or
// BROKER), TF_ACC_CLIS and ACC_RESIL=0, and reads TERRAFORM, TOFU, the CLI
// versions (TERRAFORM_NEWEST_VERSION, ...), ACC_RUN, ACC_LANES, ACC_PARALLEL,
// ACC_TIMEOUT, ACC_SUMMARY_FILE and KEEP_BROKERS. Each stage prints one line
// with the versions its CLI and broker report, e.g.
//
//	==> acceptance terraform 1.11.4 × RabbitMQ 3.10.25: 40 passed, 0 failed, 9 skipped, all for features the CLI lacks (97s, build/acc-terraform-3.10.log)
//
// then each line of its log that starts with "==> fault " (the fault tests
// print one per fault), then each test that failed or skipped unexpectedly.
// A stage passes when no test fails and every skip is one the tests recorded
// in QUEUEY_EXPECTED_SKIPS (build/acc-NAME.expected-skips) for a feature
// their CLI lacks.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := command(ctx, os.Args[1:])
	if ctx.Err() != nil {
		code = 130 // interrupted
	}
	stop()
	os.Exit(code)
}

func command(ctx context.Context, args []string) int {
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "queuey-acc:", err)
		return 2
	}
	if len(args) == 0 {
		args = []string{""}
	}
	switch args[0] {
	case "run":
		_, ok := newRunner(root).run(ctx)
		return exitCode(ok)
	case "oauth":
		return runOAuth(ctx, root)
	case "brokers":
		return brokersCommand(ctx, root, args[1:])
	case "wait":
		return waitCommand(ctx, args[1:])
	}
	fmt.Fprintln(os.Stderr, "usage: queuey-acc run|oauth|brokers start NAME…|brokers stop|brokers list|wait URL")
	return 2
}

func exitCode(ok bool) int {
	if ok {
		return 0
	}
	return 1
}

// repoRoot is the clone this command works in: the directory above the
// working directory that holds scripts/rabbitmq-node.sh.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "rabbitmq-node.sh")); err == nil {
			return dir, nil
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("not inside a clone of terraform-provider-queuey")
		}
	}
}

// runOAuth runs the oauth-V stages of OAUTH_VERSIONS and says how each went.
func runOAuth(ctx context.Context, root string) int {
	versions := strings.Fields(getenv("OAUTH_VERSIONS", "3.10 4.3"))
	r := newRunner(root)
	r.sel = selection{}
	for _, v := range versions {
		r.sel.stages = append(r.sel.stages, "oauth-"+v)
	}
	passed, ok := r.run(ctx)
	var words []string
	for _, v := range versions {
		words = append(words, fmt.Sprintf("oauth %s %s", v, map[bool]string{true: "PASS", false: "FAIL"}[passed["oauth-"+v]]))
	}
	fmt.Printf("==> OAuth 2.0 acceptance: %s\n", strings.Join(words, ", "))
	return exitCode(ok)
}

func brokersCommand(ctx context.Context, root string, args []string) int {
	b := newBrokers(root, os.Stderr)
	switch {
	case len(args) > 1 && args[0] == "start":
		if err := b.start(ctx, args[1:]...); err != nil {
			b.logf("%v", err)
			return 1
		}
		return 0
	case len(args) == 1 && args[0] == "stop":
		b.stop(ctx)
		return 0
	case len(args) == 1 && args[0] == "list":
		for _, br := range brokerPlan {
			fmt.Println(br.name)
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "usage: queuey-acc brokers start NAME…|stop|list")
	return 2
}

// waitCommand exits 0 once the API answers 200 (any answer with -any), 3 at
// once when it refuses the credentials (-refused), 1 when time runs out.
func waitCommand(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	var rule waitRule
	fs.BoolVar(&rule.anyAnswer, "any", false, "any HTTP answer will do")
	fs.BoolVar(&rule.refused, "refused", false, "exit 3 at once on HTTP 401")
	user := fs.String("user", "guest", "management user")
	password := fs.String("password", "guest", "its password")
	seconds := fs.Int("seconds", 120, "how long to wait")
	if fs.Parse(args) != nil || fs.NArg() != 1 {
		return 2
	}
	url := fs.Arg(0)
	status, ok := waitAPI(ctx, url, *user, *password, rule, time.Duration(*seconds)*time.Second, time.Second)
	switch {
	case ok:
		return 0
	case rule.refused && status == 401:
		return 3
	}
	fmt.Fprintf(os.Stderr, "%s/api/overview not ready after %ds: %s\n", strings.TrimSuffix(url, "/"), *seconds, describe(status))
	return 1
}
