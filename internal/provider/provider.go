// Package provider is the Terraform glue of the queuey provider over packages topology and broker.
package provider

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/providervalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var (
	_ provider.Provider                     = (*queueyProvider)(nil)
	_ provider.ProviderWithFunctions        = (*queueyProvider)(nil)
	_ provider.ProviderWithListResources    = (*queueyProvider)(nil)
	_ provider.ProviderWithValidateConfig   = (*queueyProvider)(nil)
	_ provider.ProviderWithConfigValidators = (*queueyProvider)(nil)
	_ provider.ProviderWithActions          = (*queueyProvider)(nil)
)

const defaultVhost = "/"

// New returns a function that builds the provider for the given version.
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &queueyProvider{version: version}
	}
}

type queueyProvider struct {
	version string
}

func (p *queueyProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "queuey"
	resp.Version = p.version
}

func (p *queueyProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Declares the RabbitMQ queue topology of the queuey job-queue backend: for each logical queue " +
			"`q`, the main queue `q`, its dead-letter queue `q.dead` and the hold queues `q.deferred.{ttl_ms}`, " +
			"with exactly the names and arguments the backend computes. Every attribute is optional; " +
			"configuring the provider never contacts the broker.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				MarkdownDescription: "Base URL of the RabbitMQ management HTTP API, `http` or `https`, e.g. `http://127.0.0.1:15672`; " +
					"a trailing slash is tolerated. Defaults to the `" + EnvEndpoint + "` environment variable. " +
					"Needed only by `queuey_queue` and `queuey_hold_queues`.",
				Optional:   true,
				Validators: []validator.String{endpointValidator{}},
			},
			"amqp_endpoint": amqpEndpointAttribute(),
			"username": schema.StringAttribute{
				MarkdownDescription: "Management API user, for basic auth. Defaults to the `" + EnvUsername + "` environment variable. " +
					"Goes with `password`; not with `bearer_token` or `oauth2`.",
				Optional: true,
			},
			"password": schema.StringAttribute{
				MarkdownDescription: "Management API password. Defaults to the `" + EnvPassword + "` environment variable. " +
					"Never written to an error or a log.",
				Optional:  true,
				Sensitive: true,
			},
			"bearer_token": schema.StringAttribute{
				MarkdownDescription: "A token sent as `Authorization: Bearer <token>` instead of basic auth, for a broker with the " +
					"`rabbitmq_auth_backend_oauth2` plugin. The provider does not renew it: when it expires, requests fail with an " +
					"error saying so (the `oauth2` block fetches and renews tokens itself). Defaults to the `" + EnvBearerToken +
					"` environment variable. Never written to an error or a log. Not with `username`/`password` or `oauth2`.",
				Optional:  true,
				Sensitive: true,
			},
			"headers": schema.MapAttribute{
				MarkdownDescription: "Extra HTTP headers added to every management API request, e.g. the service token of an " +
					"access proxy in front of the broker. The values are sensitive: never shown in plans or written to an error " +
					"or a log. The `Authorization` header of the configured way to authenticate takes precedence over one given here.",
				ElementType: types.StringType,
				Optional:    true,
				Sensitive:   true,
			},
			"vhost": schema.StringAttribute{
				MarkdownDescription: "Virtual host used by resources and live data sources that do not set their own. " +
					"Defaults to the `" + EnvVhost + "` environment variable, then to `/`.",
				Optional:   true,
				Validators: []validator.String{vhostValidator{}},
			},
			"insecure": schema.BoolAttribute{
				MarkdownDescription: "Skip verification of the management API's TLS certificate. Defaults to the `" +
					EnvInsecure + "` environment variable, then to `false`.",
				Optional: true,
			},
			"cacert_file": schema.StringAttribute{
				MarkdownDescription: "PEM file of the certificate authority that signed the management API's certificate. " +
					"Defaults to the `" + EnvCACert + "` environment variable.",
				Optional: true,
			},
			"clientcert_file": schema.StringAttribute{
				MarkdownDescription: "PEM file of a client certificate to present to the management API; needs `clientkey_file`. " +
					"Defaults to the `" + EnvClientCert + "` environment variable.",
				Optional:   true,
				Validators: []validator.String{stringvalidator.AlsoRequires(path.MatchRoot("clientkey_file"))},
			},
			"clientkey_file": schema.StringAttribute{
				MarkdownDescription: "PEM file of the client certificate's private key; needs `clientcert_file`. " +
					"Defaults to the `" + EnvClientKey + "` environment variable.",
				Optional:   true,
				Validators: []validator.String{stringvalidator.AlsoRequires(path.MatchRoot("clientcert_file"))},
			},
			"request_timeout": schema.StringAttribute{
				MarkdownDescription: "Time limit of each attempt of a management API request, as a Go duration such as `10s`; " +
					"from `1ms` to `1h`. Defaults to `30s`.",
				Optional: true,
				Validators: []validator.String{
					durationSyntaxValidator{rangeText: "from 1ms to 1h"},
					durationBetween(time.Millisecond, time.Hour),
				},
			},
			"retry_budget": schema.StringAttribute{
				MarkdownDescription: "How long a management API request keeps being tried again after transient failures " +
					"(refused or reset connections, answers 500, 502, 503 and 504, the broker's metadata store timing out, " +
					"a queue whose node is restarting), as a Go duration from `0s` (one attempt only) to `1h`. " +
					"Pauses start at 250ms and double up to 5s. A request gives up at the latest `retry_budget` + " +
					"`request_timeout` after it began: 90s with the defaults. What can never succeed fails at once: refused " +
					"credentials and permissions, an endpoint that is not the management API (the AMQP port, `http://` to a " +
					"TLS port or `https://` to a plain one, a path other than the API's), and a 404 (not found), confirmed " +
					"once after 250ms, or retried for 10s if this provider has just seen the broker restarting. Defaults to `60s`, enough to ride through a broker restart.",
				Optional: true,
				Validators: []validator.String{
					durationSyntaxValidator{rangeText: "from 0s to 1h"},
					durationBetween(0, broker.MaxRetryBudget),
				},
			},
			"retry_granularity": schema.StringAttribute{
				MarkdownDescription: "Step to which retry backoffs and delayed enqueues are rounded up when naming hold queues, " +
					"as a Go duration: a whole number of milliseconds from `1ms` to `2147483647ms`. Defaults to `1s`.",
				Optional: true,
				Validators: []validator.String{
					durationSyntaxValidator{rangeText: granularityRange()},
					granularityValidator{},
				},
			},
			"deferred_granularity": schema.StringAttribute{
				MarkdownDescription: "Step to which deferrals are rounded up when naming hold queues, " +
					"as a Go duration: a whole number of milliseconds from `1ms` to `2147483647ms`. Defaults to `1s`.",
				Optional: true,
				Validators: []validator.String{
					durationSyntaxValidator{rangeText: granularityRange()},
					granularityValidator{},
				},
			},
			"policy_check": policyCheckAttribute(),
			"dead_suffix": schema.StringAttribute{
				MarkdownDescription: "Suffix appended to a queue's name to name its dead-letter queue. Must be non-empty, " +
					"differ from `deferred_suffix` and must not make a dead-letter queue's name look like a hold queue's. " +
					"Defaults to `.dead`.",
				Optional: true,
			},
			"deferred_suffix": schema.StringAttribute{
				MarkdownDescription: "Infix between a queue's name and a hold queue's TTL. Must be non-empty, differ from " +
					"`dead_suffix` and not end in a digit. Defaults to `.deferred.`.",
				Optional: true,
			},
		},
		Blocks: map[string]schema.Block{
			"oauth2": schema.SingleNestedBlock{
				MarkdownDescription: "OAuth 2.0 client credentials grant: the provider asks `token_url` for a token on its first " +
					"management API request (configuring the provider contacts nothing), sends it as `Authorization: Bearer`, " +
					"shares it between all requests of the provider process and replaces it before it expires. For a broker " +
					"with the `rabbitmq_auth_backend_oauth2` plugin. Each attribute defaults to its environment variable. " +
					"Not with `username`/`password` or `bearer_token`.",
				Attributes: map[string]schema.Attribute{
					"token_url": schema.StringAttribute{
						MarkdownDescription: "Token endpoint of the identity provider, e.g. " +
							"`https://keycloak.example.com/realms/ops/protocol/openid-connect/token`. Defaults to the `" +
							EnvOAuth2TokenURL + "` environment variable. Required in the block or the environment.",
						Optional: true,
					},
					"client_id": schema.StringAttribute{
						MarkdownDescription: "Client ID of Terraform's client at the identity provider. Defaults to the `" +
							EnvOAuth2ClientID + "` environment variable. Required in the block or the environment.",
						Optional: true,
					},
					"client_secret": schema.StringAttribute{
						MarkdownDescription: "Client secret. Defaults to the `" + EnvOAuth2ClientSecret + "` environment variable. " +
							"Required in the block or the environment. Never written to an error or a log.",
						Optional:  true,
						Sensitive: true,
					},
					"scopes": schema.ListAttribute{
						MarkdownDescription: "Scopes to ask for, e.g. `[\"rabbitmq.tag:management\", \"rabbitmq.configure:*/*\", " +
							"\"rabbitmq.write:*/*\", \"rabbitmq.read:*/*\"]` (Microsoft Entra ID: `[\"api://<app-id>/.default\"]`). " +
							"Defaults to none: the identity provider's defaults for the client.",
						ElementType: types.StringType,
						Optional:    true,
					},
					"endpoint_params": schema.MapAttribute{
						MarkdownDescription: "Extra form parameters of the token request, e.g. `{ audience = \"rabbitmq\" }` for Auth0.",
						ElementType:         types.StringType,
						Optional:            true,
					},
				},
			},
		},
	}
}

