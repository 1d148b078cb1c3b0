package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
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

var _ datasource.DataSourceWithConfigure = (*policyEffectsDataSource)(nil)

// NewPolicyEffectsDataSource returns queuey_policy_effects: what the vhost's policies and operator
// policies do now to the queues of one logical queue (the plan's policy check, as values).
func NewPolicyEffectsDataSource() datasource.DataSource { return &policyEffectsDataSource{} }

type policyEffectsDataSource struct {
	configuredDataSource
}

var policyEffectsQueueType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name":                      types.StringType,
	"role":                      types.StringType,
	"policy":                    types.StringType,
	"operator_policy":           types.StringType,
	"effective_definition_json": jsontypes.NormalizedType{},
	"effects":                   types.ListType{ElemType: types.StringType},
}}

func (d *policyEffectsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_policy_effects"
}

func (d *policyEffectsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "What the RabbitMQ policies and operator policies of a vhost do now to the queues of one " +
			"logical queue `q`, read through the management API: for `q`, `q.dead`, each hold queue that exists and the " +
			"holding queue `q.redeclaring` of an interrupted change (when it exists), which policy applies, what the " +
			"queue runs with, and each effect that breaks the backend's contract (messages expired, dropped or deleted, " +
			"waits ended early). It is the plan's policy check (`policy_check`) as values, for `check` blocks, " +
			"postconditions and dashboards. Hold queues not declared yet are not listed: the plan checks them. See the " +
			"guide \"Policies and the topology\".",
		Attributes: map[string]schema.Attribute{
			"queue": schema.StringAttribute{
				MarkdownDescription: queueNameDescription(providerSuffixes),
				Required:            true,
			},
			"vhost": schema.StringAttribute{
				MarkdownDescription: "Virtual host to look in. Defaults to the provider's `vhost`.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.String{vhostValidator{}},
			},
			"ok": schema.BoolAttribute{
				MarkdownDescription: "`true` when no queue has an effect: no policy breaks the topology, and no pattern " +
					"that might apply is beyond the provider's evaluation.",
				Computed: true,
			},
			"queues": policyEffectsQueuesAttribute(),
		},
	}
}

func policyEffectsQueuesAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		MarkdownDescription: "One object per queue: `q`, `q.dead`, the hold queues that exist (by ascending TTL), then " +
			"the holding queue when it exists.",
		Computed: true,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{MarkdownDescription: "Queue name, e.g. `orders.dead`.", Computed: true},
			"role": schema.StringAttribute{
				MarkdownDescription: "What the queue is for: `main` (`q`), `dead` (`q.dead`), `hold` (a hold queue) or " +
					"`holding` (`q.redeclaring`).",
				Computed: true,
			},
			"policy": schema.StringAttribute{
				MarkdownDescription: "The user policy that applies, as RabbitMQ picks it (the highest priority among those " +
					"whose pattern matches, whose `apply-to` covers classic queues and that hold no key classic queues refuse); " +
					"null when none does. Of policies tied at the top priority RabbitMQ applies one of its choice: this names " +
					"the first by name, and `effects` names each tied one that would break the queue.",
				Computed: true,
			},
			"operator_policy": schema.StringAttribute{
				MarkdownDescription: "The operator policy that applies, picked the same way; null when none does.",
				Computed:            true,
			},
			"effective_definition_json": schema.StringAttribute{
				CustomType: jsontypes.NormalizedType{},
				MarkdownDescription: "What the queue runs with, by policy key (`message-ttl`, not `x-message-ttl`), as a JSON " +
					"object with sorted keys: the user and operator policy merged (the lower value of `message-ttl`, " +
					"`expires`, `max-length`, `max-length-bytes`), then the queue's own arguments for the keys RabbitMQ " +
					"merges with them (the lower value of those four; the argument wins for `overflow`, " +
					"`dead-letter-exchange` and `dead-letter-routing-key`). So a hold queue without any policy shows its " +
					"own TTL and expiry. Arguments that no policy key matches (`x-max-priority`) are left out; `{}` when " +
					"neither a policy nor an argument sets anything.",
				Computed: true,
			},
			"effects": schema.ListAttribute{
				MarkdownDescription: "One sentence per effect that breaks the backend's contract, e.g. `message-ttl = 2000 " +
					"(policy \"limits\"): expires messages on orders.dead after 2000 ms: they are lost before anyone consumes " +
					"or moves them`; a policy whose pattern the provider cannot evaluate, and that could apply, is an effect " +
					"too (whether it applies is unknown). Empty when the contract holds.",
				ElementType: types.StringType,
				Computed:    true,
			},
		}},
	}
}

