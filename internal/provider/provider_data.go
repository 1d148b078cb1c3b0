package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// providerData is what Configure hands to resources and data sources.
type providerData struct {
	suffixes            topology.Suffixes
	retryGranularity    time.Duration
	deferredGranularity time.Duration
	// unknownPure names the pure settings whose values are unknown at plan time.
	unknownPure     []string
	suffixesUnknown bool

	vhost        string
	vhostUnknown bool

	// policyCheck is what a plan does when a policy breaks the topology.
	policyCheck policyCheckMode

	brokerConfig  broker.Config
	brokerUnknown bool
	endpointSet   bool

	clientOnce sync.Once
	client     *broker.Client
	clientErr  error

	// amqpEndpoint is amqp_endpoint (or RABBITMQ_AMQP_ENDPOINT); "" derives it from endpoint.
	amqpEndpoint string
	moverOnce    sync.Once
	mover        *mover.Mover
	moverErr     error

	// credentialsExplained is set once a diagnostic said what to do about refused credentials.
	credentialsExplained atomic.Bool
}

// setting is the attribute, else the variable; an unknown value marks the broker settings unknown.
func (d *providerData) setting(v types.String, env string, dst *string) {
	switch {
	case v.IsUnknown():
		d.brokerUnknown = true
	case !v.IsNull():
		*dst = v.ValueString()
	default:
		*dst = os.Getenv(env)
	}
}

// explain is a failed call's detail: the error and what to do next (brokerDetail). Refused
// credentials are explained once, then pointed to.
func (d *providerData) explain(err error) string {
	if text, ok := amqpDetail(err); ok {
		return text
	}
	var e *broker.Error
	if d == nil || !errors.As(err, &e) || !e.CredentialsRefused || !d.credentialsExplained.Swap(true) {
		return brokerDetail(err)
	}
	return brokerShort(e) + ". The same credentials were refused for another resource of this run: see that error, which says what to fix"
}

// pureReady reports an error naming every pure setting still unknown.
func (d *providerData) pureReady() diag.Diagnostics {
	var diags diag.Diagnostics
	if d == nil {
		diags.AddError("Provider Not Configured", "The queuey provider has not been configured yet; this is a bug in the provider or in Terraform.")
		return diags
	}
	if len(d.unknownPure) > 0 {
		diags.AddError("Provider Setting Unknown At Plan Time",
			fmt.Sprintf("The provider setting(s) %s come from values not known until apply, but queue names depend on them. "+
				"Give them known values (literals or variables), or use the optional options argument of the provider functions.",
				strings.Join(sorted(d.unknownPure), ", ")))
	}
	return diags
}

// brokerReady reports whether the management API settings are known.
func (d *providerData) brokerReady() bool {
	return d != nil && !d.brokerUnknown
}

// warnTimeout bounds the broker look-up behind a plan-time warning, of the resource or of an action.
const warnTimeout = 10 * time.Second

// brokerClient returns the management API client, built once on first use.
func (d *providerData) brokerClient() (*broker.Client, diag.Diagnostics) {
	var diags diag.Diagnostics
	if d == nil {
		diags.AddError("Provider Not Configured", "The queuey provider has not been configured yet; this is a bug in the provider or in Terraform.")
		return nil, diags
	}
	if d.brokerUnknown {
		diags.AddError("Broker Settings Unknown",
			"The provider's management API settings (endpoint, credentials, headers, TLS, request_timeout or retry_budget) are not known yet, "+
				"so the broker cannot be reached. They must be known when this operation runs.")
		return nil, diags
	}
	if !d.endpointSet {
		diags.AddError("Missing Management API Endpoint",
			"This needs the RabbitMQ management API, but no endpoint is configured. Set `endpoint` in the "+
				"provider \"queuey\" block, or the "+EnvEndpoint+" environment variable, e.g. http://127.0.0.1:15672 "+
				"(with username/password or "+EnvUsername+"/"+EnvPassword+", or bearer_token, or an oauth2 block).")
		return nil, diags
	}
	d.clientOnce.Do(func() {
		d.client, d.clientErr = broker.New(d.brokerConfig)
	})
	var missing *broker.MissingCredentialError
	switch {
	case errors.As(d.clientErr, &missing):
		env := map[string]string{"username": EnvUsername, "password": EnvPassword}[missing.Setting]
		// Not an attribute error: the path would be read in the resource's schema.
		diags.AddError("Missing Management API "+titleWord(missing.Setting),
			fmt.Sprintf("The management API needs a %s for basic auth, and none is set: set `%s` in the provider \"queuey\" "+
				"block or the %s environment variable (or authenticate with bearer_token or an oauth2 block instead).",
				missing.Setting, missing.Setting, env))
		return nil, diags
	case d.clientErr != nil:
		diags.AddError("Invalid Management API Settings", errorText(d.clientErr))
		return nil, diags
	}
	return d.client, diags
}

// messageMover returns the AMQP mover beside the management API client, built once on first use
// from the client's credentials, TLS settings and user.
func (d *providerData) messageMover() (*mover.Mover, diag.Diagnostics) {
	client, diags := d.brokerClient()
	if diags.HasError() {
		return nil, diags
	}
	d.moverOnce.Do(func() {
		u, derived, err := mover.EndpointFor(d.amqpEndpoint, client.Endpoint())
		if err != nil {
			d.moverErr = err
			return
		}
		d.mover = mover.New(mover.Config{URL: u, Derived: derived, TLS: client.TLSConfig(), Credentials: client.AMQPCredentials,
			TokenAuth: client.UsesToken(), Whoami: client.Whoami, Wrote: client.MarkWritten})
	})
	if d.moverErr != nil {
		diags.AddError("Invalid Management API Settings", amqpEndpointText(d.moverErr))
		return nil, diags
	}
	return d.mover, diags
}

// configuredDataSource, embedded by the data sources, takes the provider's data in Configure.
type configuredDataSource struct{ data *providerData }

func (d *configuredDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data, resp.Diagnostics = configuredData(req.ProviderData, resp.Diagnostics)
}

// dataSourceVhost returns the data source's vhost: its own, else the provider's; an error while the
// provider's is unknown.
func dataSourceVhost(d *providerData, v types.String, diags *diag.Diagnostics) types.String {
	if !v.IsNull() {
		return v
	}
	if d.vhostUnknown {
		diags.AddAttributeError(path.Root("vhost"), "Vhost Unknown",
			"The provider's vhost is not known until apply, so this data source cannot tell where to look. Set `vhost` here, or give the provider a known vhost.")
		return v
	}
	return types.StringValue(d.vhost)
}

// configuredData takes the providerData Configure handed over; nil before configuration.
func configuredData(v any, diags diag.Diagnostics) (*providerData, diag.Diagnostics) {
	if v == nil {
		return nil, diags
	}
	data, ok := v.(*providerData)
	if !ok {
		diags.AddError("Unexpected Provider Data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", v))
	}
	return data, diags
}

func titleWord(word string) string {
	if word == "" {
		return word
	}
	return strings.ToUpper(word[:1]) + word[1:]
}
