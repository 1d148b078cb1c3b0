package provider

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests run the real terraform CLI (or OpenTofu's, whichever
// TF_ACC_TERRAFORM_PATH names) against the provider binary built
// from this tree, through a dev_overrides CLI configuration, as a user does:
// they see what terraform-plugin-testing cannot show, such as warnings.

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

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

func e2eConfig(name string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    queuey = { source = "queuey/queuey" }
  }
}

provider "queuey" {}

resource "queuey_queue" "orders" {
  name         = %q
  message_ttl  = "5000ms"
  max_priority = 10
}
`, name)
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
	publish(t, name, 2)

	// A planned destroy shows the counts and what will happen.
	out := tf.mustRun("plan", "-destroy")
	want := regexp.MustCompile(`(?s)Warning: Queue Holds Messages.*` + regexp.QuoteMeta(name) + `: 2 messages, 0 consumers.*Destroy will refuse`)
	if !want.MatchString(out) {
		t.Fatalf("plan -destroy output lacks the warning:\n%s", out)
	}
	// So does a planned replacement.
	if err := os.WriteFile(filepath.Join(tf.dir, "main.tf"), []byte(strings.Replace(config, `"1h"`, `"2h"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out = tf.mustRun("plan")
	if !regexp.MustCompile(`(?s)must be replaced.*Warning: Queue Holds Messages.*2 messages`).MatchString(out) {
		t.Fatalf("plan of a replacement lacks the warning:\n%s", out)
	}
	// And the destroy itself refuses, losing nothing.
	out, err := tf.run("destroy", "-auto-approve")
	if err == nil || !strings.Contains(out, "Queue Not Empty: Destroy Refused") {
		t.Fatalf("destroy of a queue holding messages did not refuse: %v\n%s", err, out)
	}
	if n := messageCount(t, name); n != 2 {
		t.Fatalf("after a refused destroy the queue holds %d messages, want 2", n)
	}
	t.Logf("a refused destroy prints:\n%s", out)
}

func TestAccCLI_importCommand(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	name := uniqueName("cliimport")
	cleanupQueues(t, "/", name)
	// The queues exist already, declared as an application would.
	c := accClient(t)
	for q, args := range map[string]map[string]any{
		name:           {"x-message-ttl": 5000, "x-max-priority": 10},
		name + ".dead": {},
	} {
		if err := c.DeclareQueue(context.Background(), "/", q, args); err != nil {
			t.Fatal(err)
		}
	}
	tf := newTerraformCLI(t, e2eConfig(name))
	out := tf.mustRun("import", "queuey_queue.orders", "%2F/"+name)
	if !strings.Contains(out, "Import successful") {
		t.Fatalf("import output:\n%s", out)
	}
	// The config spells the TTL "5000ms", Read renders "5s": still no change.
	out = tf.mustRun("plan", "-detailed-exitcode")
	if !strings.Contains(out, "No changes.") {
		t.Fatalf("plan after import is not empty:\n%s", out)
	}
	out = tf.mustRun("state", "show", "queuey_queue.orders")
	for _, want := range []string{`force_destroy      = false`, `id                 = "%2F/` + name + `"`} {
		if !strings.Contains(out, want) {
			t.Errorf("state after import lacks %s:\n%s", want, out)
		}
	}
	tf.mustRun("destroy", "-auto-approve")
	if queueExists(t, "/", name) || queueExists(t, "/", name+".dead") {
		t.Fatal("destroy left queues behind")
	}
}