func (d *policyEffectsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m policyEffectsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	resp.Diagnostics.Append(d.data.pureReady()...)
	if resp.Diagnostics.HasError() {
		return
	}
	queue := m.Queue.ValueString()
	resp.Diagnostics.Append(checkQueueAttr(queue, d.data.suffixes)...)
	m.Vhost = dataSourceVhost(d.data, m.Vhost, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	f, diags := d.findings(ctx, m.Vhost.ValueString(), queue)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	var ok bool
	m.Queues, ok, diags = policyEffectsValues(ctx, f)
	m.OK = types.BoolValue(ok)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// findings reads what the policies of vhost do to queue's queues as they exist now: q with the
// arguments the broker has (none while q does not exist), and no probe hold queue.
func (d *policyEffectsDataSource) findings(ctx context.Context, vhost, queue string) (policyFindings, diag.Diagnostics) {
	client, diags := d.data.brokerClient()
	if diags.HasError() {
		return policyFindings{}, diags
	}
	list, err := client.ListQueues(ctx, vhost, broker.Declared, broker.Kept)
	if err != nil {
		if errors.Is(err, broker.ErrNotFound) {
			err = &vhostError{vhost: vhost, endpoint: client.Endpoint(), missing: true, err: err}
		}
		d.data.addFailure(&diags, path.Root("vhost"), err, "Cannot List Queues")
		return policyFindings{}, diags
	}
	mainArgs := map[string]any{}
	if q, ok := list.Queues[queue]; ok && q.Arguments != nil {
		mainArgs = q.Arguments
	}
	f, err := readPolicyFindings(ctx, client, vhost, queue, d.data.suffixes, mainArgs, false)
	switch {
	case errors.Is(err, broker.ErrNotFound):
		err = &vhostError{vhost: vhost, endpoint: client.Endpoint(), missing: true, err: err}
		d.data.addFailure(&diags, path.Root("vhost"), err, "Cannot Read Policies")
	case err != nil:
		// A listing refused in part is an error too: ok would claim what half the policies may deny.
		d.data.addFailure(&diags, path.Empty(), &policyReadError{vhost: vhost, err: err}, "Cannot Read Policies")
	}
	return f, diags
}

// policyReadError is a read of a vhost's policies that failed; it says what lets the read run.
type policyReadError struct {
	vhost string
	err   error
}

func (e *policyReadError) Error() string {
	next := ""
	if errors.Is(e.err, broker.ErrUnauthorized) {
		next = " " + policyReadPermissions
	}
	return fmt.Sprintf("The policies and operator policies of vhost %q could not be read, so what they do to the "+
		"queues cannot be told: %v.%s", e.vhost, e.err, next)
}

func (e *policyReadError) Unwrap() error { return e.err }

// policyEffectsValues returns the queues attribute of f and whether no queue has an effect.
func policyEffectsValues(ctx context.Context, f policyFindings) (types.List, bool, diag.Diagnostics) {
	ok := true
	objs := make([]policyEffectsQueueModel, 0, len(f.queues))
	for _, q := range f.queues {
		a := f.applied[q.Name]
		effects := effectSentences(f, q, a)
		ok = ok && len(effects) == 0
		objs = append(objs, policyEffectsQueueModel{
			Name:                    types.StringValue(q.Name),
			Role:                    types.StringValue(q.Role.String()),
			Policy:                  policyName(a.User),
			OperatorPolicy:          policyName(a.Operator),
			EffectiveDefinitionJSON: jsontypes.NewNormalizedValue(definitionJSON(topology.EffectiveDefinition(q.Args, policyDefinition(a.User), policyDefinition(a.Operator)))),
			Effects:                 effects,
		})
	}
	list, diags := types.ListValueFrom(ctx, policyEffectsQueueType, objs)
	return list, ok, diags
}

// effectSentences says each effect on q, then each pattern that could apply to q and cannot be
// evaluated.
func effectSentences(f policyFindings, q topology.CheckedQueue, a topology.Applied) []string {
	out := []string{}
	for _, e := range f.effects {
		if e.Queue == q.Name {
			out = append(out, fmt.Sprintf("%s = %s (%s): %s", e.Key, renderValue(e.Value), effectSource(e, a), e.Text))
		}
	}
	for _, pe := range a.Unevaluable {
		out = append(out, fmt.Sprintf("%s: whether it applies to %s, and what it does there, is unknown", pe.Error(), q.Name))
	}
	return out
}

// effectSource names the policy of e, and for a tied one the policy it ties with.
func effectSource(e topology.Effect, a topology.Applied) string {
	src := fmt.Sprintf("%s %q", policyNoun(e.Operator), e.Policy)
	if !e.Tied {
		return src
	}
	applying := a.User
	if e.Operator {
		applying = a.Operator
	}
	if applying == nil {
		return src
	}
	return fmt.Sprintf("%s, tied in priority with %q: RabbitMQ applies either", src, applying.Name)
}

func policyName(p *topology.Policy) types.String {
	if p == nil {
		return types.StringNull()
	}
	return types.StringValue(p.Name)
}

func policyDefinition(p *topology.Policy) map[string]any {
	if p == nil {
		return nil
	}
	return p.Definition
}

// definitionJSON writes def as the other *_json attributes are written: keys sorted, integers as
// integers, no HTML escaping.
func definitionJSON(def map[string]any) string {
	out := make(map[string]any, len(def))
	for k, v := range def {
		if n, ok := topology.AsInt(v); ok {
			v = n
		}
		out[k] = v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return "{}" // a definition decoded from JSON always encodes
	}
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}

type policyEffectsModel struct {
	Queue  types.String `tfsdk:"queue"`
	Vhost  types.String `tfsdk:"vhost"`
	OK     types.Bool   `tfsdk:"ok"`
	Queues types.List   `tfsdk:"queues"`
}

type policyEffectsQueueModel struct {
	Name                    types.String         `tfsdk:"name"`
	Role                    types.String         `tfsdk:"role"`
	Policy                  types.String         `tfsdk:"policy"`
	OperatorPolicy          types.String         `tfsdk:"operator_policy"`
	EffectiveDefinitionJSON jsontypes.Normalized `tfsdk:"effective_definition_json"`
	Effects                 []string             `tfsdk:"effects"`
}
