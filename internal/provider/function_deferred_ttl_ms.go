package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var _ function.Function = (*deferredTTLMsFunction)(nil)

// NewDeferredTTLMsFunction returns the deferred_ttl_ms function.
func NewDeferredTTLMsFunction() function.Function {
	return &deferredTTLMsFunction{}
}

type deferredTTLMsFunction struct{}

func (f *deferredTTLMsFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "deferred_ttl_ms"
}

func (f *deferredTTLMsFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "TTL in milliseconds of the hold queue that keeps a delay.",
		MarkdownDescription: "Returns `delay` rounded up to a whole multiple of `granularity`, in milliseconds, and at " +
			"least one step: the TTL of the hold queue that keeps the wait. For example " +
			"`deferred_ttl_ms(\"29.2s\", \"1s\")` is `30000`, `deferred_ttl_ms(\"0s\", \"1s\")` is `1000` and " +
			"`deferred_ttl_ms(\"30.5s\", \"5s\")` is `35000`. A result past `2147483647` (about 24.8 days, half of " +
			"RabbitMQ's largest TTL) is an error: the delay is never shortened.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name: "delay",
				MarkdownDescription: "How long the message waits, as a Go duration string such as `30s` or `1m30s`, from `0s` " +
					"to the longest hold at `granularity` (`2147483s` at `1s`, `2147483647ms` at `1ms`).",
			},
			function.StringParameter{
				Name: "granularity",
				MarkdownDescription: "Step the delay is rounded up to, as a Go duration string: a whole number of " +
					"milliseconds from `1ms` to `2147483647ms`. The backend's default is `1s`.",
			},
		},
		Return: function.Int64Return{},
	}
}

func (f *deferredTTLMsFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var delayText, granularityText string
	resp.Error = req.Arguments.Get(ctx, &delayText, &granularityText)
	if resp.Error != nil {
		return
	}
	g, err := parseGranularity("granularity", granularityText)
	if err != nil {
		resp.Error = function.NewArgumentFuncError(1, err.Error())
		return
	}
	delay, err := parseDuration("delay", delayText, delayRange(g))
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, err.Error())
		return
	}
	ttl, err := topology.DeferredTTLMs("delay", delay, g)
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, err.Error())
		return
	}
	resp.Error = resp.Result.Set(ctx, ttl)
}
