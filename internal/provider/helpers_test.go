package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// uniqueName returns a queue name no other test run uses: eight random hex
// digits after the prefix.
func uniqueName(prefix string) string { return fmt.Sprintf("tfacc-%s-%08x", prefix, rand.Uint32()) }

// tunedProvider is a provider block that sets every suffix and granularity
// to something other than the default.
const tunedProvider = `
provider "queuey" {
  dead_suffix          = "-dlq"
  deferred_suffix      = "-wait-"
  retry_granularity    = "5s"
  deferred_granularity = "1m"
}
`

// queueCase is an acceptance test of the queuey_queue name in the vhost "/":
// its steps, then a check that the queue and its dead-letter queue are gone.
func queueCase(t *testing.T, name string, steps []resource.TestStep) resource.TestCase {
	return resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", name, name+".dead"),
		Steps:                    steps,
	}
}

// configError is a configuration that must fail, and the phrases its error
// contains, in order (see errorMatching).
type configError struct {
	config string
	want   []string
}

// testErrors runs, with no broker, a step for each configuration of tests as
// wrap makes it whole, each expecting its error.
func testErrors(t *testing.T, wrap func(string) string, tests []configError, features ...cliFeature) {
	t.Helper()
	var steps []resource.TestStep
	for _, tt := range tests {
		steps = append(steps, resource.TestStep{Config: wrap(tt.config), ExpectError: errorMatching(tt.want...)})
	}
	unitTest(t, resource.TestCase{ProtoV6ProviderFactories: testProviderFactories, Steps: steps}, features...)
}

// functionOutput makes a call of one of the provider's functions an output.
func functionOutput(call string) string {
	return "output \"x\" {\n  value = provider::queuey::" + call + "\n}\n"
}

// dataBlock returns a wrapper that makes a body a data source of type typ.
func dataBlock(typ string) func(string) string {
	return func(body string) string { return "data \"" + typ + "\" \"x\" {\n" + body + "\n}\n" }
}

// argumentsChange is a plan check: the planned change of queuey_queue.test
// moves arguments_json from before to after.
type argumentsChange struct{ before, after string }

func (c argumentsChange) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address == "queuey_queue.test" {
			b, _ := rc.Change.Before.(map[string]any)
			a, _ := rc.Change.After.(map[string]any)
			if got := (argumentsChange{fmt.Sprint(b["arguments_json"]), fmt.Sprint(a["arguments_json"])}); got != c {
				resp.Error = fmt.Errorf("queuey_queue.test arguments_json planned %s -> %s, want %s -> %s", got.before, got.after, c.before, c.after)
			}
			return
		}
	}
	resp.Error = errors.New("no planned change of queuey_queue.test")
}

// declaredArgs is q's arguments as its declaration gave them: without the
// x-queue-type RabbitMQ 4.x (the fake's default) records for a declaration
// that leaves it out.
func declaredArgs(q brokertest.Queue) map[string]any {
	args := maps.Clone(q.Arguments)
	delete(args, "x-queue-type")
	return args
}
