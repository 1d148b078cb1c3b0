package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The migration guide's example (examples/guides/migrate), step by step.
const migrateExample = "../../examples/guides/migrate"

// migrationConfig reads a step of the guide's example with the queue
// "orders" renamed to name: each "= \"orders" starts a queue's name.
func migrationConfig(t *testing.T, step, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(migrateExample, step, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), `= "orders`, `= "`+name)
}

// newMigrationCLI is newTerraformCLI with the test-only rabbitmq provider
// (the stand-in below) installed too: this test binary, started by the CLI
// with serveSourceProviderEnv set.
func newMigrationCLI(t *testing.T, config string) *terraformCLI {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err == nil {
		err = os.Symlink(self, filepath.Join(dir, "terraform-provider-rabbitmq"))
	}
	if err != nil {
		t.Fatal(err)
	}
	return overridingCLI(t, config, map[string]string{"cyrilgdn/rabbitmq": dir}, serveSourceProviderEnv+"=1")
}

// TestAccMove_fromRabbitMQQueue runs the migration guide: rabbitmq_queue.orders
// moves into queuey_queue.orders, the dead-letter queue's rabbitmq_queue is
// removed from state without being destroyed, and nothing changes on the
// broker: the plans after it are empty and the message is still there.
func TestAccMove_fromRabbitMQQueue(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureMove)
	t.Parallel()
	name := uniqueName("move")
	cleanupQueues(t, "/", name)
	tf := newMigrationCLI(t, migrationConfig(t, "1-before", name))
	tf.mustRun("apply", "-auto-approve")
	publish(t, amqpChannel(t, "/"), name, 1)

	tf.writeConfig(migrationConfig(t, "2-move", name))
	out := tf.mustRun("plan")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`rabbitmq_queue\.orders has moved to queuey_queue\.orders`),
		// Terraform and OpenTofu word it differently.
		regexp.MustCompile(`rabbitmq_queue\.orders_dead will (no longer be managed by Terraform,|be removed from the OpenTofu state) but will not be destroyed`),
		regexp.MustCompile(`Plan: 0 to add, 0 to change, 0 to destroy`),
	} {
		if !want.MatchString(out) {
			t.Fatalf("plan of the move lacks %s:\n%s", want, out)
		}
	}
	t.Logf("the plan of the move:\n%s", out)
	tf.mustRun("apply", "-auto-approve")
	if out := tf.mustRun("state", "list"); strings.TrimSpace(out) != "queuey_queue.orders" {
		t.Fatalf("state after the move holds:\n%s", out)
	}
	out = tf.mustRun("state", "show", "queuey_queue.orders")
	for _, want := range []string{`dead_queue = "` + name + `.dead"`, `force_destroy = false`, `keep_messages_on_change = false`,
		`message_ttl = "24h"`, `arguments_json = jsonencode(`, `id = "%2F/` + name + `"`} {
		if !saysWords(out, want) {
			t.Errorf("state after the move lacks %s:\n%s", want, out)
		}
	}
	checkStateIdentity(t, tf, name)
	if out := tf.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Fatalf("plan after the move is not empty:\n%s", out)
	}
	// The rabbitmq provider is no longer needed.
	tf.writeConfig(migrationConfig(t, "3-after", name))
	if out := tf.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Fatalf("plan without the rabbitmq provider is not empty:\n%s", out)
	}
	if n := messagesIn(t, "/", name); n != 1 {
		t.Fatalf("after the move %s holds %d messages, want 1", name, n)
	}
	if !queueExists(t, "/", name+topology.DefaultDeadSuffix) {
		t.Fatalf("the move lost %s.dead", name)
	}
}

