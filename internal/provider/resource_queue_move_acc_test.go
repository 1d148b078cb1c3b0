package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-sdk/v2/diag"
	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/schema"
	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/validation"
	"github.com/hashicorp/terraform-plugin-sdk/v2/plugin"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The migration guide's example (examples/guides/migrate), step by step.
const migrateExample = "../../examples/guides/migrate"

// migrationConfig reads a step of the guide's example with the queue
// "orders" renamed to name: each "= \"orders" starts a queue's name.
func migrationConfig(t *testing.T, step, name string) string {
	t.Helper()
	b := orFatal(os.ReadFile(filepath.Join(migrateExample, step, "main.tf")))(t)
	return strings.ReplaceAll(string(b), `= "orders`, `= "`+name)
}

// newMigrationCLI is newTerraformCLI with the test-only rabbitmq provider
// (the stand-in below) installed too: this test binary, started by the CLI
// with serveSourceProviderEnv set.
func newMigrationCLI(t *testing.T, config string) *terraformCLI {
	t.Helper()
	dir := t.TempDir()
	fatalOn(t, os.Symlink(orFatal(os.Executable())(t), filepath.Join(dir, "terraform-provider-rabbitmq")))
	tf := newTerraformCLI(t, config, "cyrilgdn/rabbitmq", dir)
	tf.env = append(tf.env, serveSourceProviderEnv+"=1")
	return tf
}

// TestAccMove_fromRabbitMQQueue runs the migration guide: rabbitmq_queue.orders
// moves into queuey_queue.orders, the dead-letter queue's rabbitmq_queue is
// removed from state without being destroyed, and nothing changes on the
// broker: the plans after it are empty and the message is still there.
func TestAccMove_fromRabbitMQQueue(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureMove)
	t.Parallel()
	name := uniqueName("move")
	cleanupQueues(t, "/", name)
	tf := newMigrationCLI(t, migrationConfig(t, "1-before", name))
	tf.mustRun("apply", "-auto-approve")
	publish(t, amqpChannel(t, "/"), name, 1)

	tf.writeConfig(migrationConfig(t, "2-move", name))
	out := tf.mustRun("plan")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`rabbitmq_queue\.orders has moved to queuey_queue\.orders`),
		// Terraform and OpenTofu word it differently.
		regexp.MustCompile(`rabbitmq_queue\.orders_dead will (no longer be managed by Terraform,|be removed from the OpenTofu state) but will not be destroyed`),
		regexp.MustCompile(`Plan: 0 to add, 0 to change, 0 to destroy`),
	} {
		if !want.MatchString(out) {
			t.Fatalf("plan of the move lacks %s:\n%s", want, out)
		}
	}
	t.Logf("the plan of the move:\n%s", out)
	tf.mustRun("apply", "-auto-approve")
	if out := tf.mustRun("state", "list"); strings.TrimSpace(out) != "queuey_queue.orders" {
		t.Fatalf("state after the move holds:\n%s", out)
	}
	out = tf.mustRun("state", "show", "queuey_queue.orders")
	for _, want := range []string{`dead_queue = "` + name + `.dead"`, `force_destroy = false`, `keep_messages_on_change = false`,
		`message_ttl = "24h"`, `arguments_json = jsonencode(`, `id = "%2F/` + name + `"`} {
		if !saysWords(out, want) {
			t.Errorf("state after the move lacks %s:\n%s", want, out)
		}
	}
	checkStateIdentity(t, tf, name)
	if out := tf.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Fatalf("plan after the move is not empty:\n%s", out)
	}
	// The rabbitmq provider is no longer needed.
	tf.writeConfig(migrationConfig(t, "3-after", name))
	if out := tf.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Fatalf("plan without the rabbitmq provider is not empty:\n%s", out)
	}
	if n := messagesIn(t, "/", name); n != 1 {
		t.Fatalf("after the move %s holds %d messages, want 1", name, n)
	}
	if !queueExists(t, "/", name+topology.DefaultDeadSuffix) {
		t.Fatalf("the move lost %s.dead", name)
	}
}

