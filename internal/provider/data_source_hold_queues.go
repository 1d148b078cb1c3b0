package provider

import (
	"context"
	"errors"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var _ datasource.DataSourceWithConfigure = (*holdQueuesDataSource)(nil)

// NewHoldQueuesDataSource returns queuey_hold_queues: the hold queues of a queue on the broker now.
func NewHoldQueuesDataSource() datasource.DataSource { return &holdQueuesDataSource{} }

type holdQueuesDataSource struct {
	configuredDataSource
}

var holdQueueObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name":     types.StringType,
	"ttl_ms":   types.Int64Type,
	"messages": types.Int64Type,
}}

func (d *holdQueuesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_hold_queues"
}

func (d *holdQueuesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists the hold queues of a queue that exist on the broker now, read through the management API. " +
			"Only names that are exactly the queue's name, the provider's `deferred_suffix` and a TTL (decimal digits without a " +
			"leading zero, 1 to 2147483647) count: not `orders.deferred.`, `orders.deferred.x1`, `orders.deferred.5000.bak`, " +
			"nor another queue's. Hold queues come and go with traffic (an idle one deletes itself), so the list is a snapshot.",
		Attributes: map[string]schema.Attribute{
			"queue": schema.StringAttribute{
				MarkdownDescription: "Name of the logical (main) queue, e.g. `orders`.",
				Required:            true,
			},
			"vhost": schema.StringAttribute{
				MarkdownDescription: "Virtual host to look in. Defaults to the provider's `vhost`.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.String{vhostValidator{}},
			},
			"names": schema.ListAttribute{
				MarkdownDescription: "Names of the hold queues, by ascending TTL.",
				ElementType:         types.StringType,
				Computed:            true,
			},
			"queues": schema.ListNestedAttribute{
				MarkdownDescription: "The hold queues, by ascending TTL.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":   schema.StringAttribute{MarkdownDescription: "Queue name, e.g. `orders.deferred.30000`.", Computed: true},
					"ttl_ms": schema.Int64Attribute{MarkdownDescription: "TTL of the hold queue in milliseconds, read from its name.", Computed: true},
					"messages": schema.Int64Attribute{
						MarkdownDescription: "Messages in the queue (ready and unacknowledged); null while the broker has not reported it.",
						Computed:            true,
					},
				}},
			},
		},
	}
}

func (d *holdQueuesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m holdQueuesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	resp.Diagnostics.Append(d.data.pureReady()...)
	if resp.Diagnostics.HasError() {
		return
	}
	queue := m.Queue.ValueString()
	resp.Diagnostics.Append(checkQueueAttr(queue, d.data.suffixes)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Vhost = dataSourceVhost(d.data, m.Vhost, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	holds, diags := d.listHoldQueues(ctx, m.Vhost.ValueString(), queue)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Names, m.Queues, diags = holdQueueLists(holds)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// heldQueue is a hold queue the broker has.
type heldQueue struct {
	name     string
	ttl      int64
	messages *int64
}

// listHoldQueues returns the hold queues of queue that vhost has, by ascending TTL.
func (d *holdQueuesDataSource) listHoldQueues(ctx context.Context, vhost, queue string) ([]heldQueue, diag.Diagnostics) {
	client, diags := d.data.brokerClient()
	if diags.HasError() {
		return nil, diags
	}
	allList, err := client.ListQueues(ctx, vhost, broker.Counted, broker.Live)
	all := allList.Queues
	if errors.Is(err, broker.ErrNotFound) {
		err = &vhostError{vhost: vhost, endpoint: client.Endpoint(), missing: true, err: err}
	}
	if err != nil {
		d.data.addFailure(&diags, path.Root("vhost"), err, "Cannot List Queues")
		return nil, diags
	}
	var holds []heldQueue
	for name, q := range all {
		if ttl, ok := topology.ParseHoldQueueName(queue, name, d.data.suffixes); ok {
			holds = append(holds, heldQueue{name: name, ttl: ttl, messages: q.Messages})
		}
	}
	sort.Slice(holds, func(i, j int) bool { return holds[i].ttl < holds[j].ttl })
	return holds, diags
}

// holdQueueLists returns the names and queues attributes of holds.
func holdQueueLists(holds []heldQueue) (names, queues types.List, diags diag.Diagnostics) {
	nameValues := make([]attr.Value, 0, len(holds))
	objs := make([]attr.Value, 0, len(holds))
	for _, h := range holds {
		nameValues = append(nameValues, types.StringValue(h.name))
		obj, d := types.ObjectValue(holdQueueObjectType.AttrTypes, map[string]attr.Value{
			"name":     types.StringValue(h.name),
			"ttl_ms":   types.Int64Value(h.ttl),
			"messages": types.Int64PointerValue(h.messages),
		})
		diags.Append(d...)
		objs = append(objs, obj)
	}
	names, d := types.ListValue(types.StringType, nameValues)
	diags.Append(d...)
	queues, d = types.ListValue(holdQueueObjectType, objs)
	diags.Append(d...)
	return names, queues, diags
}

type holdQueuesModel struct {
	Queue  types.String `tfsdk:"queue"`
	Vhost  types.String `tfsdk:"vhost"`
	Names  types.List   `tfsdk:"names"`
	Queues types.List   `tfsdk:"queues"`
}
