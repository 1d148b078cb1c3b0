package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// e2eConfig is a whole configuration of the CLI tests: queuey_queue.test named name, with a 5 s
// message TTL and 10 priorities.
func e2eConfig(name string) string {
	return requiredQueuey + queueConfig(name, "  message_ttl  = \"5000ms\"\n  max_priority = 10")
}

func TestAccCLI_planWarnsBeforeLosingMessages(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	name := uniqueName("warn")
	cleanupQueues(t, "/", name)
	// An hour's message TTL (not e2eConfig's 5s) keeps the published messages
	// for the whole test however slowly the CLI runs on a busy machine.
	config := strings.Replace(e2eConfig(name), `"5000ms"`, `"1h"`, 1)
	tf := newTerraformCLI(t, config)
	tf.mustRun("apply", "-auto-approve")
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(tf.dir, "main.tf"), []byte(strings.Replace(config, "max_priority = 10", "max_priority = 10\n  force_destroy = true", 1)), 0o600)
		_, _ = tf.run("apply", "-auto-approve")
		_, _ = tf.run("destroy", "-auto-approve")
	})
	publish(t, amqpChannel(t, "/"), name, 2)

	// A planned destroy shows the counts and what will happen.
	out := tf.mustRun("plan", "-destroy")
	want := regexp.MustCompile(`(?s)Warning: Queue Holds Messages.*` + regexp.QuoteMeta(name) + `: 2 messages, 0 consumers.*Destroy will refuse`)
	if !want.MatchString(out) {
		t.Fatalf("plan -destroy output lacks the warning:\n%s", out)
	}
	// So does a planned replacement (a new name).
	renamed := strings.Replace(config, fmt.Sprintf("%q", name), fmt.Sprintf("%q", name+"-b"), 1)
	tf.writeConfig(renamed)
	out = tf.mustRun("plan")
	if !regexp.MustCompile(`(?s)must be replaced.*Warning: Queue Holds Messages.*2 messages`).MatchString(out) {
		t.Fatalf("plan of a replacement lacks the warning:\n%s", out)
	}
	// And the destroy itself refuses, losing nothing.
	out, err := tf.run("destroy", "-auto-approve")
	if err == nil || !strings.Contains(out, "Queue Not Empty: Destroy Refused") {
		t.Fatalf("destroy of a queue holding messages did not refuse: %v\n%s", err, out)
	}
	if n := messagesIn(t, "/", name); n != 2 {
		t.Fatalf("after a refused destroy the queue holds %d messages, want 2", n)
	}
	t.Logf("a refused destroy prints:\n%s", out)
}
