package provider

// Acceptance tests of what differs between the RabbitMQ versions make test
// runs against (3.10, 4.0 and 4.3): they pass on every one of them.

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestAccQueue_amqpDeclaredAdoptAndImport: queues an application declared
// over AMQP (RabbitMQ 3.13 and later report them with x-queue-type
// "classic" in their arguments) are adopted by a create and imported with
// empty plans after, and their x-queue-type is never drift.
func TestAccQueue_amqpDeclaredAdoptAndImport(t *testing.T) {
	testAccPreCheck(t)
	adopt, imported := uniqueName("amqp-adopt"), uniqueName("amqp-import")
	cleanupQueues(t, "/", adopt)
	cleanupQueues(t, "/", imported)
	// Declared as the application does, spelled out here.
	ch := amqpChannel(t, "/")
	for _, name := range []string{adopt, imported} {
		for q, args := range map[string]amqp.Table{name + ".dead": nil, name: {"x-message-ttl": int32(60000)}} {
			if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
				t.Fatalf("declaring %s over AMQP: %v", q, err)
			}
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", adopt, adopt+".dead", imported, imported+".dead"),
		Steps: []resource.TestStep{
			{
				Config: queueConfig(adopt, `  message_ttl = "1m"`),
				Check:  checkBrokerQueue(t, "/", adopt, `{"x-message-ttl":60000}`),
			},
			{
				Config: queueConfig(adopt, `  message_ttl = "1m"`) + fmt.Sprintf(`
import {
  to = queuey_queue.imported
  id = %q
}

resource "queuey_queue" "imported" {
  name        = %q
  message_ttl = "60s"
}
`, queueID("/", imported), imported),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("queuey_queue.imported", plancheck.ResourceActionNoop),
				}},
			},
		},
	})
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
		if !managementHas(t, vhost, name) || !managementHas(t, vhost, name+".dead") {
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

// TestAccNodeQuorum_refused runs only against a node whose rabbitmq.conf
// sets default_queue_type = quorum (make test's node-quorum stage starts
// one): a vhost that sets no default queue type then makes quorum queues,
// and is refused with an error naming the setting; a vhost that sets classic
// works.
func TestAccNodeQuorum_refused(t *testing.T) {
	testAccPreCheck(t)
	if got := nodeDefaultQueueType(t); got != "quorum" {
		t.Skipf("the broker's default_queue_type is %q: this test needs a node with default_queue_type = quorum in rabbitmq.conf", got)
	}
	plain, classic := uniqueName("node-plain"), uniqueName("node-classic")
	createVhost(t, plain, "")
	createVhost(t, classic, "classic")
	name := uniqueName("nodeq")
	refused := regexp.MustCompile(`makes\s+quorum\s+queues\s+by\s+default[\s\S]*default_queue_type[\s\S]*rabbitmq\.conf`)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, classic, name, name+".dead"),
		Steps: []resource.TestStep{
			{Config: queueConfig(name, `  vhost = "/"`), ExpectError: refused},
			{Config: queueConfig(name, fmt.Sprintf("  vhost = %q", plain)), ExpectError: refused},
			{
				Config: queueConfig(name, fmt.Sprintf("  vhost = %q", classic)),
				Check:  checkBrokerQueue(t, classic, name, `{}`),
			},
		},
	})
	for _, vhost := range []string{"/", plain} {
		if queueExists(t, vhost, name) || queueExists(t, vhost, name+".dead") {
			t.Errorf("a refused create declared a queue in vhost %q", vhost)
		}
	}
}

// nodeDefaultQueueType is the default_queue_type the test broker reports in
// /api/overview ("" when it reports none, as 3.10 does).
func nodeDefaultQueueType(t *testing.T) string {
	t.Helper()
	got, err := accClient(t).NodeDefaultQueueType(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}
