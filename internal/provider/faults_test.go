package provider

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// TestAccFaults_burst runs a plan, apply, refresh and destroy while the
// management API answers 500, 502, 503 and 504, drops connections, loses
// answers (the broker acts, the answer never arrives) and answers slowly:
// the first two attempts of every request fail, well within the default
// retry budget, so everything succeeds.
func TestAccFaults_burst(t *testing.T) {
	name := uniqueName("burst")
	cleanupQueues(t, "/", name)
	p := newFaultProxy(t, nil)
	p.Set(twoFaultsThenPass(status503, drop, status500, lost, status502, slow, status504, drop, lost))
	cfg := fmt.Sprintf(`
provider "queuey" {
  endpoint        = %q
  request_timeout = "2s"
}

resource "queuey_queue" "test" {
  name        = %q
  message_ttl = "30s"
}
`, p.URL, name)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkGone(t, "/", name, name+".dead"),
			func(*terraform.State) error {
				// The destroy went through the faults too.
				seen := p.Seen()
				if slices.ContainsFunc(seen.Records, func(r proxyRecord) bool { return r.Method == "DELETE" && r.Fault != pass }) {
					return nil
				}
				return fmt.Errorf("no DELETE met a fault: %s", seen)
			},
		),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkBrokerQueue(t, "/", name, `{"x-message-ttl":30000}`),
					checkBrokerQueue(t, "/", name+".dead", `{}`),
				),
			},
			{
				// Refresh and plan through the faults: nothing to do.
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
	seen := p.Seen()
	t.Logf("fault proxy: %s", seen)
	if faults := len(seen.Records) - seen.Faults[pass] - seen.Faults[slow]; faults < 10 {
		t.Fatalf("only %d requests met a fault; the test proves little: %s", faults, seen)
	}
}

// TestAccFaults_unresponsive points the provider at a management API that
// accepts requests and never answers: the apply fails within the documented
// bound (retry_budget + request_timeout) with an error naming the endpoint.
func TestAccFaults_unresponsive(t *testing.T) {
	name := uniqueName("hang")
	cleanupQueues(t, "/", name)
	p := newFaultProxy(t, nil)
	p.Set(always(hang))
	// retry_budget 2s plus one last request_timeout of 1s: written out, not
	// computed by the code under test.
	const bound = 3 * time.Second
	var start time.Time
	resource.ParallelTest(t, resource.TestCase{
		// Timed from here: ParallelTest may first wait for other tests.
		PreCheck:                 func() { testAccPreCheck(t); start = time.Now() },
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(`
provider "queuey" {
  endpoint        = %q
  request_timeout = "1s"
  retry_budget    = "2s"
}

resource "queuey_queue" "test" {
  name = %q
}
`, p.URL, name),
				ExpectError: regexp.MustCompile(`at\s+` + regexp.QuoteMeta(p.URL) + `\s+failed:\s+no\s+usable\s+answer\s+within\s+retry_budget\s+2s\s+` +
					`\([0-9]+\s+attempts,\s+request_timeout\s+1s\s+each\):\s+no\s+answer\s+within\s+request_timeout\s+1s[\s\S]*` +
					`Check\s+that\s+the\s+management\s+API\s+answers\s+at\s+` + regexp.QuoteMeta(p.URL)),
			},
		},
	})
	total := time.Since(start)
	seen := p.Seen()
	recs := seen.Records
	t.Logf("fault proxy: %s; test wall time %s", seen, total)
	if len(recs) == 0 {
		t.Error("no request reached the proxy")
	}
	// Every request the provider sent (it may send a few at once) was tried
	// again within the budget.
	for req, n := range seen.Attempts {
		if n < 2 {
			t.Errorf("%s: %d attempts, want at least 2 within retry_budget 2s", req, n)
		}
	}
	if len(recs) > 0 {
		first, last := recs[0].Start, recs[0].End
		for _, r := range recs {
			if r.End.After(last) {
				last = r.End
			}
		}
		// Observed by the proxy: from the first attempt's arrival to the
		// moment the last attempt gave up.
		held := last.Sub(first)
		t.Logf("the provider gave up on the unresponsive broker after %s (bound %s)", held, bound)
		if held > bound+2*time.Second {
			t.Errorf("the provider waited %s for an unresponsive broker; the bound is %s", held, bound)
		}
	}
	// The whole test (terraform init, plan, apply, destroy) on a shared
	// machine: a generous margin, still well below one default 30s attempt.
	if total > bound+25*time.Second {
		t.Errorf("the test took %s; an unresponsive broker must fail within %s per request", total, bound)
	}
}

