package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var _ datasource.DataSourceWithConfigure = (*topologyDataSource)(nil)

// NewTopologyDataSource returns queuey_topology, computed without contacting the broker.
func NewTopologyDataSource() datasource.DataSource {
	return &topologyDataSource{}
}

type topologyDataSource struct {
	configuredDataSource
}

func (d *topologyDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_topology"
}

func (d *topologyDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	queueAttributes := map[string]schema.Attribute{
		"name": schema.StringAttribute{
			MarkdownDescription: "Name of the broker queue.",
			Computed:            true,
		},
		"arguments_json": schema.StringAttribute{
			CustomType:          jsontypes.NormalizedType{},
			MarkdownDescription: "Declaration arguments of the queue as a JSON object with sorted keys and integer values; `{}` when it has none.",
			Computed:            true,
		},
	}
	delayList := func(kind, setting string) schema.ListAttribute {
		return schema.ListAttribute{
			ElementType: types.StringType,
			MarkdownDescription: "Delays of " + kind + " to compute hold queues for, as Go duration strings such as `30s` or `5m`, " +
				"rounded up to the provider's `" + setting + "` (at least one step). Each delay may be from `0s` to the " +
				"longest hold at that granularity (`2147483s` at the default `1s`). Omit for none.",
			Optional:   true,
			Validators: []validator.List{listvalidator.ValueStringsAre(delayValidator{})},
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Computes the whole broker topology of a logical queue as the queuey backend declares it: the " +
			"main queue, its dead-letter queue, the hold queues of the delays given, and regular expressions for " +
			"permissions and policies. Nothing is read from the broker: this works without an `endpoint`, and its values " +
			"are known at plan time.",
		Attributes: map[string]schema.Attribute{
			"queue": schema.StringAttribute{
				MarkdownDescription: queueNameDescription(providerSuffixes),
				Required:            true,
			},
			"message_ttl": schema.StringAttribute{
				MarkdownDescription: "Queue-wide message TTL of the main queue, as a Go duration string such as `24h`: a whole " +
					"number of milliseconds (a sub-millisecond part is refused, not rounded) from `0ms` to `4294967295ms` " +
					"(about 49.7 days). Omit for none, and the main queue gets no `x-message-ttl`.",
				Optional: true,
				Validators: []validator.String{
					durationSyntaxValidator{rangeText: messageTTLRange()},
					messageTTLValidator{},
				},
			},
			"max_priority": schema.Int64Attribute{
				MarkdownDescription: "Number of priority levels of the main queue (`x-max-priority`), from `1` to `255`. " +
					"Omit for none, and the main queue gets no `x-max-priority`.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(topology.MinPriority, topology.MaxPriority)},
			},
			"retry_delays":    delayList("retry backoffs and delayed enqueues", "retry_granularity"),
			"deferral_delays": delayList("deferrals", "deferred_granularity"),
			"main_queue": schema.SingleNestedAttribute{
				MarkdownDescription: "The main queue `q`, with `x-message-ttl` and `x-max-priority` when set and nothing else.",
				Computed:            true,
				Attributes:          queueAttributes,
			},
			"dead_queue": schema.SingleNestedAttribute{
				MarkdownDescription: "The dead-letter queue, the queue's name followed by `dead_suffix` (e.g. `orders.dead`), " +
					"declared with no arguments.",
				Computed:   true,
				Attributes: queueAttributes,
			},
			"hold_queues": schema.ListNestedAttribute{
				MarkdownDescription: "One hold queue per distinct TTL among `retry_delays` and `deferral_delays`, ascending by " +
					"TTL. Delays that round to the same TTL share one hold queue.",
				Computed: true,
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"name": schema.StringAttribute{
							MarkdownDescription: "Name of the hold queue, e.g. `orders.deferred.30000`.",
							Computed:            true,
						},
						"ttl_ms": schema.Int64Attribute{
							MarkdownDescription: "The hold queue's `x-message-ttl` in milliseconds.",
							Computed:            true,
						},
						"expires_ms": schema.Int64Attribute{
							MarkdownDescription: "The hold queue's `x-expires` in milliseconds, twice `ttl_ms`.",
							Computed:            true,
						},
						"arguments_json": schema.StringAttribute{
							CustomType:          jsontypes.NormalizedType{},
							MarkdownDescription: "Declaration arguments of the hold queue as a JSON object with sorted keys and integer values.",
							Computed:            true,
						},
					},
				},
			},
			"hold_queue_pattern": schema.StringAttribute{
				MarkdownDescription: "Regular expression matching the names of all the queue's hold queues, the queue's name " +
					"quoted, e.g. `^orders\\.deferred\\.[0-9]+$`.",
				Computed: true,
			},
			"queues_pattern": schema.StringAttribute{
				MarkdownDescription: "Regular expression matching the main queue, its dead-letter queue and its hold queues, " +
					"for `configure` and `read` permissions, e.g. `^orders(\\.dead|\\.deferred\\.[0-9]+)?$`.",
				Computed: true,
			},
			"write_pattern": schema.StringAttribute{
				MarkdownDescription: "Regular expression for `write` permissions: the whole topology plus `amq.default`, " +
					"which publishing through the default exchange and declaring a queue that dead-letters into `\"\"` both " +
					"need, e.g. `^(amq\\.default|orders(\\.dead|\\.deferred\\.[0-9]+)?)$`.",
				Computed: true,
			},
		},
	}
}

