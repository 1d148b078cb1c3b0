package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var (
	_ list.ListResource              = (*queueListResource)(nil)
	_ list.ListResourceWithConfigure = (*queueListResource)(nil)
)

// NewQueueListResource returns the queuey_queue list resource, for `terraform query`.
func NewQueueListResource() list.ListResource { return &queueListResource{} }

type queueListResource struct {
	data *providerData
}

func (r *queueListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue"
}

func (r *queueListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "Lists the logical queues of a vhost exactly as the queuey backend declares them, sorted by name, " +
			"for `terraform query` (Terraform 1.14 or later): every queue `q` whose dead-letter queue exists too, both durable, " +
			"not auto-delete, not exclusive and classic, `q` with no argument but `x-message-ttl` and `x-max-priority` and its " +
			"dead-letter queue with none. A queue that has a dead-letter sibling but differs is named, with its first " +
			"difference, in one warning; a dead-letter or hold queue of a listed queue is never listed itself. " +
			"`terraform query -generate-config-out=FILE` writes a `queuey_queue` and an `import` block for each.",
		Attributes: map[string]listschema.Attribute{
			"vhost": listschema.StringAttribute{
				MarkdownDescription: "Virtual host to list. Defaults to the provider's `vhost`.",
				Optional:            true,
				Validators:          []validator.String{vhostValidator{}},
			},
			"name_regex": listschema.StringAttribute{
				MarkdownDescription: "Regular expression (RE2 syntax, as Go's `regexp`) that the name of `q` must match, " +
					"e.g. `^orders` (unanchored unless you anchor it). Unset, every logical queue is listed.",
				Optional:   true,
				Validators: []validator.String{regexValidator{}},
			},
		},
	}
}

func (r *queueListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data, resp.Diagnostics = configuredData(req.ProviderData, resp.Diagnostics)
}

// List streams first the near-miss warning (so Terraform's limit never drops it), then the queues.
func (r *queueListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var cfg queueListConfig
	diags := req.Config.Get(ctx, &cfg)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	l, diags := r.listing(ctx, cfg)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		if len(l.near) > 0 && !push(list.ListResult{Diagnostics: nearMissWarning(l.vhost, l.near)}) {
			return
		}
		for i, f := range l.found {
			if req.Limit > 0 && int64(i) >= req.Limit {
				return
			}
			if !push(r.result(ctx, req, l, f)) {
				return
			}
		}
	}
}

// queueListing is what one listing of a vhost found.
type queueListing struct {
	vhost    string
	suffixes topology.Suffixes
	queues   map[string]broker.Queue
	found    []topology.Found
	near     []topology.NearMiss
}

// listing checks the vhost as the resource does and picks its logical queues from one listing.
func (r *queueListResource) listing(ctx context.Context, cfg queueListConfig) (queueListing, diag.Diagnostics) {
	var diags diag.Diagnostics
	client, d := r.data.brokerClient()
	if diags.Append(d...); diags.HasError() {
		return queueListing{}, diags
	}
	l := queueListing{vhost: r.data.vhost, suffixes: r.data.suffixes}
	if !cfg.Vhost.IsNull() {
		l.vhost = cfg.Vhost.ValueString()
	}
	var match func(string) bool
	if !cfg.NameRegex.IsNull() {
		re, err := regexp.Compile(cfg.NameRegex.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("name_regex"), "Invalid Regular Expression", regexError(err))
			return queueListing{}, diags
		}
		match = re.MatchString
	}
	if err := checkVhost(ctx, client, l.vhost); err != nil {
		r.data.addFailure(&diags, path.Root("vhost"), err, "Cannot Use Vhost")
		return queueListing{}, diags
	}
	queuesList, err := client.ListQueues(ctx, l.vhost, broker.Declared, broker.Kept)
	queues := queuesList.Queues
	err = vhostMissing(client, l.vhost, err)
	if err != nil {
		r.data.addFailure(&diags, path.Root("vhost"), err, "Cannot List Queues")
		return queueListing{}, diags
	}
	l.queues = queues
	named := make([]topology.NamedQueue, 0, len(queues))
	for name, q := range queues {
		named = append(named, topology.NamedQueue{Name: name, Existing: existingOf(q)})
	}
	l.found, l.near = topology.LogicalQueues(named, l.suffixes, match)
	return l, diags
}

// result is one logical queue as listed, with the state an import's Read gives when asked.
func (r *queueListResource) result(ctx context.Context, req list.ListRequest, l queueListing, f topology.Found) list.ListResult {
	res := req.NewListResult(ctx)
	res.DisplayName = fmt.Sprintf("%s (vhost %s)", f.Name, l.vhost)
	res.Diagnostics.Append(setIdentity(ctx, res.Identity, f.Name, l.vhost)...)
	if req.IncludeResource {
		m := queueModel{Name: types.StringValue(f.Name), Vhost: types.StringValue(l.vhost), ForceDestroy: types.BoolValue(false),
			KeepMessages: types.BoolValue(false), Redeclaring: types.Int64Null()}
		m = observedState(m, l.queues[f.Name], true, l.suffixes)
		res.Diagnostics.Append(res.Resource.Set(ctx, &m)...)
	}
	return res
}

// nearMissWarning names every queue with a dead-letter sibling that is not listed.
func nearMissWarning(vhost string, near []topology.NearMiss) diag.Diagnostics {
	lines := make([]string, len(near))
	for i, n := range near {
		lines[i] = n.String()
	}
	what := fmt.Sprintf("These %d queues have a dead-letter queue in vhost %q but differ from what the queuey backend "+
		"declares, so they are not listed (queuey_queue would refuse to adopt them as they are)", len(near), vhost)
	if len(near) == 1 {
		what = fmt.Sprintf("This queue has a dead-letter queue in vhost %q but differs from what the queuey backend "+
			"declares, so it is not listed (queuey_queue would refuse to adopt it as it is)", vhost)
	}
	var diags diag.Diagnostics
	diags.AddWarning("Queues Not Listed",
		fmt.Sprintf("%s:\n  - %s\nTo manage one with queuey_queue, drain it and declare it again the way the backend does.",
			what, strings.Join(lines, "\n  - ")))
	return diags
}

var _ validator.String = regexValidator{}

// queueListConfig is the config block of a queuey_queue list.
type queueListConfig struct {
	Vhost     types.String `tfsdk:"vhost"`
	NameRegex types.String `tfsdk:"name_regex"`
}