// TestAccFaults_wrongPassword: a refused password is an authentication error
// naming the user, never the password, and is not retried. It captures the
// logs, where the framework records the full error diagnostic, to check the
// whole message for the password. The password comes from a sensitive
// variable: terraform-plugin-testing logs each step's configuration text at
// TRACE, so a literal in the configuration would show up in its own log lines.
func TestAccFaults_wrongPassword(t *testing.T) {
	const password = "wrong-password-xyz"
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_VAR_queuey_password", password)
	name := uniqueName("authn")
	cleanupQueues(t, "/", name)
	p := newFaultProxy(t, nil)
	user := testUser()
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(`
variable "queuey_password" {
  type      = string
  sensitive = true
}

provider "queuey" {
  endpoint        = %q
  request_timeout = "2s"
  password        = var.queuey_password
}

resource "queuey_queue" "test" {
  name = %q
}
`, p.URL, name),
				ExpectError: regexp.MustCompile(`at\s+` + regexp.QuoteMeta(p.URL) + `\s+failed:\s+HTTP\s+401[\s\S]*` +
					`Authentication\s+failed\s+for\s+user\s+"` + regexp.QuoteMeta(user) + `":\s+check\s+username\s+and\s+password`),
			},
		},
	})
	seen := p.Seen()
	if len(seen.Records) == 0 {
		t.Error("no request reached the proxy")
	}
	for _, r := range seen.Records {
		if r.Status != 401 {
			t.Errorf("%s %s: answered %d, want 401", r.Method, r.URL, r.Status)
		}
	}
	for req, n := range seen.Attempts {
		if n != 1 {
			t.Errorf("%s was sent %d times: a 4xx answer must not be retried", req, n)
		}
	}
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	logs := string(b)
	if !strings.Contains(logs, "Authentication failed for user") {
		t.Fatalf("the log %s does not hold the error diagnostic, so it cannot show that the password stays out of it", logFile)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	for what, secret := range map[string]string{"the password": password, "the Authorization header value": auth} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs (error diagnostics included) contain %s", what)
		}
	}
}

