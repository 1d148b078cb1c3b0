package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	amqp "github.com/rabbitmq/amqp091-go"

	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// defaultUser and defaultPassword are RabbitMQ's default user, which every
// broker the scripts start (scripts/) has: the credentials of the tests
// unless RABBITMQ_USERNAME says otherwise.
const defaultUser, defaultPassword = "guest", "guest"

// testUser and testPassword are the management API credentials of the
// acceptance tests: RABBITMQ_USERNAME and RABBITMQ_PASSWORD, else the default.
func testUser() string {
	if u := os.Getenv(EnvUsername); u != "" {
		return u
	}
	return defaultUser
}

func testPassword() string {
	if os.Getenv(EnvUsername) != "" {
		return os.Getenv(EnvPassword)
	}
	return defaultPassword
}

// accClient is a management API client for checking what the broker holds.
func accClient(t *testing.T) *broker.Client {
	t.Helper()
	c, err := broker.New(broker.Config{
		Endpoint: os.Getenv(EnvEndpoint),
		Username: testUser(),
		Password: testPassword(),
		Insecure: os.Getenv(EnvInsecure) == "true",
		// The test broker's AMQP port (the dead-letter actions): the
		// broker scripts set it beside the endpoint.
		AMQPEndpoint: os.Getenv(EnvAMQP),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// accAdmin is an administration client of the acceptance tests' broker, for
// the vhosts, users and permissions a test sets up.
func accAdmin(t *testing.T) *brokertest.Admin {
	t.Helper()
	a, err := brokertest.NewAdmin(os.Getenv(EnvEndpoint), testUser(), testPassword(), os.Getenv(EnvInsecure) == "true")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// allPermissions grants everything in a vhost.
var allPermissions = brokertest.Permissions{Configure: ".*", Write: ".*", Read: ".*"}

// createUser makes a user with a password and tags, with the permissions p in
// vhost, and deletes it at cleanup.
func createUser(t *testing.T, name, password, tags, vhost string, p brokertest.Permissions) {
	t.Helper()
	a := accAdmin(t)
	if err := a.PutUser(context.Background(), name, password, tags); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.DeleteUser(context.Background(), name) })
	if err := a.SetPermissions(context.Background(), vhost, name, p); err != nil {
		t.Fatal(err)
	}
}

// uniqueName returns a queue name no other test run uses.
func uniqueName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "tfacc-" + prefix + "-" + hex.EncodeToString(b)
}

// amqpURL is the AMQP URL of vhost on the test broker. RABBITMQ_AMQP_URL may
// give the server (default amqp://<user>:<password>@127.0.0.1:5672).
func amqpURL(vhost string) string {
	base := os.Getenv("RABBITMQ_AMQP_URL")
	if base == "" {
		base = (&url.URL{Scheme: "amqp", User: url.UserPassword(testUser(), testPassword()), Host: "127.0.0.1:5672"}).String()
	}
	return strings.TrimRight(base, "/") + "/" + url.PathEscape(vhost)
}

// amqpChannel opens a connection and channel to vhost, closed at cleanup.
func amqpChannel(t *testing.T, vhost string) *amqp.Channel {
	t.Helper()
	return amqpChannelAt(t, amqpURL(vhost))
}

// amqpChannelAt opens a connection and channel to an AMQP URL (with its
// vhost), closed at cleanup.
func amqpChannelAt(t *testing.T, u string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.DialConfig(u, amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
	if err != nil {
		t.Fatalf("AMQP connection to %s: %v", redactURL(u), err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// publish sends n persistent messages to queue in vhost "/" through the default exchange
// and waits for the broker's confirms.
func publish(t *testing.T, queue string, n int) {
	t.Helper()
	publishOn(t, amqpChannel(t, "/"), queue, n)
}

// publishOn sends n persistent messages to queue through ch and the default
// exchange, and waits for the broker's confirms.
func publishOn(t *testing.T, ch *amqp.Channel, queue string, n int) {
	t.Helper()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range n {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, amqp.Publishing{
			DeliveryMode: amqp.Persistent, Body: []byte(fmt.Sprintf("message %d", i)),
		})
		if err != nil {
			t.Fatalf("publishing to %q: %v", queue, err)
		}
		ok, err := dc.WaitContext(ctx)
		if err != nil || !ok {
			t.Fatalf("publish to %q not confirmed: %v", queue, err)
		}
	}
}

// messageCount returns the exact number of ready messages in queue, asked over
// AMQP (a passive declare), so it does not lag like the management API.
func messageCount(t *testing.T, queue string) int {
	const vhost = "/"
	t.Helper()
	ch := amqpChannel(t, vhost)
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("queue %q in vhost %q: %v", queue, vhost, err)
	}
	return q.Messages
}

// queueExists reports whether queue exists, asked over AMQP.
func queueExists(t *testing.T, vhost, queue string) bool {
	t.Helper()
	ch := amqpChannel(t, vhost)
	_, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false
	}
	if err != nil {
		t.Fatalf("checking queue %q: %v", queue, err)
	}
	return true
}

// deleteOutOfBand deletes queues of the vhost "/" behind Terraform's back,
// whatever they hold (a test step's PreConfig).
func deleteOutOfBand(t *testing.T, names ...string) {
	const vhost = "/"
	t.Helper()
	c := accClient(t)
	for _, n := range names {
		_ = c.DeleteQueue(context.Background(), vhost, n, false)
	}
}

// cleanupQueues deletes, at the end of the test, every queue of vhost whose
// name starts with prefix, whatever it holds: a test's queue q with q.dead
// and its hold queues, or a batch of queues named from one unique base. It
// does nothing when the test was skipped before it touched a broker.
func cleanupQueues(t *testing.T, vhost, prefix string) {
	t.Helper()
	t.Cleanup(func() {
		if os.Getenv("TF_ACC") == "" || os.Getenv(EnvEndpoint) == "" {
			return
		}
		deleteQueuesWithPrefix(accClient(t), vhost, prefix)
	})
}

// deleteQueuesWithPrefix deletes through c every queue of vhost whose name
// starts with prefix, whatever it holds.
func deleteQueuesWithPrefix(c *broker.Client, vhost, prefix string) {
	all, err := c.ListQueues(context.Background(), vhost)
	if err != nil {
		return
	}
	for name := range all {
		if strings.HasPrefix(name, prefix) {
			_ = c.DeleteQueue(context.Background(), vhost, name, false)
		}
	}
}

// getQueue reads a queue through the management API, failing the test when
// it is missing.
func getQueue(t *testing.T, vhost, name string) broker.Queue {
	t.Helper()
	q, err := accClient(t).GetQueueDeclaration(context.Background(), vhost, name)
	if err != nil {
		t.Fatalf("queue %q in vhost %q: %v", name, vhost, err)
	}
	return q
}

// createVhost makes a vhost for the test, with guest-style permissions for
// the test user, and deletes it at cleanup.
func createVhost(t *testing.T, name, defaultQueueType string) {
	t.Helper()
	a := accAdmin(t)
	if err := a.PutVhost(context.Background(), name, defaultQueueType); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.DeleteVhost(context.Background(), name) })
	if err := a.SetPermissions(context.Background(), name, testUser(), allPermissions); err != nil {
		t.Fatal(err)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// managementHas reports whether the management API lists queue; unlike a
// passive declare it does not count as use of the queue.
func managementHas(t *testing.T, vhost, queue string) bool {
	t.Helper()
	all, err := accClient(t).ListQueues(context.Background(), vhost)
	if err != nil {
		t.Fatal(err)
	}
	_, ok := all[queue]
	return ok
}

// redactURL hides the password of a URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// declaredAs checks a queue the broker reports against what the backend
// declares, spelled out here rather than computed by the code under test:
// classic, durable, not auto-delete, not exclusive, and exactly wantArgs (a
// JSON object with sorted keys) as arguments, an x-queue-type: classic that
// RabbitMQ 3.13+ adds by itself aside.
func declaredAs(q broker.Queue, wantArgs string) error {
	if q.Type != "" && q.Type != "classic" {
		return fmt.Errorf("queue %q is a %s queue, want classic", q.Name, q.Type)
	}
	if !q.Durable || q.AutoDelete || q.Exclusive {
		return fmt.Errorf("queue %q: durable=%v auto_delete=%v exclusive=%v, want true, false, false", q.Name, q.Durable, q.AutoDelete, q.Exclusive)
	}
	args := map[string]any{}
	for k, v := range q.Arguments {
		if k == "x-queue-type" && v == "classic" {
			continue
		}
		args[k] = v
	}
	got, err := json.Marshal(args)
	if err != nil {
		return err
	}
	if string(got) != wantArgs {
		return fmt.Errorf("queue %q has arguments %s, want %s", q.Name, got, wantArgs)
	}
	return nil
}

// tunedProvider is a provider block that sets every suffix and granularity
// to something other than the default.
const tunedProvider = `
provider "queuey" {
  dead_suffix          = "-dlq"
  deferred_suffix      = "-wait-"
  retry_granularity    = "5s"
  deferred_granularity = "1m"
}
`

// queueCase is an acceptance test of the queuey_queue name in the vhost "/":
// its steps, then a check that the queue and its dead-letter queue are gone.
func queueCase(t *testing.T, name string, steps []resource.TestStep) resource.TestCase {
	return resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", name, name+".dead"),
		Steps:                    steps,
	}
}

// configError is a configuration that must fail, and the phrases its error
// contains, in order (see errorMatching).
type configError struct {
	config string
	want   []string
}

// testErrors runs, with no broker, a step for each configuration of tests as
// wrap makes it whole, each expecting its error.
func testErrors(t *testing.T, wrap func(string) string, tests []configError, features ...cliFeature) {
	t.Helper()
	steps := make([]resource.TestStep, 0, len(tests))
	for _, tt := range tests {
		steps = append(steps, resource.TestStep{Config: wrap(tt.config), ExpectError: errorMatching(tt.want...)})
	}
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps:                    steps,
	}, features...)
}