// TestAccMove_refusesOtherArguments: a rabbitmq_queue with an argument the
// backend never declares is not moved: the plan fails naming it, and state
// and broker are as before.
func TestAccMove_refusesOtherArguments(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureMove)
	t.Parallel()
	name := uniqueName("moveref")
	cleanupQueues(t, "/", name)
	before := strings.Replace(migrationConfig(t, "1-before", name), `"x-max-priority" = 10`, `"x-max-priority" = 10, "x-max-length" = 1000`, 1)
	tf := newMigrationCLI(t, before)
	tf.mustRun("apply", "-auto-approve")

	tf.writeConfig(migrationConfig(t, "2-move", name))
	out, err := tf.run("apply", "-auto-approve")
	if err == nil {
		t.Fatalf("the move of a queue with x-max-length succeeded:\n%s", out)
	}
	for _, want := range []string{"Cannot Move rabbitmq_queue", `settings.arguments_json "x-max-length": rabbitmq_queue has 1000`, "Nothing was moved"} {
		if !strings.Contains(out, want) {
			t.Errorf("error lacks %q:\n%s", want, out)
		}
	}
	if out := tf.mustRun("state", "list"); strings.TrimSpace(out) != "rabbitmq_queue.orders\nrabbitmq_queue.orders_dead" {
		t.Fatalf("state after the refused move holds:\n%s", out)
	}
	q, err := accClient(t).GetQueue(context.Background(), "/", name, broker.Declared)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := intArg(q.Arguments, "x-max-length"); !ok || v != 1000 {
		t.Fatalf("after the refused move %s has arguments %v", name, q.Arguments)
	}
	// The source provider still manages the queues.
	tf.writeConfig(before)
	tf.mustRun("destroy", "-auto-approve")
	if queueExists(t, "/", name) || queueExists(t, "/", name+topology.DefaultDeadSuffix) {
		t.Fatal("destroy through the rabbitmq provider left queues behind")
	}
}

// serveSourceProviderEnv makes the test binary serve the stand-in.
const serveSourceProviderEnv = "QUEUEY_TEST_SERVE_RABBITMQ_PROVIDER"

// A TEST-ONLY stand-in for the rabbitmq_queue resource of cyrilgdn/rabbitmq, which is not on the
// Go module proxy, built as the real provider is, with terraform-plugin-sdk v2 (plugin protocol
// 5): the same schema (name, vhost, one settings block with durable, auto_delete, arguments as a
// map of strings and arguments_json, every change forcing a new queue), hence the same state,
// with just enough of Create and Delete against the management API for the migration tests: a
// Read that keeps the state (the tests delete no queue behind its back), a Create that declares a
// durable queue with its settings' arguments_json (arguments, durable = false and auto_delete =
// true it refuses rather than declare otherwise than the real provider would), and a Delete that
// expects the queue there. It reads the same RABBITMQ_ENDPOINT, RABBITMQ_USERNAME and
// RABBITMQ_PASSWORD as the real provider, through the environment, not the provider block. It is
// never built into the provider: the test binary serves it (TestMain) when the CLI starts it as
// the plugin.

// serveSourceProvider serves the stand-in until the CLI stops it.
func serveSourceProvider() int {
	plugin.Serve(&plugin.ServeOpts{ProviderFunc: func() *schema.Provider {
		return &schema.Provider{ResourcesMap: map[string]*schema.Resource{"rabbitmq_queue": {
			Schema: map[string]*schema.Schema{
				"name":  {Type: schema.TypeString, Required: true, ForceNew: true},
				"vhost": {Type: schema.TypeString, Optional: true, Default: "/", ForceNew: true},
				"settings": {Type: schema.TypeList, Required: true, ForceNew: true, MaxItems: 1, Elem: &schema.Resource{
					Schema: map[string]*schema.Schema{
						"durable":     {Type: schema.TypeBool, Optional: true, Default: false, ForceNew: true},
						"auto_delete": {Type: schema.TypeBool, Optional: true, Default: false, ForceNew: true},
						"arguments": {Type: schema.TypeMap, Optional: true, ForceNew: true, Elem: &schema.Schema{Type: schema.TypeString},
							ConflictsWith: []string{"settings.0.arguments_json"}},
						"arguments_json": {Type: schema.TypeString, Optional: true, ForceNew: true,
							ValidateFunc: validation.StringIsJSON, ConflictsWith: []string{"settings.0.arguments"}},
					},
				}},
			},
			CreateContext: standInQueue,
			ReadContext:   schema.NoopContext,
			DeleteContext: standInQueue,
		}}}
	}})
	return 0
}

// standInQueue is the stand-in's Create and Delete: it declares the queue of d in its vhost, with
// the id the real provider gives it, or deletes it (d has an id then), and it must exist.
func standInQueue(ctx context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
	var args map[string]any
	name, vhost := fmt.Sprint(d.Get("name")), fmt.Sprint(d.Get("vhost"))
	c, err := envClient()
	if d.Id() != "" {
		if err == nil {
			err = c.DeleteQueue(ctx, vhost, name, false)
		}
		return diag.FromErr(err)
	}
	_, hasArgs := d.GetOk("settings.0.arguments") // false when unset or empty: an empty map declares nothing either
	if hasArgs || d.Get("settings.0.durable") != true || d.Get("settings.0.auto_delete") != false {
		// What it cannot declare as the real provider would, it refuses.
		return diag.Errorf("the stand-in declares durable queues that are not auto-delete, with arguments_json only")
	}
	if err == nil {
		err = json.Unmarshal([]byte(cmp.Or(fmt.Sprint(d.Get("settings.0.arguments_json")), "{}")), &args)
	}
	if err == nil {
		err = c.DeclareQueue(ctx, vhost, name, args)
	}
	if err == nil {
		d.SetId(name + "@" + vhost)
	}
	return diag.FromErr(err)
}
