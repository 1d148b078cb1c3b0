// Command noop holds the plugin floors of make bench: a provider on queuey's
// terraform-plugin-framework version with two resources that have queuey_queue's attributes.
//
//   - noop_queue does nothing with them: what queuey costs above it is queuey's own work. The floor
//     for plan and refresh.
//   - noop_writes makes only the writes no correct provider can skip (Create declares q.dead then
//     q, Delete deletes q then q.dead, if-empty). The floor for apply and destroy.
//
// Like queuey it turns the SDK's logging off unless asked, and honours QUEUEY_CPUPROFILE.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

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

// Configure hands noop_writes the management API of the environment, or nil when RABBITMQ_ENDPOINT
// is unset.
func (noopProvider) Configure(_ context.Context, _ provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	endpoint := strings.TrimSuffix(os.Getenv("RABBITMQ_ENDPOINT"), "/")
	if endpoint == "" {
		return
	}
	resp.ResourceData = &managementAPI{
		endpoint: endpoint,
		username: os.Getenv("RABBITMQ_USERNAME"),
		password: os.Getenv("RABBITMQ_PASSWORD"),
		client:   sharedClient,
	}
}

// sharedClient keeps as many idle connections as queuey does, so -parallelism=10 never opens one
// per request.
var sharedClient = &http.Client{Transport: &http.Transport{
	Proxy:               http.ProxyFromEnvironment,
	MaxIdleConns:        64,
	MaxIdleConnsPerHost: 64,
	IdleConnTimeout:     90 * time.Second,
}}

func (noopProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return noopQueue{} },
		func() resource.Resource { return &noopWrites{} },
	}
}

func (noopProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type noopQueue struct{}

func (noopQueue) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue"
}

// Schema has queuey_queue's attributes, types and roles, so the framework's per-attribute work is
// the same on both sides; no validators, plan modifiers or defaults.
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

// Create writes its plan as state, the computed attributes filled: the least any resource does.
func (noopQueue) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m noopModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	m.fill()
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// fill gives the computed attributes a value: the vhost "/" when unset, every other one the name.
func (m *noopModel) fill() {
	if m.Vhost.IsUnknown() {
		m.Vhost = types.StringValue("/")
	}
	for _, v := range []*types.String{&m.ID, &m.DeadQueue, &m.ArgumentsJSON, &m.HoldQueuePrefix, &m.HoldQueuePattern, &m.QueuesPattern, &m.WritePattern} {
		*v = m.Name
	}
}

// Read, Update and Delete keep what Terraform hands them.
func (noopQueue) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (noopQueue) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (noopQueue) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// noopWrites is noop_queue plus a logical queue's management API writes.
type noopWrites struct {
	noopQueue
	api *managementAPI
}

func (*noopWrites) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_writes"
}

func (w *noopWrites) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	w.api, _ = req.ProviderData.(*managementAPI)
}

// Create declares q.dead, then q, then writes the plan as state.
func (w *noopWrites) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m noopModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.fill()
	args, err := mainQueueArgs(m)
	if err != nil {
		resp.Diagnostics.AddError("noop_writes: message_ttl", err.Error())
		return
	}
	for _, q := range []struct {
		name string
		args map[string]any
	}{{m.Name.ValueString() + ".dead", map[string]any{}}, {m.Name.ValueString(), args}} {
		if err := w.api.send(ctx, http.MethodPut, m.Vhost.ValueString(), q.name, "", q.args); err != nil {
			resp.Diagnostics.AddError("noop_writes: declaring a queue", err.Error())
			return
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Delete deletes q, then q.dead, each if empty; a queue already gone counts as deleted.
func (w *noopWrites) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m noopModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	for _, name := range []string{m.Name.ValueString(), m.Name.ValueString() + ".dead"} {
		if err := w.api.send(ctx, http.MethodDelete, m.Vhost.ValueString(), name, "?if-empty=true", nil); err != nil {
			resp.Diagnostics.AddError("noop_writes: deleting a queue", err.Error())
			return
		}
	}
}

// managementAPI is where noop_writes sends its requests (under make bench, the counting proxy, as
// for queuey).
type managementAPI struct {
	endpoint, username, password string
	client                       *http.Client
}

// mainQueueArgs are queuey's arguments of q for the same settings (a priority queue costs the
// broker more, so the floor declares the same).
func mainQueueArgs(m noopModel) (map[string]any, error) {
	args := map[string]any{}
	if ttl := m.MessageTTL.ValueString(); ttl != "" {
		d, err := time.ParseDuration(ttl)
		if err != nil {
			return nil, err
		}
		args["x-message-ttl"] = d.Milliseconds()
	}
	if !m.MaxPriority.IsNull() && !m.MaxPriority.IsUnknown() {
		args["x-max-priority"] = m.MaxPriority.ValueInt64()
	}
	return args, nil
}

// send makes one request on a queue: a PUT declaring a durable classic queue with args, or a DELETE
// (with query) for which 404 is success; any other non-2xx answer is an error quoting the broker.
func (a *managementAPI) send(ctx context.Context, method, vhost, name, query string, args map[string]any) error {
	if a == nil {
		return errors.New("RABBITMQ_ENDPOINT is not set")
	}
	u := a.endpoint + "/api/queues/" + url.PathEscape(vhost) + "/" + url.PathEscape(name) + query
	var body io.Reader
	if method == http.MethodPut {
		b, err := json.Marshal(map[string]any{"durable": true, "auto_delete": false, "arguments": args})
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	req.SetBasicAuth(a.username, a.password)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	// Read to the end so that the connection is reused.
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 == 2 || (method == http.MethodDelete && resp.StatusCode == http.StatusNotFound) {
		return nil
	}
	return fmt.Errorf("%s %s: %s: %s", method, u, resp.Status, bytes.TrimSpace(answer))
}
