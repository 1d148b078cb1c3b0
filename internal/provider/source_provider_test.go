package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	pschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A TEST-ONLY stand-in for the rabbitmq_queue resource of cyrilgdn/rabbitmq,
// which is not on the Go module proxy: the same schema (name, vhost, one
// settings block with durable, auto_delete, arguments as a map of strings and
// arguments_json), hence the same state, with just enough of Create, Read and
// Delete against the management API for the migration tests. It reads the
// same RABBITMQ_ENDPOINT, RABBITMQ_USERNAME and RABBITMQ_PASSWORD as the real
// provider. It is never built into the provider: the test binary serves it
// (TestMain) when the CLI starts it as the plugin.

// serveSourceProviderEnv makes the test binary serve the stand-in.
const serveSourceProviderEnv = "QUEUEY_TEST_SERVE_RABBITMQ_PROVIDER"

// serveSourceProvider serves the stand-in over plugin protocol 5 (the real
// provider is built with terraform-plugin-sdk v2) until the CLI stops it.
func serveSourceProvider() int {
	err := providerserver.Serve(context.Background(), func() provider.Provider { return sourceProvider{} },
		providerserver.ServeOpts{Address: "registry.terraform.io/cyrilgdn/rabbitmq", ProtocolVersion: 5})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type sourceProvider struct{}

func (sourceProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "rabbitmq"
}

func (sourceProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = pschema.Schema{Attributes: map[string]pschema.Attribute{
		"endpoint": pschema.StringAttribute{Optional: true},
		"username": pschema.StringAttribute{Optional: true},
		"password": pschema.StringAttribute{Optional: true, Sensitive: true},
	}}
}

func (sourceProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (sourceProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return sourceQueueResource{} }}
}

func (sourceProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type sourceQueueResource struct{}

type sourceQueueModel struct {
	ID       types.String          `tfsdk:"id"`
	Name     types.String          `tfsdk:"name"`
	Vhost    types.String          `tfsdk:"vhost"`
	Settings []sourceSettingsModel `tfsdk:"settings"`
}

type sourceSettingsModel struct {
	Durable       types.Bool   `tfsdk:"durable"`
	AutoDelete    types.Bool   `tfsdk:"auto_delete"`
	Arguments     types.Map    `tfsdk:"arguments"`
	ArgumentsJSON types.String `tfsdk:"arguments_json"`
}

func (sourceQueueResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "rabbitmq_queue"
}

func (sourceQueueResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Attributes: map[string]schema.Attribute{
			"id":    schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name":  schema.StringAttribute{Required: true, PlanModifiers: replace},
			"vhost": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("/"), PlanModifiers: replace},
		},
		Blocks: map[string]schema.Block{
			"settings": schema.ListNestedBlock{
				Validators:    []validator.List{listvalidator.SizeBetween(1, 1)},
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
				NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
					"durable":        schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false)},
					"auto_delete":    schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false)},
					"arguments":      schema.MapAttribute{Optional: true, ElementType: types.StringType},
					"arguments_json": schema.StringAttribute{Optional: true},
				}},
			},
		},
	}
}

func (sourceQueueResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m sourceQueueModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	s := m.Settings[0]
	args := map[string]any{}
	if !s.ArgumentsJSON.IsNull() {
		if err := json.Unmarshal([]byte(s.ArgumentsJSON.ValueString()), &args); err != nil {
			resp.Diagnostics.AddError("Invalid arguments_json", err.Error())
			return
		}
	}
	for k, v := range s.Arguments.Elements() {
		if sv, ok := v.(types.String); ok {
			args[k] = sv.ValueString()
		}
	}
	body := map[string]any{"durable": s.Durable.ValueBool(), "auto_delete": s.AutoDelete.ValueBool(), "arguments": args}
	if _, err := sourceAPI(ctx, http.MethodPut, m.Vhost.ValueString(), m.Name.ValueString(), body); err != nil {
		resp.Diagnostics.AddError("Cannot Declare Queue", err.Error())
		return
	}
	m.ID = types.StringValue(m.Name.ValueString() + "@" + m.Vhost.ValueString())
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (sourceQueueResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m sourceQueueModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	status, err := sourceAPI(ctx, http.MethodGet, m.Vhost.ValueString(), m.Name.ValueString(), nil)
	if err != nil {
		resp.Diagnostics.AddError("Cannot Read Queue", err.Error())
		return
	}
	if status == http.StatusNotFound {
		resp.State.RemoveResource(ctx)
	}
}

func (sourceQueueResource) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {
}

func (sourceQueueResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m sourceQueueModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if _, err := sourceAPI(ctx, http.MethodDelete, m.Vhost.ValueString(), m.Name.ValueString(), nil); err != nil {
		resp.Diagnostics.AddError("Cannot Delete Queue", err.Error())
	}
}

// sourceAPI makes one management API call on a queue and returns its status;
// a 404 is not an error.
func sourceAPI(ctx context.Context, method, vhost, name string, body any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	u := strings.TrimRight(os.Getenv(EnvEndpoint), "/") + "/api/queues/" + url.PathEscape(vhost) + "/" + url.PathEscape(name)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, err
	}
	req.SetBasicAuth(testUser(), testPassword())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 && resp.StatusCode != http.StatusNotFound {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, u, resp.Status, msg)
	}
	return resp.StatusCode, nil
}
