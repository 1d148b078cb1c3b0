package provider

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// terraformWithParallelism points terraform-plugin-testing (through
// TF_ACC_TERRAFORM_PATH) at a wrapper of the real terraform binary that runs
// every command with -parallelism=n, and returns the file where the wrapper
// writes each command line it ran.
//
// Why a wrapper: terraform-plugin-testing has no parallelism setting, and
// terraform-exec passes -parallelism=10 explicitly to plan, apply and
// destroy. TF_CLI_ARGS_apply=-parallelism=20 does reach Terraform, but
// Terraform inserts those arguments before the command line's own, so the
// explicit -parallelism=10 that follows wins (Terraform's TRACE log shows
// "CLI command args: [apply -parallelism=20 ... -parallelism=10 ...]").
func terraformWithParallelism(t *testing.T, n int) string {
	t.Helper()
	tfBin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tfBin == "" {
		var err error
		if tfBin, err = exec.LookPath("terraform"); err != nil {
			t.Fatalf("no terraform binary: %v", err)
		}
	}
	dir := t.TempDir()
	argLog := filepath.Join(dir, "commands.log")
	wrapper := filepath.Join(dir, "terraform")
	script := fmt.Sprintf(`#!/bin/sh
# Runs terraform with every -parallelism=N replaced by -parallelism=%d.
for a in "$@"; do
  shift
  case "$a" in
    -parallelism=*) set -- "$@" "-parallelism=%d" ;;
    *) set -- "$@" "$a" ;;
  esac
done
echo "$*" >> %q
exec %q "$@"
`, n, n, argLog, tfBin)
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_ACC_TERRAFORM_PATH", wrapper)
	return argLog
}

// TestAccConcurrency_fiftyQueues applies and destroys 50 queuey_queue
// resources with a parallelism of 20: no error, and no queue left behind.
func TestAccConcurrency_fiftyQueues(t *testing.T) {
	testAccPreCheck(t)
	const n, parallelism = 50, 20
	argLog := terraformWithParallelism(t, parallelism)
	base := uniqueName("conc")
	cleanupQueues(t, "/", base+"-")
	// Through a proxy that holds every request 100ms, so that the operations
	// Terraform runs at once overlap at the broker and the proxy can count
	// the requests in flight.
	p := newFaultProxy(t)
	p.SetDelay(100 * time.Millisecond)
	p.Set(always(slow))
	cfg := proxiedQueuesConfig(p.URL, `  request_timeout = "10s"`, base, n, `  max_priority = 2`)
	names := queueNames(base, n)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			all, err := accClient(t).ListQueues(context.Background(), "/")
			if err != nil {
				return err
			}
			var left []string
			for _, name := range names {
				if _, ok := all[name]; ok {
					left = append(left, name)
				}
			}
			if len(left) > 0 {
				return fmt.Errorf("%d of %d queues left after destroy: %s", len(left), len(names), strings.Join(left, ", "))
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkStateCount("queuey_queue", n),
					func(*terraform.State) error {
						all, err := accClient(t).ListQueues(context.Background(), "/")
						if err != nil {
							return err
						}
						for i := range n {
							q := fmt.Sprintf("%s-%d", base, i)
							if all[q].Name == "" {
								return fmt.Errorf("queue %q missing", q)
							}
							if err := declaredAs(all[q], `{"x-max-priority":2}`); err != nil {
								return err
							}
							if _, ok := all[q+".dead"]; !ok {
								return fmt.Errorf("queue %q missing", q+".dead")
							}
						}
						return nil
					},
				),
			},
		},
	})
	// Each of the 20 operations at a time has a request in flight (nothing
	// serialises them), and none has more than its vhost check and the
	// look-ups of its two queues (nothing fans out per queue).
	inflight := p.MaxInflight()
	t.Logf("fault proxy (slow): %s, at most %d in flight at once", p.Summary(), inflight)
	if inflight < parallelism || inflight > 3*parallelism {
		t.Errorf("at most %d requests were in flight at once; want from %d (one per operation) to %d", inflight, parallelism, 3*parallelism)
	}

	b, err := os.ReadFile(argLog)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		cmd, _, _ := strings.Cut(line, " ")
		if cmd == "plan" || cmd == "apply" || cmd == "destroy" {
			ran = append(ran, cmd)
			if !strings.Contains(line, fmt.Sprintf("-parallelism=%d", parallelism)) || strings.Contains(line, "-parallelism=10") {
				t.Errorf("terraform %s did not run with -parallelism=%d: %s", cmd, parallelism, line)
			}
		}
	}
	for _, want := range []string{"apply", "destroy"} {
		if !strings.Contains(strings.Join(ran, " "), want) {
			t.Errorf("the wrapper saw no terraform %s (commands: %v)", want, ran)
		}
	}
}
