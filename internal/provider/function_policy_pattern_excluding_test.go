package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// The function is topology.ExcludeTopologies with the options of the other functions: each call's
// pattern, through Terraform's string escapes.
func TestPolicyPatternExcludingFunction(t *testing.T) {
	tests := []struct{ name, call, want string }{
		{"all", `policy_pattern_excluding(".*", ["orders"])`,
			`^(?!(?:orders(?:\.dead|\.deferred\.[0-9]+|\.redeclaring)?)\z)[\s\S]*?(?:.*)`},
		{"two_queues", `policy_pattern_excluding("^jobs\\.", ["jobs.a", "jobs.b"])`,
			`^(?!(?:jobs\.a(?:\.dead|\.deferred\.[0-9]+|\.redeclaring)?|jobs\.b(?:\.dead|\.deferred\.[0-9]+|\.redeclaring)?)\z)[\s\S]*?(?:^jobs\.)`},
		{"suffixes", `policy_pattern_excluding("x", ["orders"], { dead_suffix = "-dlq", deferred_suffix = "-wait-" })`,
			`^(?!(?:orders(?:\-dlq|\-wait\-[0-9]+|\.redeclaring)?)\z)[\s\S]*?(?:x)`},
		// The value examples/functions/policy_pattern_excluding/function.tf states.
		{"example", `policy_pattern_excluding("^jobs\\.", ["jobs.orders"], { dead_suffix = "-dlq" })`,
			`^(?!(?:jobs\.orders(?:\-dlq|\.deferred\.[0-9]+|\.redeclaring)?)\z)[\s\S]*?(?:^jobs\.)`},
		{"null_option", `policy_pattern_excluding("x", ["orders"], { dead_suffix = null })`,
			`^(?!(?:orders(?:\.dead|\.deferred\.[0-9]+|\.redeclaring)?)\z)[\s\S]*?(?:x)`},
	}
	var config strings.Builder
	checks := make([]statecheck.StateCheck, 0, len(tests))
	for _, tt := range tests {
		config.WriteString("output \"" + tt.name + "\" {\n  value = provider::queuey::" + tt.call + "\n}\n")
		checks = append(checks, statecheck.ExpectKnownOutputValue(tt.name, knownvalue.StringExact(tt.want)))
	}
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps:                    []resource.TestStep{{Config: config.String(), ConfigStateChecks: checks}},
	}, featureFunctions)
}

func TestPolicyPatternExcludingFunction_Errors(t *testing.T) {
	tests := []configError{
		{`policy_pattern_excluding(".*", [])`, []string{`Invalid value for "queues" parameter`, "name at least one queue"}},
		{`policy_pattern_excluding(".*", ["orders", "amq.x"])`, []string{`Invalid value for "queues" parameter`, `queues[1]:`, `starts with "amq."`}},
		{`policy_pattern_excluding(".*", ["` + strings.Repeat("q", 236) + `"])`, []string{`Invalid value for "queues" parameter`, "1 to 235 bytes"}},
		{`policy_pattern_excluding(".*", ["orders", null])`, []string{`Invalid value for "queues" parameter`, "queues[1] is null"}},
		{`policy_pattern_excluding("(", ["orders"])`, []string{`Invalid value for "pattern" parameter`}},
		{`policy_pattern_excluding("\\h", ["orders"])`, []string{`Invalid value for "pattern" parameter`, `\h`}},
		{`policy_pattern_excluding(".*", ["` + strings.Repeat("q", 200) + `", "` + strings.Repeat("r", 200) + `", "` + strings.Repeat("s", 200) + `", "` + strings.Repeat("t", 200) + `", "` + strings.Repeat("u", 200) + `"])`,
			[]string{`Invalid value for "queues" parameter`, "1024 bytes"}},
		{`policy_pattern_excluding(".*", ["orders"], { granularity = "1s" })`, []string{`Invalid value for "options" parameter`, `unknown key(s) "granularity"`, "dead_suffix, deferred_suffix"}},
		{`policy_pattern_excluding(".*", ["orders"], { dead_suffix = ".deferred." })`, []string{`Invalid value for "options" parameter`, "must differ"}},
		{`policy_pattern_excluding(".*", ["orders"], {}, {})`, []string{`Invalid value for "options" parameter`, "at most once"}},
	}
	testErrors(t, functionOutput, tests, featureFunctions)
}
