package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var _ function.Function = (*policyPatternExcludingFunction)(nil)

// NewPolicyPatternExcludingFunction returns the policy_pattern_excluding function: a policy's
// pattern rewritten to leave out the topologies of some logical queues (the plan's fix for a
// policy that breaks them).
func NewPolicyPatternExcludingFunction() function.Function {
	return &policyPatternExcludingFunction{}
}

type policyPatternExcludingFunction struct{}

// suffixOptionKeys are the options this function takes: names need no granularity.
var suffixOptionKeys = []string{optionDeadSuffix, optionDeferredSuffix}

// Positions of the arguments, for the errors.
const (
	argPattern int64 = iota
	argQueues
	argOptions
)

func (f *policyPatternExcludingFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "policy_pattern_excluding"
}

func (f *policyPatternExcludingFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "A RabbitMQ policy pattern that leaves out the queues of some logical queues.",
		MarkdownDescription: "Returns a policy pattern that matches exactly the queue names `pattern` matches, except " +
			"the queues of each logical queue in `queues`: `q`, its dead-letter queue, its hold queues (any TTL, so " +
			"those not declared yet too) and `q.redeclaring`, the holding queue of an interrupted change. Use it on a " +
			"policy (for example a `rabbitmq_policy`) whose keys would expire, drop or delete the backend's messages: " +
			"the policy keeps applying to every other queue. The result is " +
			"`^(?!(?:Q(?:DEAD|DEFERRED[0-9]+|\\.redeclaring)?|...)\\z)[\\s\\S]*?(?:PATTERN)`, with only non-capturing " +
			"groups added, so `pattern`'s own anchors, groups and inline options mean what they meant. A pattern the " +
			"provider cannot evaluate, or a result over RabbitMQ's 1024-byte limit (4.2.9 and later), is an error. " +
			"Functions do not see the provider's configuration, so this uses the default suffixes unless `options` " +
			"overrides them. See the guide \"Policies and the topology\".",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "pattern",
				MarkdownDescription: "The policy's pattern as RabbitMQ reads it (PCRE, matched anywhere in a queue name), e.g. `.*`.",
			},
			function.ListParameter{
				Name:        "queues",
				ElementType: types.StringType,
				MarkdownDescription: "The logical (main) queues whose topologies the pattern leaves out, e.g. `[\"orders\"]`: " +
					"at least one, each a valid queue name (1 to 235 bytes with the default suffixes, not starting with `amq.`).",
			},
		},
		VariadicParameter: function.MapParameter{
			Name:        "options",
			ElementType: types.StringType,
			MarkdownDescription: "Optional map of settings, for deployments that do not use the defaults. Accepted keys: " +
				"`dead_suffix` (defaults to `" + topology.DefaultDeadSuffix + "`) and `deferred_suffix` (defaults to `" +
				topology.DefaultDeferredSuffix + "`); any other key is an error, a null value means the default, and at " +
				"most one options map may be given.",
		},
		Return: function.StringReturn{},
	}
}

func (f *policyPatternExcludingFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var pattern string
	var queues []*string
	var opts []map[string]*string
	resp.Error = req.Arguments.Get(ctx, &pattern, &queues, &opts)
	if resp.Error != nil {
		return
	}
	o, ferr := parseOptions(opts, argOptions, suffixOptionKeys)
	if ferr != nil {
		resp.Error = ferr
		return
	}
	names, ferr := excludedQueues(queues, o.suffixes)
	if ferr != nil {
		resp.Error = ferr
		return
	}
	out, err := topology.ExcludeTopologies(pattern, names, o.suffixes)
	if err != nil {
		resp.Error = excludeFuncError(err)
		return
	}
	resp.Error = resp.Result.Set(ctx, out)
}

// excludedQueues checks each queue name, so that an error says which element is wrong.
func excludedQueues(queues []*string, s topology.Suffixes) ([]string, *function.FuncError) {
	names := make([]string, 0, len(queues))
	for i, q := range queues {
		if q == nil {
			return nil, function.NewArgumentFuncError(argQueues, fmt.Sprintf("queues[%d] is null; name a logical queue", i))
		}
		if err := topology.ValidateQueueName(*q, s); err != nil {
			return nil, function.NewArgumentFuncError(argQueues, fmt.Sprintf("queues[%d]: %s", i, queueNameFuncError(err, s)))
		}
		names = append(names, *q)
	}
	return names, nil
}

// excludeFuncError turns an ExcludeTopologies error into an error on the argument it names.
func excludeFuncError(err error) *function.FuncError {
	var ee *topology.ExcludeError
	if errors.As(err, &ee) && ee.Arg == "pattern" {
		return function.NewArgumentFuncError(argPattern, "pattern: "+err.Error())
	}
	if ee != nil {
		return function.NewArgumentFuncError(argQueues, "queues: "+err.Error())
	}
	return function.NewArgumentFuncError(argOptions, "options: "+err.Error())
}
