package provider

import (
	"os"
	"testing"

	"context"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// testProviderFactories serves the provider in-process to the terraform CLI
// that terraform-plugin-testing drives.
var testProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"queuey": providerserver.NewProtocol6WithError(New("test")()),
}

// testAccPreCheck comes first in every acceptance test. Without TF_ACC the
// test is skipped before it touches a broker (the unit stage of make test runs
// them that way, and the acceptance stage runs them all); with TF_ACC a
// missing broker fails the test rather than skipping it: make test provides one.
func testAccPreCheck(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: runs with TF_ACC=1 against a broker (make testacc)")
	}
	if os.Getenv(EnvEndpoint) == "" {
		t.Fatalf("%s must be set for acceptance tests; run them with `make testacc`, which makes a broker ready", EnvEndpoint)
	}
}

// TestProviderSchema_passwordSensitive: Terraform hides the password in plan
// output and state only when the schema marks it sensitive.
func TestProviderSchema_passwordSensitive(t *testing.T) {
	var resp provider.SchemaResponse
	New("test")().Schema(context.Background(), provider.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	attr, ok := resp.Schema.Attributes["password"]
	if !ok {
		t.Fatal("the provider schema has no password attribute")
	}
	if !attr.IsSensitive() {
		t.Error("the provider's password attribute is not Sensitive")
	}
	for _, name := range []string{"username", "endpoint"} {
		if a, ok := resp.Schema.Attributes[name]; ok && a.IsSensitive() {
			t.Errorf("%s is Sensitive; it should stay readable in plans and errors", name)
		}
	}
}

func TestProviderConfig_Invalid(t *testing.T) {
	clearBrokerEnv(t)
	tests := []configError{
		{
			// deferred suffix ending in a digit
			config: `deferred_suffix = ".deferred.1"`,
			want:   []string{"Invalid Queue Name Suffixes", "deferred_suffix", `".deferred.1" must not end in a digit`},
		},
		{
			// equal suffixes
			config: `dead_suffix = ".x."` + "\n" + `deferred_suffix = ".x."`,
			want:   []string{"Invalid Queue Name Suffixes", `dead_suffix and deferred_suffix must differ; both are ".x."`},
		},
		{
			// empty dead suffix
			config: `dead_suffix = ""`,
			want:   []string{"Invalid Queue Name Suffixes", `dead_suffix must not be empty (the default is ".dead")`},
		},
		{
			// dead suffix that looks like a hold queue
			config: `dead_suffix = ".deferred.5"`,
			want:   []string{"Invalid Queue Name Suffixes", `dead_suffix ".deferred.5" would make dead-letter queue names look like hold queues`},
		},
		{
			// zero retry granularity
			config: `retry_granularity = "0s"`,
			want:   []string{"Invalid Granularity", "retry_granularity must be a positive whole number of milliseconds, from 1ms to 2147483647ms"},
		},
		{
			// sub-millisecond deferred granularity
			config: `deferred_granularity = "1500us"`,
			want:   []string{"Invalid Granularity", "deferred_granularity must be a whole number of milliseconds, from 1ms to 2147483647ms"},
		},
		{
			// granularity past the longest hold
			config: `deferred_granularity = "2147483648ms"`,
			want:   []string{"Invalid Granularity", "deferred_granularity must be at most 2147483647ms"},
		},
		{
			// malformed granularity
			config: `retry_granularity = "a second"`,
			want:   []string{"retry_granularity", "from 1ms to 2147483647ms", `got "a second"`},
		},
		{
			// endpoint with another scheme
			config: `endpoint = "amqp://127.0.0.1:5672"`,
			want:   []string{"Invalid Endpoint", "endpoint", `"amqp://127.0.0.1:5672" has scheme "amqp"`},
		},
		{
			// endpoint without a host
			config: `endpoint = "http://"`,
			want:   []string{"Invalid Endpoint", "has no host"},
		},
		{
			// endpoint with a query
			config: `endpoint = "http://127.0.0.1:15672/?vhost=x"`,
			want:   []string{"Invalid Endpoint", "without a query or fragment"},
		},
		{
			// request timeout out of range
			config: `request_timeout = "2h"`,
			want:   []string{"request_timeout must be from 1ms to 1h0m0s; got 2h"},
		},
		{
			// a policy_check that is none of the three
			config: `policy_check = "warning"`,
			want:   []string{"policy_check", `value must be one of: ["warn" "error" "off"], got: "warning"`},
		},
		{
			// retry budget out of range
			config: `retry_budget = "61m"`,
			want:   []string{"retry_budget must be from 0s to 1h0m0s; got 61m"},
		},
		{
			// negative retry budget
			config: `retry_budget = "-1s"`,
			want:   []string{"retry_budget must be from 0s to 1h0m0s; got -1s"},
		},
		{
			// malformed retry budget
			config: `retry_budget = "a minute"`,
			want:   []string{"retry_budget", "from 0s to 1h", `got "a minute"`},
		},
		{
			// client certificate without its key: the error names the missing one
			config: `clientcert_file = "/tmp/client.pem"`,
			want:   []string{"Invalid Attribute Combination", `Attribute "clientkey_file" must be specified when "clientcert_file" is specified`},
		},
		{
			// a key without its client certificate
			config: `clientkey_file = "/tmp/client.key"`,
			want:   []string{"Invalid Attribute Combination", `Attribute "clientcert_file" must be specified when "clientkey_file" is specified`},
		},
		{
			// basic auth and a bearer token: username and password each conflict with the others
			config: `username = "u"` + "\n" + `password = "p"` + "\n" + `bearer_token = "t"`,
			want: []string{"Invalid Attribute Combination", "cannot be configured together: [username,bearer_token]",
				"Invalid Attribute Combination", "cannot be configured together: [password,bearer_token]"},
		},
		{
			// a bearer token and oauth2
			config: `bearer_token = "t"` + "\n" + `oauth2 {` + "\n" + `token_url = "http://127.0.0.1:1/token"` + "\n" + `}`,
			want:   []string{"Invalid Attribute Combination", "cannot be configured together: [bearer_token,oauth2]"},
		},
		{
			// a password and oauth2
			config: `password = "p"` + "\n" + `oauth2 {}`,
			want:   []string{"Invalid Attribute Combination", "cannot be configured together: [password,oauth2]"},
		},
		{
			// oauth2 without client credentials
			config: `oauth2 {` + "\n" + `token_url = "http://127.0.0.1:1/token"` + "\n" + `}`,
			want:   []string{"Missing OAuth 2.0 Setting", "needs client_id", "RABBITMQ_OAUTH2_CLIENT_ID", "needs client_secret"},
		},
	}
	testErrors(t, func(provider string) string {
		return "provider \"queuey\" {\n" + provider + "\n}\n" + pureHoldQueue
	}, tests)
}

// Each mix of ways to authenticate gets one error per pair of attributes of
// two different ways (providervalidator.Conflicting), never the same
// conflict twice; username with password, and the environment, are no mix.
func TestProviderConfigValidators_OneErrorPerConflict(t *testing.T) {
	ctx := context.Background()
	p := &queueyProvider{}
	var s provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &s)
	typ, ok := s.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		t.Fatalf("the provider schema's type is %T, want an object", s.Schema.Type().TerraformType(ctx))
	}
	config := func(set ...string) tfsdk.Config {
		attrs := map[string]tftypes.Value{}
		for name, at := range typ.AttributeTypes {
			attrs[name] = tftypes.NewValue(at, nil)
		}
		for _, name := range set {
			if name == "oauth2" {
				o, ok := typ.AttributeTypes[name].(tftypes.Object)
				if !ok {
					t.Fatalf("oauth2 is %T, want an object", typ.AttributeTypes[name])
				}
				inner := map[string]tftypes.Value{}
				for n, at := range o.AttributeTypes {
					inner[n] = tftypes.NewValue(at, nil)
				}
				attrs[name] = tftypes.NewValue(o, inner)
				continue
			}
			attrs[name] = tftypes.NewValue(tftypes.String, "x")
		}
		return tfsdk.Config{Schema: s.Schema, Raw: tftypes.NewValue(typ, attrs)}
	}
	for _, tt := range []struct {
		set  []string
		want []string // the conflicts reported, in order
	}{
		{[]string{"username", "password"}, nil},
		{[]string{"bearer_token"}, nil},
		{[]string{"oauth2"}, nil},
		{[]string{"username", "bearer_token"}, []string{"[username,bearer_token]"}},
		{[]string{"bearer_token", "oauth2"}, []string{"[bearer_token,oauth2]"}},
		{[]string{"password", "oauth2"}, []string{"[password,oauth2]"}},
		{[]string{"username", "password", "bearer_token"}, []string{"[username,bearer_token]", "[password,bearer_token]"}},
	} {
		var got []string
		for _, v := range p.ConfigValidators(ctx) {
			var resp provider.ValidateConfigResponse
			v.ValidateProvider(ctx, provider.ValidateConfigRequest{Config: config(tt.set...)}, &resp)
			for _, d := range resp.Diagnostics.Errors() {
				got = append(got, d.Detail()[strings.Index(d.Detail(), "["):])
			}
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%v: conflicts %q, want %q", tt.set, got, tt.want)
		}
	}
}

