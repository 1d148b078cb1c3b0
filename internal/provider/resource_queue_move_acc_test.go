package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The migration guide's example (examples/guides/migrate), step by step.
const migrateExample = "../../examples/guides/migrate"

// migrationConfig reads a step of the guide's example with the queue
// "orders" renamed to name.
func migrationConfig(t *testing.T, step, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(migrateExample, step, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`(?m)^(\s*name\s*=\s*)"orders(\.dead)?"`)
	return names.ReplaceAllString(string(b), fmt.Sprintf("${1}%q", name+"${2}"))
}

// newMigrationCLI is newTerraformCLI with the test-only rabbitmq provider
// (source_provider_test.go) installed too, under both registry hostnames:
// this test binary, started by the CLI with serveSourceProviderEnv set.
func newMigrationCLI(t *testing.T, config string) *terraformCLI {
	t.Helper()
	tf := newTerraformCLI(t, config)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, "terraform-provider-rabbitmq")); err != nil {
		t.Fatal(err)
	}
	rc, err := os.ReadFile(tf.rc)
	if err != nil {
		t.Fatal(err)
	}
	overrides := fmt.Sprintf("dev_overrides {\n    \"registry.terraform.io/cyrilgdn/rabbitmq\" = %[1]q\n    \"registry.opentofu.org/cyrilgdn/rabbitmq\" = %[1]q", dir)
	if err := os.WriteFile(tf.rc, []byte(strings.Replace(string(rc), "dev_overrides {", overrides, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	tf.env = []string{serveSourceProviderEnv + "=1"}
	return tf
}

func (c *terraformCLI) writeConfig(config string) {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(config), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// TestAccMove_fromRabbitMQQueue runs the migration guide: rabbitmq_queue.orders
// moves into queuey_queue.orders, the dead-letter queue's rabbitmq_queue is
// removed from state without being destroyed, and nothing changes on the
// broker: the plans after it are empty and the message is still there.
func TestAccMove_fromRabbitMQQueue(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	name := uniqueName("move")
	cleanupQueues(t, "/", name)
	tf := newMigrationCLI(t, migrationConfig(t, "1-before", name))
	// moved across resource types: Terraform 1.8, OpenTofu 1.10.
	skipBelowCLI(t, tf, "1.8.0", false)
	tf.mustRun("apply", "-auto-approve")
	publish(t, name, 1)

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
	for _, want := range []string{`dead_queue         = "` + name + `.dead"`, `force_destroy      = false`, `message_ttl        = "24h"`,
		`arguments_json     = jsonencode(`, `id                 = "%2F/` + name + `"`} {
		if !strings.Contains(out, want) {
			t.Errorf("state after the move lacks %s:\n%s", want, out)
		}
	}
	checkMovedIdentity(t, tf, name)
	if out := tf.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Fatalf("plan after the move is not empty:\n%s", out)
	}
	// The rabbitmq provider is no longer needed.
	tf.writeConfig(migrationConfig(t, "3-after", name))
	if out := tf.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Fatalf("plan without the rabbitmq provider is not empty:\n%s", out)
	}
	if n := messageCount(t, name); n != 1 {
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
	t.Parallel()
	name := uniqueName("moveref")
	cleanupQueues(t, "/", name)
	before := strings.Replace(migrationConfig(t, "1-before", name), `"x-max-priority" = 10`, `"x-max-priority" = 10, "x-max-length" = 1000`, 1)
	tf := newMigrationCLI(t, before)
	skipBelowCLI(t, tf, "1.8.0", false)
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
	q, err := accClient(t).GetQueue(context.Background(), "/", name)
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

// checkMovedIdentity checks, on a CLI with resource identity (Terraform or
// OpenTofu 1.12 and later), that the state records the moved queue's
// identity: its name and vhost.
func checkMovedIdentity(t *testing.T, tf *terraformCLI, name string) {
	t.Helper()
	out := tf.mustRun("version", "-json")
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version -json: %v\n%s", err, out)
	}
	if version.Must(version.NewVersion(v.Version)).LessThan(version.Must(version.NewVersion("1.12.0"))) {
		t.Logf("CLI %s has no resource identity: not checked", v.Version)
		return
	}
	raw, err := os.ReadFile(filepath.Join(tf.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Type      string `json:"type"`
			Instances []struct {
				Identity map[string]any `json:"identity"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	for _, r := range state.Resources {
		if r.Type != "queuey_queue" || len(r.Instances) != 1 {
			continue
		}
		if got := fmt.Sprint(r.Instances[0].Identity); got != fmt.Sprint(map[string]any{"name": name, "vhost": "/"}) {
			t.Fatalf("identity of the moved queue: %s", got)
		}
		return
	}
	t.Fatalf("no queuey_queue in state:\n%s", raw)
}