// TestAccFaults_cutOff cuts the management API off in the middle of an apply
// of 20 queues: the apply fails saying what it could not do, and once the API
// is back the same apply converges, each q with its q.dead, nothing left
// half-declared.
func TestAccFaults_cutOff(t *testing.T) {
	const n = 20
	base := uniqueName("cut")
	cleanupQueues(t, "/", base+"-")
	p := newFaultProxy(t, nil)
	cfg := proxiedQueuesConfig(p.URL, "  request_timeout = \"2s\"\n  retry_budget    = \"1s\"", base, n, `  message_ttl = "1m"`)
	var checks []resource.TestCheckFunc
	for i := range n {
		q := fmt.Sprintf("%s-%d", base, i)
		checks = append(checks,
			checkBrokerQueue(t, "/", q, `{"x-message-ttl":60000}`),
			checkBrokerQueue(t, "/", q+".dead", `{}`))
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", queueNames(base, n)...),
		Steps: []resource.TestStep{
			{
				// Planning a create needs no broker; the apply meets the cut
				// after 30 PUTs, however Terraform interleaves its creates (up
				// to 10 at once). A create PUTs q.dead, then q once q.dead is
				// declared; nothing else is PUT. Each q declared took two of
				// the 30, so at most 15 are; at most 20 of the 30 are q.dead's
				// first PUT, so at least 10, less any retry of a q.dead (rare
				// before any fault), are q's: some but not all q are declared.
				PreConfig: func() { p.After(http.MethodPut, 30, drop) },
				Config:    cfg,
				ExpectError: regexp.MustCompile(`(Cannot\s+(Use\s+Vhost|List\s+Queues|Declare\s+Queue)|Management\s+API\s+Unreachable)[\s\S]*` +
					`at\s+` + regexp.QuoteMeta(p.URL) + `\s+failed:\s+no\s+usable\s+answer\s+within\s+retry_budget`),
			},
			{
				PreConfig: func() {
					names, err := queuesWithPrefix(accClient(t), "/", base+"-")
					if err != nil {
						t.Fatal(err)
					}
					deads := len(slices.DeleteFunc(slices.Clone(names), func(q string) bool { return !strings.HasSuffix(q, ".dead") }))
					mains := len(names) - deads
					t.Logf("after the cut: %d of %d main queues and %d dead-letter queues declared; %s", mains, n, deads, p.Seen())
					if mains == 0 || mains == n {
						t.Errorf("the cut came too early or too late: %d of %d queues were declared before it, want some but not all", mains, n)
					}
					p.Set(always(pass))
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					onlyCreatesOrNoOps{},
				}},
				Check: resource.ComposeAggregateTestCheckFunc(checks...),
			},
			{
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// onlyCreatesOrNoOps asserts that a plan holds nothing but creates and no-ops:
// no update, replacement or destroy. (That it creates what the cut left
// missing is the step's to check: its PreConfig wants some queues missing, and
// its check wants every queue on the broker after the apply.)
type onlyCreatesOrNoOps struct{}

func (onlyCreatesOrNoOps) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if a := rc.Change.Actions; !a.Create() && !a.NoOp() && !a.Read() {
			resp.Error = fmt.Errorf("%s: planned %v, want create or no-op", rc.Address, a)
			return
		}
	}
}

var _ plancheck.PlanCheck = onlyCreatesOrNoOps{}

// TestFaults_missingEndpoint: what needs the broker, with no endpoint
// configured anywhere, says at plan which setting or environment variable to
// give. Each step only plans, so an error that came at apply instead would
// leave a non-empty plan and fail the step. No broker is needed.
func TestFaults_missingEndpoint(t *testing.T) {
	t.Setenv(EnvEndpoint, "")
	want := regexp.MustCompile("Missing\\s+Management\\s+API\\s+Endpoint[\\s\\S]*Set\\s+`endpoint`\\s+in\\s+the\\s+provider\\s+\"queuey\"\\s+block,\\s+or\\s+the\\s+" +
		EnvEndpoint + "\\s+environment\\s+variable")
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				// Nothing can be created without the broker: the plan says so.
				PlanOnly: true,
				Config: `
provider "queuey" {}

resource "queuey_queue" "test" {
  name = "orders"
}
`,
				ExpectError: want,
			},
			{
				// The live data source reads at plan time.
				PlanOnly: true,
				Config: `
provider "queuey" {}

data "queuey_hold_queues" "test" {
  queue = "orders"
}
`,
				ExpectError: want,
			},
		},
	})
}

// TestAccFaults_permissionDenied: RabbitMQ answers 401 both for a wrong
// password and for a user it knows but does not allow (no management tag, no
// permission on the queue); the last two are permission errors naming the
// user and what it lacks, not "check the password".
func TestAccFaults_permissionDenied(t *testing.T) {
	testAccPreCheck(t)
	password := "perm-" + uniqueName("pw")
	noTag := uniqueName("notag-user")
	restricted := uniqueName("restricted-user")
	for user, tags := range map[string]string{noTag: "", restricted: "management"} {
		// Permission only on queues no test declares.
		createUser(t, user, password, tags, "/", brokertest.Permissions{Configure: "^nothing-here$", Write: "^nothing-here$", Read: "^nothing-here$"})
	}
	name := uniqueName("perm")
	cleanupQueues(t, "/", name)
	cfg := func(user string) string {
		return fmt.Sprintf(`
provider "queuey" {
  endpoint        = %q
  username        = %q
  password        = %q
  request_timeout = "5s"
}

resource "queuey_queue" "test" {
  name = %q
}
`, os.Getenv(EnvEndpoint), user, password, name)
	}
	lacks := func(user, reason string) *regexp.Regexp {
		return regexp.MustCompile(`HTTP\s+401:\s+` + strings.ReplaceAll(regexp.QuoteMeta(reason), " ", `\s+`) + `[\s\S]*User\s+"` +
			regexp.QuoteMeta(user) + `"\s+lacks\s+permission`)
	}
	resource.ParallelTest(t, queueCase(t, name, []resource.TestStep{
		{Config: cfg(noTag), ExpectError: lacks(noTag, "Not management user")},
		{Config: cfg(restricted), ExpectError: lacks(restricted, "Access refused")},
	}))
}

