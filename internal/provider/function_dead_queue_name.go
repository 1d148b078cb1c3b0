package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var _ function.Function = (*deadQueueNameFunction)(nil)

// NewDeadQueueNameFunction returns the dead_queue_name function.
func NewDeadQueueNameFunction() function.Function {
	return &deadQueueNameFunction{}
}

type deadQueueNameFunction struct{}

func (f *deadQueueNameFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "dead_queue_name"
}

func (f *deadQueueNameFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Name of a queue's dead-letter queue.",
		MarkdownDescription: "Returns the name of the queue into which the queuey backend dead-letters the messages of " +
			"`queue`: the queue's name followed by the dead suffix, e.g. `dead_queue_name(\"orders\")` is `orders.dead`. " +
			"Functions do not see the provider's configuration, so this uses the default suffixes unless the optional " +
			"`options` map overrides them; the `queuey_topology` data source uses the provider's settings instead.",
		Parameters:        []function.Parameter{queueParameter()},
		VariadicParameter: optionsParameter(),
		Return:            function.StringReturn{},
	}
}

func (f *deadQueueNameFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var queue string
	var opts []map[string]*string
	resp.Error = req.Arguments.Get(ctx, &queue, &opts)
	if resp.Error != nil {
		return
	}
	o, ferr := parseFunctionOptions(opts, 1)
	if ferr != nil {
		resp.Error = ferr
		return
	}
	if err := topology.ValidateQueueName(queue, o.suffixes); err != nil {
		resp.Error = function.NewArgumentFuncError(0, queueNameFuncError(err, o.suffixes))
		return
	}
	resp.Error = resp.Result.Set(ctx, topology.DeadQueueName(queue, o.suffixes))
}
