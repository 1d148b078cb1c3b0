package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var (
	_ datasource.DataSourceWithConfigure      = (*holdQueueDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig = (*holdQueueDataSource)(nil)
)

// Purposes of a wait, which pick the granularity it is rounded to.
const (
	purposeRetry    = "retry"
	purposeDeferral = "deferral"
)

// NewHoldQueueDataSource returns queuey_hold_queue, computed without contacting the broker.
func NewHoldQueueDataSource() datasource.DataSource {
	return &holdQueueDataSource{}
}

type holdQueueDataSource struct {
	configuredDataSource
}

func (d *holdQueueDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_hold_queue"
}

func (d *holdQueueDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Computes the hold queue that keeps a wait of `delay` for a queue: its name, TTL, expiry and " +
			"declaration arguments, exactly as the queuey backend derives them. The delay is rounded up to a whole " +
			"multiple of the granularity (at least one step), so that close delays share one hold queue. " +
			"Nothing is read from the broker: this works without an `endpoint`, and its values are known at plan time.",
		Attributes: map[string]schema.Attribute{
			"queue": schema.StringAttribute{
				MarkdownDescription: queueNameDescription(providerSuffixes),
				Required:            true,
			},
			"delay": schema.StringAttribute{
				MarkdownDescription: "How long the message waits, as a Go duration string such as `30s`, `1m30s` or `250ms`; " +
					"durations are compared by value, so `60s` and `1m` name the same hold queue. From `0s` to the longest " +
					"hold, which depends on the granularity: `2147483s` at `1s`, `2147483647ms` at `1ms`. A longer delay is " +
					"an error, never shortened.",
				Required:   true,
				Validators: []validator.String{delayValidator{}},
			},
			"purpose": schema.StringAttribute{
				MarkdownDescription: "What the wait is for, which picks the granularity it is rounded to: `retry` (retry " +
					"backoffs and delayed enqueues, rounded to the provider's `retry_granularity`) or `deferral` (rounded to " +
					"the provider's `deferred_granularity`). Defaults to `retry`. Both kinds of wait share the same hold queues.",
				Optional:   true,
				Computed:   true,
				Validators: []validator.String{stringvalidator.OneOf(purposeRetry, purposeDeferral)},
			},
			"granularity": schema.StringAttribute{
				MarkdownDescription: "Step the delay is rounded up to, overriding the provider's granularity for `purpose`, as a " +
					"Go duration: a whole number of milliseconds from `1ms` to `2147483647ms`. Defaults to the provider's " +
					"`retry_granularity` or `deferred_granularity` (each `1s` unless configured).",
				Optional: true,
				Validators: []validator.String{
					durationSyntaxValidator{rangeText: granularityRange()},
					granularityValidator{},
				},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the hold queue: the queue's name, the `deferred_suffix` and the TTL in " +
					"milliseconds, e.g. `orders.deferred.30000`.",
				Computed: true,
			},
			"ttl_ms": schema.Int64Attribute{
				MarkdownDescription: "The hold queue's `x-message-ttl` in milliseconds: `delay` rounded up to a whole multiple " +
					"of the granularity, at least one step; from `1` to `2147483647`.",
				Computed: true,
			},
			"expires_ms": schema.Int64Attribute{
				MarkdownDescription: "The hold queue's `x-expires` in milliseconds, always twice `ttl_ms`: an idle hold queue " +
					"deletes itself that long after it was last declared.",
				Computed: true,
			},
			"arguments_json": schema.StringAttribute{
				CustomType: jsontypes.NormalizedType{},
				MarkdownDescription: "The hold queue's declaration arguments as a JSON object with sorted keys and integer " +
					"values: `x-dead-letter-exchange` (`\"\"`), `x-dead-letter-routing-key` (the queue), `x-expires` and " +
					"`x-message-ttl`, e.g. `{\"x-dead-letter-exchange\":\"\",\"x-dead-letter-routing-key\":\"orders\"," +
					"\"x-expires\":60000,\"x-message-ttl\":30000}`. A queue declared with any other table is refused by " +
					"RabbitMQ (`PRECONDITION_FAILED`) when the application declares it.",
				Computed: true,
			},
		},
	}
}

// ValidateConfig refuses a delay past the longest hold when the granularity is given here.
func (d *holdQueueDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m holdQueueDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !isKnown(m.Delay) || !isKnown(m.Granularity) {
		return
	}
	g, err := parseGranularity("granularity", m.Granularity.ValueString())
	if err != nil {
		return // Reported by the attribute's validators.
	}
	delay, err := time.ParseDuration(m.Delay.ValueString())
	if err != nil || delay < 0 {
		return // Reported by the attribute's validators.
	}
	if _, err := topology.DeferredTTLMs("delay", delay, g); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("delay"), "Delay Too Long", err.Error()+". Use a shorter delay.")
	}
}

func (d *holdQueueDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m holdQueueDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(d.data.pureReady()...)
	if resp.Diagnostics.HasError() {
		return
	}
	s := d.data.suffixes
	if m.Purpose.IsNull() {
		m.Purpose = types.StringValue(purposeRetry)
	}

	g, from := d.data.retryGranularity, "the provider's retry_granularity"
	if m.Purpose.ValueString() == purposeDeferral {
		g, from = d.data.deferredGranularity, "the provider's deferred_granularity"
	}
	if !m.Granularity.IsNull() {
		var err error
		from = "granularity"
		if g, err = parseGranularity("granularity", m.Granularity.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("granularity"), "Invalid Granularity", err.Error()+".")
		}
	}

	queue := m.Queue.ValueString()
	resp.Diagnostics.Append(checkQueueAttr(queue, s)...)
	delay, err := parseDuration("delay", m.Delay.ValueString(), delayRange(g))
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("delay"), "Invalid Delay", err.Error()+".")
	}
	if resp.Diagnostics.HasError() {
		return
	}
	ttl, err := topology.DeferredTTLMs("delay", delay, g)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("delay"), "Delay Too Long",
			fmt.Sprintf("%s. The granularity is %s. Use a shorter delay.", err, from))
		return
	}
	hold, diags := holdQueueFor(queue, ttl, s)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}

	m.Name = types.StringValue(hold.Name)
	m.TTLMs = types.Int64Value(hold.TTLMs)
	m.ExpiresMs = types.Int64Value(hold.ExpiresMs)
	m.ArgumentsJSON = jsontypes.NewNormalizedValue(hold.Args.JSON())
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// isKnown reports whether a value is neither null nor unknown.
func isKnown(v types.String) bool { return !v.IsNull() && !v.IsUnknown() }

type holdQueueDataSourceModel struct {
	Queue         types.String         `tfsdk:"queue"`
	Delay         types.String         `tfsdk:"delay"`
	Purpose       types.String         `tfsdk:"purpose"`
	Granularity   types.String         `tfsdk:"granularity"`
	Name          types.String         `tfsdk:"name"`
	TTLMs         types.Int64          `tfsdk:"ttl_ms"`
	ExpiresMs     types.Int64          `tfsdk:"expires_ms"`
	ArgumentsJSON jsontypes.Normalized `tfsdk:"arguments_json"`
}
