package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var _ function.Function = (*holdQueueNameFunction)(nil)

// NewHoldQueueNameFunction returns the hold_queue_name function.
func NewHoldQueueNameFunction() function.Function {
	return &holdQueueNameFunction{}
}

type holdQueueNameFunction struct{}

func (f *holdQueueNameFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "hold_queue_name"
}

func (f *holdQueueNameFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Name of the hold queue that keeps a given delay for a queue.",
		MarkdownDescription: "Returns the name of the hold queue in which the queuey backend parks a message of `queue` " +
			"for `delay`: the queue's name, the deferred suffix and the TTL in milliseconds, e.g. " +
			"`hold_queue_name(\"orders\", \"29.2s\")` is `orders.deferred.30000`. The delay is rounded up to a whole " +
			"multiple of the granularity, at least one step. Functions do not see the provider's configuration, so " +
			"this uses the defaults (`.dead`, `.deferred.`, a `1s` granularity) unless the optional `options` map " +
			"overrides them; the `queuey_hold_queue` data source uses the provider's settings instead.",
		Parameters: []function.Parameter{
			queueParameter(),
			function.StringParameter{
				Name: "delay",
				MarkdownDescription: "How long the message waits, as a Go duration string such as `30s` or `1m30s`, from `0s` " +
					"to the longest hold at the granularity (`2147483s` at `1s`).",
			},
		},
		VariadicParameter: optionsParameter(),
		Return:            function.StringReturn{},
	}
}

func (f *holdQueueNameFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var queue, delayText string
	var opts []map[string]*string
	resp.Error = req.Arguments.Get(ctx, &queue, &delayText, &opts)
	if resp.Error != nil {
		return
	}
	o, ferr := parseFunctionOptions(opts, 2)
	if ferr != nil {
		resp.Error = ferr
		return
	}
	if err := topology.ValidateQueueName(queue, o.suffixes); err != nil {
		resp.Error = function.NewArgumentFuncError(0, queueNameFuncError(err, o.suffixes))
		return
	}
	delay, err := parseDuration("delay", delayText, delayRange(o.granularity))
	if err != nil {
		resp.Error = function.NewArgumentFuncError(1, err.Error())
		return
	}
	ttl, err := topology.DeferredTTLMs("delay", delay, o.granularity)
	if err != nil {
		resp.Error = function.NewArgumentFuncError(1, err.Error())
		return
	}
	resp.Error = resp.Result.Set(ctx, topology.HoldQueueName(queue, ttl, o.suffixes))
}