// functionOutput makes a call of one of the provider's functions an output.
func functionOutput(call string) string {
	return "output \"x\" {\n  value = provider::queuey::" + call + "\n}\n"
}

// dataBlock returns a wrapper that makes a body a data source of type typ.
func dataBlock(typ string) func(string) string {
	return func(body string) string { return "data \"" + typ + "\" \"x\" {\n" + body + "\n}\n" }
}

// expectArgumentsChange is a plan check: the planned change of
// queuey_queue.test moves arguments_json from before to after.
func expectArgumentsChange(before, after string) plancheck.PlanCheck { //nolint:unparam // each test states both sides
	return changeCheck{"queuey_queue.test", "arguments_json", before, after}
}

type changeCheck struct{ addr, attr, before, after string }

func (c changeCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.addr {
			continue
		}
		b, _ := rc.Change.Before.(map[string]any)
		a, _ := rc.Change.After.(map[string]any)
		if b[c.attr] != c.before || a[c.attr] != c.after {
			resp.Error = fmt.Errorf("%s.%s planned %v -> %v, want %s -> %s", c.addr, c.attr, b[c.attr], a[c.attr], c.before, c.after)
		}
		return
	}
	resp.Error = fmt.Errorf("no planned change of %s", c.addr)
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// The CLI harness: tests that run the real terraform CLI (or OpenTofu's,
// whichever TF_ACC_TERRAFORM_PATH names) against the provider binary built
// from this tree, through a dev_overrides CLI configuration, as a user does:
// they see what terraform-plugin-testing cannot show, such as warnings.