// TestAccFaults_leastPrivilege backs the operating guide's permission advice:
// a Terraform user with the management tag and only configure permission on
// queues_pattern (no write, no read, no administrator tag) creates, reads and
// destroys a queue with its hold queues; an application user with configure
// and read on queues_pattern and write on write_pattern declares all three
// kinds of queue exactly as the backend does, publishes into a hold queue
// through the default exchange and gets the message back from q.
func TestAccFaults_leastPrivilege(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("least")
	cleanupQueues(t, "/", name)
	s := topology.DefaultSuffixes()
	queuesPattern, writePattern := topology.QueuesPattern(name, s), topology.WritePattern(name, s)
	tfUser, appUser := uniqueName("tf-user"), uniqueName("app-user")
	password := "least-" + uniqueName("pw")
	for user, grant := range map[string][4]string{
		tfUser:  {"management", queuesPattern, "^$", "^$"},
		appUser: {"", queuesPattern, writePattern, queuesPattern},
	} {
		createUser(t, user, password, grant[0], "/", brokertest.Permissions{Configure: grant[1], Write: grant[2], Read: grant[3]})
	}
	// An hour, q's message TTL and its hold queue's: the hold queue, deleted
	// two hours after its last use, is still there for the destroy.
	const hour = int64(3600000)
	hold := topology.HoldQueueName(name, hour, s)
	cfg := fmt.Sprintf(`
provider "queuey" {
  endpoint = %q
  username = %q
  password = %q
}

resource "queuey_queue" "test" {
  name        = %q
  message_ttl = "1h"
}

data "queuey_hold_queues" "test" {
  queue = queuey_queue.test.name
}
`, os.Getenv(EnvEndpoint), tfUser, password, name)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		// Destroy, as the Terraform user, deleted the hold queue too.
		CheckDestroy: checkGone(t, "/", name, name+".dead", hold),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() { applicationRoundTrip(t, appUser, password, name, hour) },
				Config:    cfg,
			},
		},
	})
}

// applicationRoundTrip does what the backend does as user: declares q.dead,
// q (message TTL ttl) and q's hold queue for ttl with the computed arguments,
// publishes into the hold queue through the default exchange and waits for
// the message in q. The message is published expired (per-message TTL 0), so
// that it comes back at once however long ttl is: a long ttl keeps the hold
// queue (deleted after twice ttl unused) there for the rest of the test.
func applicationRoundTrip(t *testing.T, user, password, name string, ttl int64) {
	t.Helper()
	u, err := url.Parse(amqpURL("/"))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, password)
	ch := amqpChannelAt(t, u.String())
	s := topology.DefaultSuffixes()
	hold := topology.HoldQueueName(name, ttl, s)
	mainArgs, merr := topology.QueueArgs(&ttl, nil)
	holdArgs, herr := topology.HoldQueueArgs(name, ttl)
	if err := errors.Join(merr, herr); err != nil {
		t.Fatal(err)
	}
	for _, q := range []topology.Queue{
		{Name: topology.DeadQueueName(name, s), Args: topology.DeadQueueArgs()},
		{Name: name, Args: mainArgs},
		{Name: hold, Args: holdArgs},
	} {
		if _, err := ch.QueueDeclare(q.Name, true, false, false, false, amqp.Table(q.Args.Map())); err != nil {
			t.Fatalf("the application user cannot declare %q: %v", q.Name, err)
		}
	}
	if err := ch.PublishWithContext(t.Context(), "", hold, true, false, amqp.Publishing{Body: []byte("later"), Expiration: "0"}); err != nil {
		t.Fatalf("the application user cannot publish to %q: %v", hold, err)
	}
	var back amqp.Delivery
	waitFor(t, fmt.Sprintf("the message published into %q to reach %q", hold, name), func() bool {
		d, ok, err := ch.Get(name, true)
		if err != nil {
			t.Fatalf("the application user cannot get from %q: %v", name, err)
		}
		back = d
		return ok
	})
	// It came back as a retry does: dead-lettered from the hold queue on expiry.
	var first amqp.Table
	if deaths, _ := back.Headers["x-death"].([]any); len(deaths) > 0 {
		first, _ = deaths[0].(amqp.Table)
	}
	if first["queue"] != hold || first["reason"] != "expired" {
		t.Fatalf("the message in %q did not come from %q on expiry: x-death %v", name, hold, back.Headers["x-death"])
	}
}

