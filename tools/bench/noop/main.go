// Command noop is the plugin floor of make bench: a provider built on the
// same terraform-plugin-framework version as terraform-provider-queuey whose
// one resource, noop_queue, has the attributes of queuey_queue and does
// nothing with them. What queuey costs above it is queuey's own work; what it
// costs itself is the price of being a plugin (the protocol, the framework,
// Terraform's handling of a provider process). Like queuey it turns the SDK's
// logging off unless logs are asked for, and honours QUEUEY_CPUPROFILE.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/plugintune"
)

// Address is where the bench's dev_overrides find this provider.
const Address = "registry.terraform.io/queuey/noop"

func main() {
	stop := plugintune.Start()
	err := providerserver.Serve(context.Background(), func() provider.Provider { return noopProvider{} },
		providerserver.ServeOpts{Address: Address})
	stop()
	if err != nil {
		log.Fatal(err.Error())
	}
}

type noopProvider struct{}

func (noopProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "noop"
}

func (noopProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (noopProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (noopProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return noopQueue{} }}
}

func (noopProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type noopQueue struct{}

func (noopQueue) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue"
}

// Schema has the attributes of queuey_queue, with the same types and roles,
// so that the framework's work per attribute (it walks every attribute of
// the schema on every call) is the same on both sides; none has a
// validator, a plan modifier or a default.
func (noopQueue) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"name":          schema.StringAttribute{Required: true},
		"vhost":         schema.StringAttribute{Optional: true, Computed: true},
		"message_ttl":   schema.StringAttribute{Optional: true},
		"max_priority":  schema.Int64Attribute{Optional: true},
		"force_destroy": schema.BoolAttribute{Optional: true},
	}
	for _, name := range computed {
		attrs[name] = schema.StringAttribute{Computed: true}
	}
	resp.Schema = schema.Schema{Attributes: attrs}
}

// computed are the string attributes that queuey_queue computes.
var computed = []string{"id", "dead_queue", "arguments_json", "hold_queue_prefix", "hold_queue_pattern", "queues_pattern", "write_pattern"}

type noopModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	Vhost            types.String `tfsdk:"vhost"`
	MessageTTL       types.String `tfsdk:"message_ttl"`
	MaxPriority      types.Int64  `tfsdk:"max_priority"`
	ForceDestroy     types.Bool   `tfsdk:"force_destroy"`
	DeadQueue        types.String `tfsdk:"dead_queue"`
	ArgumentsJSON    types.String `tfsdk:"arguments_json"`
	HoldQueuePrefix  types.String `tfsdk:"hold_queue_prefix"`
	HoldQueuePattern types.String `tfsdk:"hold_queue_pattern"`
	QueuesPattern    types.String `tfsdk:"queues_pattern"`
	WritePattern     types.String `tfsdk:"write_pattern"`
}

// Create reads its plan and writes it as state, the computed attributes
// filled with the name: the least any resource does.
func (noopQueue) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m noopModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if m.Vhost.IsUnknown() {
		m.Vhost = types.StringValue("/")
	}
	for _, v := range []*types.String{&m.ID, &m.DeadQueue, &m.ArgumentsJSON, &m.HoldQueuePrefix, &m.HoldQueuePattern, &m.QueuesPattern, &m.WritePattern} {
		*v = m.Name
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Read, Update and Delete keep what Terraform hands them.
func (noopQueue) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (noopQueue) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (noopQueue) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