// ConfigValidators holds one way to authenticate: each pair of attributes of two different ways is
// a providervalidator.Conflicting, so an error names exactly the two set together. The environment
// is checked at Configure (authMethod).
func (p *queueyProvider) ConfigValidators(_ context.Context) []provider.ConfigValidator {
	ways := [][]string{{"username", "password"}, {"bearer_token"}, {"oauth2"}}
	var out []provider.ConfigValidator
	for i, way := range ways {
		for _, other := range ways[i+1:] {
			for _, a := range way {
				for _, b := range other {
					out = append(out, providervalidator.Conflicting(path.MatchRoot(a), path.MatchRoot(b)))
				}
			}
		}
	}
	return out
}

// ValidateConfig checks the rule no library states: the two suffixes (topology.Suffixes.Validate).
func (p *queueyProvider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if m.DeadSuffix.IsUnknown() || m.DeferredSuffix.IsUnknown() {
		return
	}
	s := topology.DefaultSuffixes()
	if !m.DeadSuffix.IsNull() {
		s.Dead = m.DeadSuffix.ValueString()
	}
	if !m.DeferredSuffix.IsNull() {
		s.Deferred = m.DeferredSuffix.ValueString()
	}
	if err := s.Validate(); err != nil {
		addSuffixError(m, err, &resp.Diagnostics)
	}
}

