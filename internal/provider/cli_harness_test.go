package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The CLI harness: tests that run the real terraform CLI (or OpenTofu's,
// whichever TF_ACC_TERRAFORM_PATH names) against the provider binary built
// from this tree, through a dev_overrides CLI configuration, as a user does:
// they see what terraform-plugin-testing cannot show, such as warnings.

// builtProvider builds the provider once per test binary and returns the
// directory holding it.
var builtProvider = sync.OnceValues(buildProvider)

func buildProvider() (string, error) {
	// Shared by every test of the binary, so not a t.TempDir.
	dir, err := os.MkdirTemp("", "queuey-e2e-") //nolint:usetesting // outlives any one test
	if err != nil {
		return "", err
	}
	// -o names a directory: the binary is terraform-provider-queuey in it.
	if out, err := exec.Command("go", "build", "-o", dir, "../..").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, nil
}

// terraformCLI runs terraform in dir with the dev_overrides config and
// returns its combined output.
type terraformCLI struct {
	t   *testing.T
	dir string
	env []string // more environment of the CLI, its CLI configuration first
}

// newTerraformCLI is a working directory with config, whose CLI configuration
// installs the provider built from this tree and, from more, each pair of a
// provider source and the directory holding it.
func newTerraformCLI(t *testing.T, config string, more ...string) *terraformCLI {
	t.Helper()
	if len(more)%2 != 0 {
		t.Fatalf("newTerraformCLI got %d more arguments, want pairs of a provider source and its directory", len(more))
	}
	rc := "provider_installation {\n  dev_overrides {\n"
	for pair := range slices.Chunk(append([]string{"queuey/queuey", orFatal(builtProvider())(t)}, more...), 2) {
		// "queuey/queuey" means registry.terraform.io/queuey/queuey to Terraform
		// and registry.opentofu.org/queuey/queuey to OpenTofu: override both.
		rc += fmt.Sprintf("    %q = %q\n    %q = %q\n", "registry.terraform.io/"+pair[0], pair[1], "registry.opentofu.org/"+pair[0], pair[1])
	}
	tf := &terraformCLI{t: t, dir: t.TempDir()}
	tf.env = []string{"TF_CLI_CONFIG_FILE=" + filepath.Join(tf.dir, "terraformrc")}
	fatalOn(t, os.WriteFile(filepath.Join(tf.dir, "terraformrc"), []byte(rc+"  }\n  direct {}\n}\n"), 0o600))
	tf.writeConfig(config)
	return tf
}

func (c *terraformCLI) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliBinary(), append(args, "-no-color")...)
	cmd.Dir = c.dir
	cmd.Env = append(append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1"), c.env...)
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

// writeConfig replaces the configuration of the working directory, whose
// state stays.
func (c *terraformCLI) writeConfig(config string) {
	c.t.Helper()
	fatalOn(c.t, os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(config), 0o600))
}

// The CLI matrix: every stage of tools/acc/table.go runs the whole suite, and
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

// cliBinary is the CLI the tests drive: TF_ACC_TERRAFORM_PATH, else
// terraform on PATH (as terraform-plugin-testing picks it).
func cliBinary() string { return cmp.Or(os.Getenv("TF_ACC_TERRAFORM_PATH"), "terraform") }

// cliUnderTest returns the kind and version of the CLI the tests drive,
// asked once.
var cliUnderTest = sync.OnceValues(askCLIVersion)

func askCLIVersion() (testCLI, error) { return parseCLIVersion((&terraformCLI{}).run("version")) }

// parseCLIVersion reads the kind and version of a CLI from the output of its
// `version` command and the command's error: the first line "Terraform
// v1.11.4" or "OpenTofu v1.12.6" (OpenTofu may print a warning before it).
func parseCLIVersion(out string, err error) (testCLI, error) {
	m := regexp.MustCompile(`(?m)^(Terraform|OpenTofu) v(\S+)`).FindStringSubmatch(out)
	if err != nil {
		return testCLI{}, fmt.Errorf("%s version failed: %v\n%s", cliBinary(), err, out)
	}
	if m == nil {
		return testCLI{}, fmt.Errorf("%s version: no \"Terraform vX\" or \"OpenTofu vX\" line in its output:\n%s", cliBinary(), out)
	}
	v, err := version.NewVersion(m[2])
	return testCLI{kind: m[1], version: v}, err
}

// lacks tells whether cli lacks the feature f.
func (cli testCLI) lacks(f cliFeature) bool {
	first := map[string]string{"Terraform": f.terraform, "OpenTofu": f.opentofu}[cli.kind]
	return first == "" || cli.version.LessThan(version.Must(version.NewVersion(first)))
}

// needsCLI marks a test that drives a CLI, which needs features of it: with
// -short (no CLI, as make mutate runs the tests) it skips; on a CLI that
// lacks one of features it skips and records the skip as expected: it
// appends the test's name to the file of expectedSkipsEnv, in one write to a
// file opened for appending, so that the lines of tests running in parallel
// do not mix. It fails when the CLI cannot tell its version.
func needsCLI(t *testing.T, features ...cliFeature) {
	t.Helper()
	if testing.Short() {
		t.Skip("drives the Terraform CLI: skipped with -short")
	}
	cli := orFatal(cliUnderTest())(t)
	i := slices.IndexFunc(features, cli.lacks) // the first feature it lacks
	if i < 0 {
		return
	}
	if file := os.Getenv(expectedSkipsEnv); file != "" {
		out, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, err = fmt.Fprintln(out, t.Name())
			err = errors.Join(err, out.Close())
		}
		if err != nil {
			t.Fatalf("recording an expected skip in %s: %v", file, err)
		}
	}
	t.Skipf("%s %s %s: needs %s (first in Terraform %s, OpenTofu %s)", expectedSkipMarker, cli.kind, cli.version,
		features[i].name, features[i].terraform, cmp.Or(features[i].opentofu, "none yet"))
}

// expectedSkipMarker starts the message of every skip needsCLI makes.
const expectedSkipMarker = "CLI lacks a feature:"

// expectedSkipsEnv names the file to which needsCLI appends, one a line, the
// names of the tests it skipped: tools/acc sets it for each stage
// and fails the stage on any skipped test that is not listed there.
const expectedSkipsEnv = "QUEUEY_EXPECTED_SKIPS"

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
		cli, err := parseCLIVersion(tt.versionOutput, nil)
		if err != nil {
			t.Errorf("parseCLIVersion(%q): %v", tt.versionOutput, err)
			continue
		}
		var lacks []string
		for _, f := range all {
			if cli.lacks(f) {
				lacks = append(lacks, f.name)
			}
		}
		if got := strings.Join(lacks, "|"); got != tt.lacks {
			t.Errorf("%s %s lacks %q, want %q", cli.kind, cli.version, got, tt.lacks)
		}
	}
	if _, err := parseCLIVersion("tofu: command not found", nil); err == nil {
		t.Error("a version output without a version was read")
	}
	if _, err := parseCLIVersion("Terraform v1.11.4\n", errors.New("exit status 1")); err == nil {
		t.Error("the version of a failed version command was read")
	}
}