// TestAccFaults_vhostPermissionRevoked: a user whose permissions in the
// vhost were taken away gets an error naming the vhost access, from refresh
// and from destroy, and neither takes the queue for gone (RabbitMQ 3.10 and
// 4.0 answer such a user 401, 4.3 answers 404 as if the vhost did not exist).
func TestAccFaults_vhostPermissionRevoked(t *testing.T) {
	testAccPreCheck(t)
	c := accAdmin(t)
	ctx := context.Background()
	vhost := uniqueName("revoked")
	createVhost(t, vhost, "")
	user, password := uniqueName("revoked-user"), "revoked-"+uniqueName("pw")
	createUser(t, user, password, "management", vhost, allPermissions)
	grant := func() {
		if err := c.SetPermissions(ctx, vhost, user, allPermissions); err != nil {
			t.Fatal(err)
		}
	}
	revoke := func() {
		if err := c.DeletePermissions(ctx, vhost, user); err != nil {
			t.Fatal(err)
		}
	}
	grant()
	name := uniqueName("revoked-q")
	cfg := fmt.Sprintf(`
provider "queuey" {
  endpoint = %q
  username = %q
  password = %q
  vhost    = %q
}

resource "queuey_queue" "test" {
  name = %q
}
`, os.Getenv(EnvEndpoint), user, password, vhost, name)
	holdQueues := cfg + `
data "queuey_hold_queues" "test" {
  queue = queuey_queue.test.name
}
`
	noAccess := regexp.MustCompile(`(User\s+"` + regexp.QuoteMeta(user) + `"\s+lacks\s+permission\s+for\s+this:\s+it\s+has\s+no\s+access\s+to\s+the\s+vhost|` +
		`Vhost\s+"` + regexp.QuoteMeta(vhost) + `"\s+is\s+not\s+among\s+the\s+vhosts\s+user\s+"` + regexp.QuoteMeta(user) + `"\s+can\s+access)`)
	stillThere := func() {
		if !queueExists(t, vhost, name) || !queueExists(t, vhost, name+".dead") {
			t.Fatalf("the queues of %s are gone", name)
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, vhost, name, name+".dead"),
		Steps: []resource.TestStep{
			{Config: cfg},
			{PreConfig: revoke, Config: holdQueues, ExpectError: noAccess},
			{PreConfig: stillThere, Config: cfg, Destroy: true, ExpectError: noAccess},
			{
				PreConfig: func() { stillThere(); grant() },
				Config:    holdQueues,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionNoop),
				}},
			},
		},
	})
}

// proxiedQueuesConfig is a provider pointed at endpoint with the given extra
// provider settings, and count queuey_queue resources named
// <base>-0 ... <base>-<count-1> with the given extra resource arguments.
func proxiedQueuesConfig(endpoint, providerExtra, base string, count int, resourceExtra string) string {
	return fmt.Sprintf(`
provider "queuey" {
  endpoint = %q
%s
}

resource "queuey_queue" "q" {
  count = %d
  name  = "%s-${count.index}"
%s
}
`, endpoint, providerExtra, count, base, resourceExtra)
}

// queueNames lists <base>-i and <base>-i.dead for i below count.
func queueNames(base string, count int) []string {
	out := make([]string, 0, 2*count)
	for i := range count {
		q := fmt.Sprintf("%s-%d", base, i)
		out = append(out, q, q+".dead")
	}
	return out
}