// The configuration table of templates/index.md.tmpl (docs/index.md) has a
// row for every provider setting, and each row's environment variables and
// default are the ones the setting's schema description gives, so that the
// table cannot drift from the schema.
func TestDocsConfigTable(t *testing.T) {
	tmpl := orFatal(os.ReadFile("../../templates/index.md.tmpl"))(t)
	var resp provider.SchemaResponse
	(&queueyProvider{}).Schema(context.Background(), provider.SchemaRequest{}, &resp)
	descs := map[string]string{}
	for name, a := range resp.Schema.Attributes {
		descs[name] = a.GetMarkdownDescription()
	}
	oauth2, ok := resp.Schema.Blocks["oauth2"].(schema.SingleNestedBlock)
	if !ok {
		t.Fatal("the provider schema has no oauth2 block")
	}
	for name, a := range oauth2.Attributes {
		descs[name] = a.GetMarkdownDescription()
	}
	section := string(tmpl)
	section = section[strings.Index(section, "## Configuration"):]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	code := regexp.MustCompile("`([^`]+)`")
	cell := func(cells []string, i int) []string {
		var out []string
		for _, m := range code.FindAllStringSubmatch(cells[i], -1) {
			out = append(out, m[1])
		}
		return out
	}
	// nth is the value of a column for the i-th setting of a row: the
	// i-th when the column lists several, the only one when it lists one.
	nth := func(vals []string, i int) string {
		switch {
		case len(vals) == 1:
			return vals[0]
		case i < len(vals):
			return vals[i]
		}
		return ""
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) != 5 {
			continue
		}
		envs, defaults := cell(cells, 2), cell(cells, 3)
		names := cell(cells, 1)
		if names[0] == "oauth2" {
			names = names[1:] // "`oauth2` block: `token_url`, ..."
		}
		for i, name := range names {
			desc, ok := descs[name]
			if !ok {
				t.Errorf("the table names %q, which is no provider setting", name)
				continue
			}
			seen[name] = true
			if env := nth(envs, i); env != "" && !strings.Contains(desc, "`"+env+"`") {
				t.Errorf("%s: the table gives variable %s, its description does not", name, env)
			}
			if def := nth(defaults, i); def != "" && !strings.Contains(desc, "`"+def+"`") {
				t.Errorf("%s: the table gives default %s, its description does not", name, def)
			}
		}
	}
	for name := range descs {
		if !seen[name] {
			t.Errorf("provider setting %s has no row in the configuration table of templates/index.md.tmpl", name)
		}
	}
}