// builtProvider builds the provider once per test binary and returns the
// directory holding it.
func builtProvider(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		// Shared by every test of the binary, so not a t.TempDir.
		buildDir, buildErr = os.MkdirTemp("", "queuey-e2e-") //nolint:usetesting // outlives any one test
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "terraform-provider-queuey"), "../..")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

// terraformCLI runs terraform in dir with the dev_overrides config and
// returns its combined output.
type terraformCLI struct {
	t   *testing.T
	dir string
	rc  string
	env []string // more environment of the CLI
}

func newTerraformCLI(t *testing.T, config string) *terraformCLI {
	t.Helper()
	bin := builtProvider(t)
	dir := t.TempDir()
	rc := filepath.Join(dir, "terraformrc")
	// "queuey/queuey" means registry.terraform.io/queuey/queuey to Terraform
	// and registry.opentofu.org/queuey/queuey to OpenTofu: override both.
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    "registry.terraform.io/queuey/queuey" = %[1]q
    "registry.opentofu.org/queuey/queuey" = %[1]q
  }
  direct {}
}
`, bin)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return &terraformCLI{t: t, dir: dir, rc: rc}
}

func (c *terraformCLI) run(args ...string) (string, error) {
	c.t.Helper()
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tf == "" {
		tf = "terraform"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tf, append(args, "-no-color")...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+c.rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	cmd.Env = append(cmd.Env, c.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *terraformCLI) mustRun(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// The CLI matrix: every stage of scripts/testacc.sh runs the whole suite, and
// a test that needs a feature some CLI of the matrix lacks says so with
// needsCLI (or unitTest's features), by the feature's name: the versions are
// stated once, here. On a CLI without the feature the test skips itself, and
// the skip is recorded as expected; any other skip fails the stage.

// cliFeature is something of the Terraform or OpenTofu CLI that a test needs
// and that not every CLI version of the matrix has.
type cliFeature struct {
	name string
	// terraform and opentofu are the first versions of each CLI that have
	// it; empty: no version of that CLI has it (yet).
	terraform, opentofu string
}

var (
	// featureFunctions: provider-defined functions.
	featureFunctions = cliFeature{name: "provider functions", terraform: "1.8.0", opentofu: "1.7.0"}
	// featureMove: `moved` blocks across resource types (MoveState).
	featureMove = cliFeature{name: "moved across resource types", terraform: "1.8.0", opentofu: "1.10.0"}
	// featureIdentity: resource identity and import by identity.
	featureIdentity = cliFeature{name: "resource identity", terraform: "1.12.0", opentofu: "1.12.0"}
	// featureQuery: list resources and `terraform query`; no OpenTofu has them.
	featureQuery = cliFeature{name: "list resources and terraform query", terraform: "1.14.0"}
	// featureActions: actions and `action_trigger`; no OpenTofu has them.
	featureActions = cliFeature{name: "actions", terraform: "1.14.0"}
	// featureActionDestroyEvents: actions triggered by destroy events.
	featureActionDestroyEvents = cliFeature{name: "actions triggered by destroy events", terraform: "1.16.0"}
)

// testCLI is the CLI the tests drive: its kind ("Terraform" or "OpenTofu")
// and version, as the binary reports them.
type testCLI struct {
	kind    string
	version *version.Version
}

var (
	testCLIOnce sync.Once
	testCLIInfo testCLI
	testCLIErr  error
)

// cliUnderTest returns the CLI the tests drive: TF_ACC_TERRAFORM_PATH, else
// terraform on PATH (as terraform-plugin-testing and newTerraformCLI pick it).
func cliUnderTest() (testCLI, error) {
	testCLIOnce.Do(func() {
		bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
		if bin == "" {
			bin = "terraform"
		}
		cmd := exec.Command(bin, "version")
		cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
		out, err := cmd.Output()
		if err != nil {
			testCLIErr = fmt.Errorf("%s version: %v", bin, err)
			return
		}
		testCLIInfo, testCLIErr = parseCLIVersion(string(out))
	})
	return testCLIInfo, testCLIErr
}

// parseCLIVersion reads the kind and version of a CLI from the output of its
// `version` command: the first line "Terraform v1.11.4" or "OpenTofu
// v1.12.6" (OpenTofu may print a warning before it).
func parseCLIVersion(out string) (testCLI, error) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "Terraform" && f[0] != "OpenTofu") || !strings.HasPrefix(f[1], "v") {
			continue
		}
		v, err := version.NewVersion(strings.TrimPrefix(f[1], "v"))
		if err != nil {
			return testCLI{}, fmt.Errorf("CLI version %q: %v", f[1], err)
		}
		return testCLI{kind: f[0], version: v}, nil
	}
	return testCLI{}, fmt.Errorf("no \"Terraform vX\" or \"OpenTofu vX\" line in the CLI's version output:\n%s", out)
}

// lacks returns the first of features that cli does not have, if any.
func (cli testCLI) lacks(features ...cliFeature) (cliFeature, bool) {
	for _, f := range features {
		first := f.terraform
		if cli.kind == "OpenTofu" {
			first = f.opentofu
		}
		if first == "" || cli.version.LessThan(version.Must(version.NewVersion(first))) {
			return f, true
		}
	}
	return cliFeature{}, false
}

// needsCLI marks a test that drives a CLI, which needs features of it: with
// -short (no CLI, as make mutate runs the tests) it skips; on a CLI that
// lacks one of features it skips and records the skip as expected (see
// recordExpectedSkip). It fails when the CLI cannot tell its version.
func needsCLI(t *testing.T, features ...cliFeature) {
	t.Helper()
	if testing.Short() {
		t.Skip("drives the Terraform CLI: skipped with -short")
	}
	if len(features) == 0 {
		return
	}
	cli, err := cliUnderTest()
	if err != nil {
		t.Fatal(err)
	}
	if f, lacks := cli.lacks(features...); lacks {
		recordExpectedSkip(t)
		t.Skipf("%s %s: needs %s (%s)", expectedSkipMarker, cli.kind+" "+cli.version.String(), f.name, f.since())
	}
}

// since says which CLI versions have f: "Terraform 1.12.0+, OpenTofu 1.12.0+".
func (f cliFeature) since() string {
	tofu := "no OpenTofu"
	if f.opentofu != "" {
		tofu = "OpenTofu " + f.opentofu + "+"
	}
	return "Terraform " + f.terraform + "+, " + tofu
}

// expectedSkipMarker starts the message of every skip needsCLI makes.
const expectedSkipMarker = "CLI lacks a feature:"

// expectedSkipsEnv names the file to which needsCLI appends, one a line, the
// names of the tests it skipped: scripts/testacc.sh sets it for each stage
// and fails the stage on any skipped test that is not listed there.
const expectedSkipsEnv = "QUEUEY_EXPECTED_SKIPS"

var expectedSkipsMu sync.Mutex

// recordExpectedSkip appends t's name to the file of expectedSkipsEnv.
func recordExpectedSkip(t *testing.T) {
	t.Helper()
	file := os.Getenv(expectedSkipsEnv)
	if file == "" {
		return
	}
	expectedSkipsMu.Lock()
	defer expectedSkipsMu.Unlock()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatalf("recording an expected skip in %s: %v", file, err)
	}
	_, err = fmt.Fprintln(f, t.Name())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("recording an expected skip in %s: %v", file, err)
	}
}

// unitTest runs a CLI-driven unit test (resource.UnitTest: the CLI plans and
// applies with the provider in-process, no broker), which needs features of
// the CLI (needsCLI). With -short it skips: those tests take most of the
// package's time and test the glue, while the rules they reach have fast
// tests of their own (make mutate runs the tests with -short).
func unitTest(t *testing.T, c resource.TestCase, features ...cliFeature) {
	t.Helper()
	needsCLI(t, features...)
	resource.UnitTest(t, c)
}

// declareHoldFromState declares, over AMQP, the hold queue a queuey_hold_queue
// data source describes, with exactly its arguments_json, and returns its name.
func declareHoldFromState(t *testing.T, s *terraform.State, addr string) string {
	t.Helper()
	rs, ok := s.RootModule().Resources[addr]
	if !ok {
		t.Fatalf("%s not in state", addr)
	}
	name := rs.Primary.Attributes["name"]
	var raw map[string]any
	dec := json.NewDecoder(stringsReader(rs.Primary.Attributes["arguments_json"]))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	args := amqp.Table{}
	for k, v := range raw {
		if n, ok := v.(json.Number); ok {
			i, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil {
				t.Fatalf("argument %s = %s is not an integer", k, n)
			}
			args[k] = i
			continue
		}
		args[k] = v
	}
	ch := amqpChannel(t, "/")
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declaring %s with %v: %v", name, args, err)
	}
	return name
}

// The CLI matrix as the features state it: which CLI version runs which test.
func TestCLIFeatures(t *testing.T) {
	t.Parallel()
	all := []cliFeature{featureFunctions, featureMove, featureIdentity, featureQuery, featureActions, featureActionDestroyEvents}
	for _, tt := range []struct {
		versionOutput string
		lacks         string // the names of the features of all it lacks
	}{
		{"Terraform v1.8.5\non linux_amd64\n", "resource identity|list resources and terraform query|actions|actions triggered by destroy events"},
		{"Terraform v1.11.4\non linux_amd64\n", "resource identity|list resources and terraform query|actions|actions triggered by destroy events"},
		{"Terraform v1.14.0\n", "actions triggered by destroy events"},
		{"Terraform v1.16.4\non linux_amd64\n", ""},
		{"Terraform v1.7.5\n", "provider functions|moved across resource types|resource identity|list resources and terraform query|actions|actions triggered by destroy events"},
		{"OpenTofu v1.10.10\non linux_amd64\n", "resource identity|list resources and terraform query|actions|actions triggered by destroy events"},
		{"Warning: the CLI config file is missing\n\nOpenTofu v1.12.6\non linux_amd64\n", "list resources and terraform query|actions|actions triggered by destroy events"},
		{"OpenTofu v1.9.1\n", "moved across resource types|resource identity|list resources and terraform query|actions|actions triggered by destroy events"},
	} {
		cli, err := parseCLIVersion(tt.versionOutput)
		if err != nil {
			t.Errorf("parseCLIVersion(%q): %v", tt.versionOutput, err)
			continue
		}
		var lacks []string
		for _, f := range all {
			if _, no := cli.lacks(f); no {
				lacks = append(lacks, f.name)
			}
		}
		if got := strings.Join(lacks, "|"); got != tt.lacks {
			t.Errorf("%s %s lacks %q, want %q", cli.kind, cli.version, got, tt.lacks)
		}
	}
	if _, err := parseCLIVersion("tofu: command not found"); err == nil {
		t.Error("a version output without a version was read")
	}
}
