package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
)

// skipBelowCLI skips a CLI-driven test on a CLI older than min, or on
// OpenTofu when the feature is Terraform's alone. scripts/testacc.sh leaves
// such tests out of the stages whose CLI lacks the feature, so a skip there
// never passes for a run.
func skipBelowCLI(t *testing.T, tf *terraformCLI, minVersion string, terraformOnly bool) {
	t.Helper()
	out, err := tf.run("version", "-json")
	if err != nil {
		t.Fatalf("version: %v\n%s", err, out)
	}
	var v struct {
		Terraform string `json:"terraform_version"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version -json: %v\n%s", err, out)
	}
	have, err := version.NewVersion(v.Terraform)
	if err != nil {
		t.Fatalf("version %q: %v", v.Terraform, err)
	}
	isTofu := strings.Contains(filepath.Base(os.Getenv("TF_ACC_TERRAFORM_PATH")), "tofu")
	if have.LessThan(version.Must(version.NewVersion(minVersion))) || (terraformOnly && isTofu) {
		t.Skipf("needs Terraform %s or later; the CLI is %s %s", minVersion, map[bool]string{true: "OpenTofu", false: "Terraform"}[isTofu], have)
	}
}

// terraform query -generate-config-out writes a resource and an import block
// per logical queue; planning that file imports them all and changes nothing,
// and applying it leaves the broker and its messages as they were.
func TestAccQuery_generateConfigOut(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	vhost := listVhost(t)
	publishOn(t, amqpChannel(t, vhost), "orders", 3)
	tf := newTerraformCLI(t, `terraform {
  required_providers {
    queuey = { source = "queuey/queuey" }
  }
}

provider "queuey" {}
`)
	skipBelowCLI(t, tf, "1.14.0", true)
	query := fmt.Sprintf(`list "queuey_queue" "all" {
  provider = queuey
  limit    = 1000
  config {
    vhost = %q
  }
}
`, vhost)
	if err := os.WriteFile(filepath.Join(tf.dir, "queues.tfquery.hcl"), []byte(query), 0o600); err != nil {
		t.Fatal(err)
	}
	before := vhostQueues(t, vhost)

	out := tf.mustRun("query", "-generate-config-out=generated.tf")
	if !regexp.MustCompile(`(?s)Queues Not Listed.*odd: x-max-length is not declared by the backend`).MatchString(out) {
		t.Errorf("query output lacks the near-miss warning:\n%s", out)
	}
	generated, err := os.ReadFile(filepath.Join(tf.dir, "generated.tf"))
	if err != nil {
		t.Fatalf("query wrote no generated.tf: %v\n%s", err, out)
	}
	for _, want := range []string{`name`, `"orders"`, `"plain"`, `message_ttl`, `"24h"`, `max_priority`, `import {`} {
		if !strings.Contains(string(generated), want) {
			t.Errorf("generated.tf lacks %s:\n%s", want, generated)
		}
	}
	if strings.Contains(string(generated), `"odd"`) || strings.Contains(string(generated), `"orders.dead"`) {
		t.Errorf("generated.tf holds a queue that is not a logical queue of the backend:\n%s", generated)
	}

	out = tf.mustRun("plan")
	if !strings.Contains(out, "Plan: 2 to import, 0 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("plan of the generated config is not 2 imports and nothing else:\n%s\ngenerated.tf:\n%s", out, generated)
	}
	out = tf.mustRun("apply", "-auto-approve")
	if !strings.Contains(out, "2 imported, 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the generated config:\n%s", out)
	}
	if after := vhostQueues(t, vhost); after != before {
		t.Errorf("the broker changed:\nbefore %s\nafter  %s", before, after)
	}
	if n := messagesIn(t, vhost, "orders"); n != 3 {
		t.Errorf("orders holds %d messages after the import, want the 3 published", n)
	}
	if out = tf.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("plan after the import is not empty:\n%s", out)
	}
	// The state leaves the queues to the test's vhost cleanup.
	tf.mustRun("state", "rm", "queuey_queue.all_0", "queuey_queue.all_1")
}

// vhostQueues renders the declarations of a vhost's queues, sorted.
func vhostQueues(t *testing.T, vhost string) string {
	t.Helper()
	all, err := accClient(t).ListQueueDeclarations(context.Background(), vhost)
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]string, 0, len(all))
	for name, q := range all {
		args, _ := json.Marshal(q.Arguments)
		lines = append(lines, fmt.Sprintf("%s durable=%t auto_delete=%t %s", name, q.Durable, q.AutoDelete, args))
	}
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}

// messagesIn counts the messages of a queue in vhost with a passive declare.
func messagesIn(t *testing.T, vhost, queue string) int {
	t.Helper()
	q, err := amqpChannel(t, vhost).QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return q.Messages
}
