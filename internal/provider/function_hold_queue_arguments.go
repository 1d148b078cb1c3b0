package provider

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var _ function.Function = (*holdQueueArgumentsFunction)(nil)

// NewHoldQueueArgumentsFunction returns the hold_queue_arguments function.
func NewHoldQueueArgumentsFunction() function.Function {
	return &holdQueueArgumentsFunction{}
}

type holdQueueArgumentsFunction struct{}

func (f *holdQueueArgumentsFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "hold_queue_arguments"
}

func (f *holdQueueArgumentsFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Declaration arguments of a hold queue, as JSON.",
		MarkdownDescription: "Returns the declaration arguments of the hold queue of `queue` whose TTL is `ttl_ms`, as a " +
			"JSON object with sorted keys and integer values: `x-message-ttl` = `ttl_ms`, `x-dead-letter-exchange` = `\"\"`, " +
			"`x-dead-letter-routing-key` = `queue` and `x-expires` = twice `ttl_ms`. For example " +
			"`hold_queue_arguments(\"orders\", 30000)` is " +
			"`{\"x-dead-letter-exchange\":\"\",\"x-dead-letter-routing-key\":\"orders\",\"x-expires\":60000,\"x-message-ttl\":30000}`. " +
			"The arguments depend on nothing else, so every process computes the same table for the same hold queue; " +
			"decode them with `jsondecode`.",
		Parameters: []function.Parameter{
			queueParameter(),
			function.NumberParameter{
				Name: "ttl_ms",
				MarkdownDescription: "TTL of the hold queue in milliseconds, as in its name: a whole number from `1` to " +
					"`2147483647`. Use `deferred_ttl_ms` to compute it from a delay.",
			},
		},
		Return: function.StringReturn{},
	}
}

func (f *holdQueueArgumentsFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var queue string
	var ttlNumber *big.Float
	resp.Error = req.Arguments.Get(ctx, &queue, &ttlNumber)
	if resp.Error != nil {
		return
	}
	s := topology.DefaultSuffixes()
	if err := topology.ValidateQueueName(queue, s); err != nil {
		resp.Error = function.NewArgumentFuncError(0, queueNameFuncError(err, s))
		return
	}
	ttl, ok := wholeInt64(ttlNumber)
	if !ok {
		resp.Error = function.NewArgumentFuncError(1, fmt.Sprintf(
			"ttl_ms must be a whole number of milliseconds from 1 to %d; got %s", topology.MaxDeferralMs, ttlNumber.Text('g', -1)))
		return
	}
	args, err := topology.HoldQueueArgs(queue, ttl)
	if err != nil {
		resp.Error = function.NewArgumentFuncError(1, "ttl_ms: "+err.Error())
		return
	}
	resp.Error = resp.Result.Set(ctx, args.JSON())
}

// wholeInt64 returns n as an int64 when it is a whole number that fits.
func wholeInt64(n *big.Float) (int64, bool) {
	if n == nil || n.IsInf() || !n.IsInt() {
		return 0, false
	}
	i, acc := n.Int64()
	if acc != big.Exact {
		return 0, false
	}
	return i, true
}