// TestAccMove_refusesOtherArguments: a rabbitmq_queue with an argument the
// backend never declares is not moved: the plan fails naming it, and state
// and broker are as before.
func TestAccMove_refusesOtherArguments(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureMove)
	t.Parallel()
	name := uniqueName("moveref")
	cleanupQueues(t, "/", name)
	before := strings.Replace(migrationConfig(t, "1-before", name), `"x-max-priority" = 10`, `"x-max-priority" = 10, "x-max-length" = 1000`, 1)
	tf := newMigrationCLI(t, before)
	tf.mustRun("apply", "-auto-approve")

	tf.writeConfig(migrationConfig(t, "2-move", name))
	out, err := tf.run("apply", "-auto-approve")
	if err == nil {
		t.Fatalf("the move of a queue with x-max-length succeeded:\n%s", out)
	}
	for _, want := range []string{"Cannot Move rabbitmq_queue", `settings.arguments_json "x-max-length": rabbitmq_queue has 1000`, "Nothing was moved"} {
		if !strings.Contains(out, want) {
			t.Errorf("error lacks %q:\n%s", want, out)
		}
	}
	if out := tf.mustRun("state", "list"); strings.TrimSpace(out) != "rabbitmq_queue.orders\nrabbitmq_queue.orders_dead" {
		t.Fatalf("state after the refused move holds:\n%s", out)
	}
	q, err := accClient(t).GetQueue(context.Background(), "/", name, broker.Declared)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := intArg(q.Arguments, "x-max-length"); !ok || v != 1000 {
		t.Fatalf("after the refused move %s has arguments %v", name, q.Arguments)
	}
	// The source provider still manages the queues.
	tf.writeConfig(before)
	tf.mustRun("destroy", "-auto-approve")
	if queueExists(t, "/", name) || queueExists(t, "/", name+topology.DefaultDeadSuffix) {
		t.Fatal("destroy through the rabbitmq provider left queues behind")
	}
}

// serveSourceProviderEnv makes the test binary serve the stand-in.
const serveSourceProviderEnv = "QUEUEY_TEST_SERVE_RABBITMQ_PROVIDER"

// A TEST-ONLY stand-in for the rabbitmq_queue resource of cyrilgdn/rabbitmq,
// which is not on the Go module proxy: the same schema (name, vhost, one
// settings block with durable, auto_delete, arguments as a map of strings and
// arguments_json), hence the same state, with just enough of Create and
// Delete against the management API for the migration tests: no plan
// modifiers or validators (the tests change no rabbitmq_queue in place), a
// Read that keeps the state, a Create that declares a durable queue with its
// one settings block's arguments_json (arguments, durable = false and
// auto_delete = true it refuses rather than declare otherwise than the real
// provider would), and a Delete that expects the queue there. It reads the
// same RABBITMQ_ENDPOINT, RABBITMQ_USERNAME and RABBITMQ_PASSWORD as the real
// provider, through the environment, not the provider block. It is never
// built into the provider: the test binary serves it (TestMain) when the CLI
// starts it as the plugin.

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

func (sourceProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

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
	resp.Schema = schema.Schema{
		Attributes: map[string]schema.Attribute{
			"id":    schema.StringAttribute{Computed: true},
			"name":  schema.StringAttribute{Required: true},
			"vhost": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("/")},
		},
		Blocks: map[string]schema.Block{"settings": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{
			Attributes: map[string]schema.Attribute{
				"durable":        schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false)},
				"auto_delete":    schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false)},
				"arguments":      schema.MapAttribute{Optional: true, ElementType: types.StringType},
				"arguments_json": schema.StringAttribute{Optional: true},
			},
		}}},
	}
}

func (sourceQueueResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m sourceQueueModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	s := m.Settings[0]
	var args map[string]any
	c, err := envClient()
	if !s.Durable.ValueBool() || s.AutoDelete.ValueBool() || !s.Arguments.IsNull() {
		// What it cannot declare as the real provider would, it refuses.
		err = errors.New("the stand-in declares durable queues that are not auto-delete, with arguments_json only")
	}
	if err == nil {
		err = json.Unmarshal([]byte(cmp.Or(s.ArgumentsJSON.ValueString(), "{}")), &args)
	}
	if err == nil {
		err = c.DeclareQueue(ctx, m.Vhost.ValueString(), m.Name.ValueString(), args)
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot Declare Queue", err.Error())
		return
	}
	m.ID = types.StringValue(m.Name.ValueString() + "@" + m.Vhost.ValueString())
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Read keeps the state as it is: the tests delete no queue behind the stand-in's back.
func (sourceQueueResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (sourceQueueResource) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {
}

func (sourceQueueResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m sourceQueueModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	c, err := envClient()
	if err == nil && !resp.Diagnostics.HasError() {
		err = c.DeleteQueue(ctx, m.Vhost.ValueString(), m.Name.ValueString(), false)
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot Delete Queue", err.Error())
	}
}