func (d *topologyDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m topologyDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(d.data.pureReady()...)
	if resp.Diagnostics.HasError() {
		return
	}
	s := d.data.suffixes
	queue := m.Queue.ValueString()
	resp.Diagnostics.Append(checkQueueAttr(queue, s)...)
	ttlMs, maxPriority, diags := mainQueueSettings(m)
	resp.Diagnostics.Append(diags...)
	ttls := map[int64]struct{}{}
	resp.Diagnostics.Append(collectHoldTTLs(ttls, "retry_delays", m.RetryDelays, d.data.retryGranularity, "retry_granularity")...)
	resp.Diagnostics.Append(collectHoldTTLs(ttls, "deferral_delays", m.DeferralDelays, d.data.deferredGranularity, "deferred_granularity")...)
	if resp.Diagnostics.HasError() {
		return
	}
	mainArgs, err := topology.QueueArgs(ttlMs, maxPriority)
	if err != nil {
		resp.Diagnostics.AddError("Cannot Compute Main Queue", err.Error()+". This is a bug in the provider; please report it.")
		return
	}
	m.MainQueue = &topologyQueueModel{Name: types.StringValue(queue), ArgumentsJSON: jsontypes.NewNormalizedValue(mainArgs.JSON())}
	m.DeadQueue = &topologyQueueModel{
		Name:          types.StringValue(topology.DeadQueueName(queue, s)),
		ArgumentsJSON: jsontypes.NewNormalizedValue(topology.DeadQueueArgs().JSON()),
	}
	if m.HoldQueues, diags = holdQueueModels(queue, ttls, s); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	m.HoldQueuePattern = types.StringValue(topology.HoldQueuePattern(queue, s))
	m.QueuesPattern = types.StringValue(topology.QueuesPattern(queue, s))
	m.WritePattern = types.StringValue(topology.WritePattern(queue, s))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// mainQueueSettings checks message_ttl and max_priority and returns them (nil when unset).
func mainQueueSettings(m topologyDataSourceModel) (ttlMs, maxPriority *int64, diags diag.Diagnostics) {
	if !m.MessageTTL.IsNull() {
		ttl, err := parseDuration("message_ttl", m.MessageTTL.ValueString(), messageTTLRange())
		if err == nil {
			var ms int64
			if ms, err = topology.MessageTTLMs(ttl); err == nil {
				ttlMs = &ms
			}
		}
		if err != nil {
			diags.AddAttributeError(path.Root("message_ttl"), "Invalid Message TTL",
				fmt.Sprintf("message_ttl is refused: %s. Give %s.", err, messageTTLRange()))
		}
	}
	if !m.MaxPriority.IsNull() {
		p := m.MaxPriority.ValueInt64()
		if err := topology.ValidateMaxPriority(p); err != nil {
			diags.AddAttributeError(path.Root("max_priority"), "Invalid Max Priority", "max_priority: "+err.Error()+".")
		}
		maxPriority = &p
	}
	return ttlMs, maxPriority, diags
}

// collectHoldTTLs adds to ttls the hold queue TTL of each delay of attr at granularity g.
func collectHoldTTLs(ttls map[int64]struct{}, attr string, delays []types.String, g time.Duration, setting string) diag.Diagnostics {
	var diags diag.Diagnostics
	for i, v := range delays {
		at := path.Root(attr).AtListIndex(i)
		name := at.String()
		if v.IsNull() {
			diags.AddAttributeError(at, "Missing Delay", name+" is null; give a Go duration "+delayRange(g)+", or remove the element.")
			continue
		}
		delay, err := parseDuration(name, v.ValueString(), delayRange(g))
		if err != nil {
			diags.AddAttributeError(at, "Invalid Delay", err.Error()+".")
			continue
		}
		ttl, err := topology.DeferredTTLMs(name, delay, g)
		if err != nil {
			diags.AddAttributeError(at, "Delay Too Long",
				fmt.Sprintf("%s. The granularity is the provider's %s. Use a shorter delay.", err, setting))
			continue
		}
		ttls[ttl] = struct{}{}
	}
	return diags
}

// holdQueueModels returns queue's hold queues for ttls, by ascending TTL.
func holdQueueModels(queue string, ttls map[int64]struct{}, s topology.Suffixes) ([]topologyHoldQueueModel, diag.Diagnostics) {
	out := make([]topologyHoldQueueModel, 0, len(ttls))
	for _, ttl := range slices.Sorted(maps.Keys(ttls)) {
		hold, diags := holdQueueFor(queue, ttl, s)
		if diags.HasError() {
			return nil, diags
		}
		out = append(out, topologyHoldQueueModel{
			Name:          types.StringValue(hold.Name),
			TTLMs:         types.Int64Value(hold.TTLMs),
			ExpiresMs:     types.Int64Value(hold.ExpiresMs),
			ArgumentsJSON: jsontypes.NewNormalizedValue(hold.Args.JSON()),
		})
	}
	return out, nil
}

type topologyDataSourceModel struct {
	Queue            types.String             `tfsdk:"queue"`
	MessageTTL       types.String             `tfsdk:"message_ttl"`
	MaxPriority      types.Int64              `tfsdk:"max_priority"`
	RetryDelays      []types.String           `tfsdk:"retry_delays"`
	DeferralDelays   []types.String           `tfsdk:"deferral_delays"`
	MainQueue        *topologyQueueModel      `tfsdk:"main_queue"`
	DeadQueue        *topologyQueueModel      `tfsdk:"dead_queue"`
	HoldQueues       []topologyHoldQueueModel `tfsdk:"hold_queues"`
	HoldQueuePattern types.String             `tfsdk:"hold_queue_pattern"`
	QueuesPattern    types.String             `tfsdk:"queues_pattern"`
	WritePattern     types.String             `tfsdk:"write_pattern"`
}

type topologyQueueModel struct {
	Name          types.String         `tfsdk:"name"`
	ArgumentsJSON jsontypes.Normalized `tfsdk:"arguments_json"`
}

type topologyHoldQueueModel struct {
	Name          types.String         `tfsdk:"name"`
	TTLMs         types.Int64          `tfsdk:"ttl_ms"`
	ExpiresMs     types.Int64          `tfsdk:"expires_ms"`
	ArgumentsJSON jsontypes.Normalized `tfsdk:"arguments_json"`
}
