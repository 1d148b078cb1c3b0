package provider

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// TestAccSecrets_notLogged runs a whole plan, apply, refresh and destroy as a
// dedicated broker user with a long random password and every log turned up
// to TRACE, then searches the logs for the password and for the
// Authorization header value.
//
// Where the logs go: TF_LOG_PATH alone reaches only the provider under test
// (the terraform-plugin-log sink that terraform-plugin-testing installs for
// in-process providers), because terraform-exec strips TF_LOG* from the
// Terraform CLI's environment. TF_ACC_LOG_PATH is what terraform-plugin-testing
// hands to the Terraform CLI (as TF_LOG_PATH, level TRACE), and it also takes
// precedence over TF_LOG_PATH for the provider's sink: with both set, the
// CLI's and the provider's logs all land in the TF_ACC_LOG_PATH file and the
// TF_LOG_PATH file stays empty. Both are searched; the markers below prove
// that what was searched holds both Terraform's and the provider's logs.
func TestAccSecrets_notLogged(t *testing.T) {
	testAccPreCheck(t)
	user := uniqueName("secrets-user")
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	password := "QueueySecret-" + hex.EncodeToString(b)
	createUser(t, user, password, "management", "/", allPermissions)

	dir := t.TempDir()
	tfLogPath := filepath.Join(dir, "tf-log-path.log")
	accLogPath := filepath.Join(dir, "tf-acc-log-path.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_LOG_PATH", tfLogPath)
	t.Setenv("TF_ACC_LOG_PATH", accLogPath)
	// Through a sensitive variable, as an operator would pass it:
	// terraform-plugin-testing logs each step's configuration text itself.
	t.Setenv("TF_VAR_queuey_password", password)

	name := uniqueName("secrets")
	cleanupQueues(t, "/", name)
	cfg := fmt.Sprintf(`
variable "queuey_password" {
  type      = string
  sensitive = true
}

provider "queuey" {
  endpoint = %q
  username = %q
  password = var.queuey_password
}

resource "queuey_queue" "test" {
  name         = %q
  max_priority = 3
}

data "queuey_hold_queues" "test" {
  queue = queuey_queue.test.name
}
`, os.Getenv(EnvEndpoint), user, name)
	resource.Test(t, queueCase(t, name, []resource.TestStep{
		{
			Config: cfg,
			Check:  checkBrokerQueue(t, "/", name, `{"x-max-priority":3}`),
		},
		{
			Config:           cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	}))

	secrets := map[string]string{
		"the password": password,
		"the Authorization header value (base64 of user:password)": base64.StdEncoding.EncodeToString([]byte(user + ":" + password)),
	}
	var all strings.Builder
	for _, f := range []string{tfLogPath, accLogPath} {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			t.Logf("%s: not written", filepath.Base(f))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", filepath.Base(f), len(b))
		for what, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s contains %s", filepath.Base(f), what)
			}
		}
		all.Write(b)
	}
	logs := all.String()
	if len(logs) == 0 {
		t.Fatal("no log was written")
	}
	// Both Terraform's and the provider's logs were captured, at TRACE, so
	// the search above covered them.
	// The CLI's own log: "Terraform version: ..." or "OpenTofu version: ...".
	if !strings.Contains(logs, "Terraform version:") && !strings.Contains(logs, "OpenTofu version:") {
		t.Errorf(`the logs lack the CLI's log lines ("Terraform version:" or "OpenTofu version:"): the search for secrets did not cover them`)
	}
	for what, marker := range map[string]string{
		"the provider's protocol log lines (TRACE)":    "sdk.proto: Received request: tf_proto_version=6",
		"the provider's framework log lines (TRACE)":   "Calling provider defined Resource Create",
		"the provider's Configure":                     "Calling provider defined Provider Configure",
		"the provider's data source read":              "Calling provider defined DataSource Read",
		"the provider's destroy (Resource Delete)":     "Calling provider defined Resource Delete",
		"the dedicated user's name in the test config": user,
	} {
		if !strings.Contains(logs, marker) {
			t.Errorf("the logs lack %s (%q): the search for secrets did not cover them", what, marker)
		}
	}
}