// addSuffixError reports the suffixes' error on the attribute it names.
func addSuffixError(m providerModel, err error, diags *diag.Diagnostics) {
	at := "dead_suffix"
	var se *topology.SettingError
	if errors.As(err, &se) {
		at = se.Setting
	}
	if m.DeadSuffix.IsNull() {
		at = "deferred_suffix"
	}
	diags.AddAttributeError(path.Root(at), "Invalid Queue Name Suffixes", err.Error())
}

func (p *queueyProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewQueueResource,
	}
}

func (p *queueyProvider) ListResources(_ context.Context) []func() list.ListResource {
	return []func() list.ListResource{
		NewQueueListResource,
	}
}

func (p *queueyProvider) Actions(_ context.Context) []func() action.Action {
	return []func() action.Action{
		NewRedriveDeadLettersAction,
		NewPurgeDeadLettersAction,
	}
}

func (p *queueyProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewHoldQueueDataSource,
		NewTopologyDataSource,
		NewHoldQueuesDataSource,
		NewPolicyEffectsDataSource,
	}
}

func (p *queueyProvider) Functions(_ context.Context) []func() function.Function {
	return []func() function.Function{
		NewHoldQueueNameFunction,
		NewDeadQueueNameFunction,
		NewDeferredTTLMsFunction,
		NewHoldQueueArgumentsFunction,
		NewPolicyPatternExcludingFunction,
	}
}

type providerModel struct {
	Endpoint            types.String `tfsdk:"endpoint"`
	AMQPEndpoint        types.String `tfsdk:"amqp_endpoint"`
	Username            types.String `tfsdk:"username"`
	Password            types.String `tfsdk:"password"`
	Vhost               types.String `tfsdk:"vhost"`
	Insecure            types.Bool   `tfsdk:"insecure"`
	CACertFile          types.String `tfsdk:"cacert_file"`
	ClientCertFile      types.String `tfsdk:"clientcert_file"`
	ClientKeyFile       types.String `tfsdk:"clientkey_file"`
	RequestTimeout      types.String `tfsdk:"request_timeout"`
	RetryBudget         types.String `tfsdk:"retry_budget"`
	RetryGranularity    types.String `tfsdk:"retry_granularity"`
	DeferredGranularity types.String `tfsdk:"deferred_granularity"`
	DeadSuffix          types.String `tfsdk:"dead_suffix"`
	DeferredSuffix      types.String `tfsdk:"deferred_suffix"`
	BearerToken         types.String `tfsdk:"bearer_token"`
	Headers             types.Map    `tfsdk:"headers"`
	OAuth2              types.Object `tfsdk:"oauth2"`
	PolicyCheck         types.String `tfsdk:"policy_check"`
}

type oauth2Model struct {
	TokenURL       types.String `tfsdk:"token_url"`
	ClientID       types.String `tfsdk:"client_id"`
	ClientSecret   types.String `tfsdk:"client_secret"`
	Scopes         types.List   `tfsdk:"scopes"`
	EndpointParams types.Map    `tfsdk:"endpoint_params"`
}

// amqpEndpointAttribute is the provider's amqp_endpoint setting.
func amqpEndpointAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "AMQP 0-9-1 URL of the broker, `amqp` or `amqps`, without credentials or vhost, e.g. " +
			"`amqp://127.0.0.1:5672`; used only by the actions `queuey_redrive_dead_letters` and `queuey_purge_dead_letters`. " +
			"Defaults to the `" + EnvAMQP + "` environment variable, then to `endpoint`'s host: `amqp://HOST:5672` for an " +
			"`http` endpoint, `amqps://HOST:5671` for `https`. The connection uses the same TLS settings and credentials as " +
			"the management API (a `bearer_token` or `oauth2` token is the AMQP password), sent as SASL PLAIN, never in the " +
			"URL. Configuring the provider never connects.",
		Optional:   true,
		Validators: []validator.String{amqpEndpointValidator{}},
	}
}
