package provider

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// Configure resolves the settings (attributes, then environment, then defaults) into providerData,
// never contacting the broker. Unknown values are remembered: the broker client is built only once
// they are known.
func (p *queueyProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	// The version the binary was built as, in every run's logs (TF_LOG=INFO).
	tflog.Info(ctx, "configuring the queuey provider", map[string]any{"version": p.version})
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data := &providerData{
		suffixes:            topology.DefaultSuffixes(),
		retryGranularity:    topology.DefaultGranularity,
		deferredGranularity: topology.DefaultGranularity,
		vhost:               defaultVhost,
	}
	diags := &resp.Diagnostics
	resolveSuffixes(m, data, diags)
	resolveGranularities(m, data, diags)
	resolveVhost(m, data)
	data.policyCheck = resolvePolicyCheck(m.PolicyCheck)

	cfg := broker.Config{RequestTimeout: broker.DefaultRequestTimeout, ContactNotes: broker.DefaultContactNotes()}
	resolveConnection(m, &cfg, data, diags)
	resolveTimeouts(m, &cfg, data, diags)
	resolveAuth(ctx, m, &cfg, data, diags)
	if diags.HasError() {
		return
	}
	data.brokerConfig = cfg
	data.endpointSet = cfg.Endpoint != ""
	resp.DataSourceData = data
	resp.ListResourceData = data
	resp.ResourceData = data
	resp.ActionData = data
}

// resolveSuffixes takes the two suffixes and checks them together once both are known.
func resolveSuffixes(m providerModel, data *providerData, diags *diag.Diagnostics) {
	for name, v := range map[string]types.String{"dead_suffix": m.DeadSuffix, "deferred_suffix": m.DeferredSuffix} {
		switch {
		case v.IsUnknown():
			data.unknownPure = append(data.unknownPure, name)
			data.suffixesUnknown = true
		case !v.IsNull() && name == "dead_suffix":
			data.suffixes.Dead = v.ValueString()
		case !v.IsNull():
			data.suffixes.Deferred = v.ValueString()
		}
	}
	if data.suffixesUnknown {
		return
	}
	if err := data.suffixes.Validate(); err != nil {
		addSuffixError(m, err, diags)
	}
}

func resolveGranularities(m providerModel, data *providerData, diags *diag.Diagnostics) {
	for name, v := range map[string]types.String{"retry_granularity": m.RetryGranularity, "deferred_granularity": m.DeferredGranularity} {
		if v.IsUnknown() {
			data.unknownPure = append(data.unknownPure, name)
			continue
		}
		if v.IsNull() {
			continue
		}
		d, err := parseGranularity(name, v.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root(name), "Invalid Granularity", err.Error())
			continue
		}
		if name == "retry_granularity" {
			data.retryGranularity = d
		} else {
			data.deferredGranularity = d
		}
	}
}

// resolveVhost takes the default vhost: the attribute, else RABBITMQ_VHOST, else "/".
func resolveVhost(m providerModel, data *providerData) {
	switch {
	case m.Vhost.IsUnknown():
		data.vhostUnknown = true
	case !m.Vhost.IsNull():
		data.vhost = m.Vhost.ValueString()
	case os.Getenv(EnvVhost) != "":
		data.vhost = os.Getenv(EnvVhost)
	}
}

// resolveConnection takes the endpoint and TLS settings, checking an endpoint from the environment.
func resolveConnection(m providerModel, cfg *broker.Config, data *providerData, diags *diag.Diagnostics) {
	str := data.setting
	str(m.Endpoint, EnvEndpoint, &cfg.Endpoint)
	str(m.AMQPEndpoint, EnvAMQP, &data.amqpEndpoint)
	str(m.CACertFile, EnvCACert, &cfg.CACertFile)
	str(m.ClientCertFile, EnvClientCert, &cfg.ClientCertFile)
	str(m.ClientKeyFile, EnvClientKey, &cfg.ClientKeyFile)
	switch {
	case m.Insecure.IsUnknown():
		data.brokerUnknown = true
	case !m.Insecure.IsNull():
		cfg.Insecure = m.Insecure.ValueBool()
	case os.Getenv(EnvInsecure) != "":
		b, err := strconv.ParseBool(os.Getenv(EnvInsecure))
		if err != nil {
			diags.AddAttributeError(path.Root("insecure"), "Invalid "+EnvInsecure,
				fmt.Sprintf("%s must be true or false (or 1 or 0); got %q.", EnvInsecure, os.Getenv(EnvInsecure)))
		}
		cfg.Insecure = b
	}
	if cfg.Endpoint != "" && m.Endpoint.IsNull() {
		if err := checkEndpoint(cfg.Endpoint); err != nil {
			diags.AddAttributeError(path.Root("endpoint"), "Invalid "+EnvEndpoint, err.Error())
		}
	}
	checkAMQPEndpointEnv(m, data.amqpEndpoint, diags)
}

// resolveTimeouts takes request_timeout and retry_budget ("0s": one attempt).
func resolveTimeouts(m providerModel, cfg *broker.Config, data *providerData, diags *diag.Diagnostics) {
	switch {
	case m.RequestTimeout.IsUnknown():
		data.brokerUnknown = true
	case !m.RequestTimeout.IsNull():
		d, err := parseDuration("request_timeout", m.RequestTimeout.ValueString(), "from 1ms to 1h")
		if err != nil {
			diags.AddAttributeError(path.Root("request_timeout"), "Invalid Duration", err.Error())
		}
		cfg.RequestTimeout = d
	}
	switch {
	case m.RetryBudget.IsUnknown():
		data.brokerUnknown = true
	case !m.RetryBudget.IsNull():
		d, err := parseDuration("retry_budget", m.RetryBudget.ValueString(), "from 0s to 1h")
		if err != nil {
			diags.AddAttributeError(path.Root("retry_budget"), "Invalid Duration", err.Error())
		}
		cfg.RetryBudget = d
		if d == 0 {
			cfg.RetryBudget = -1 // one attempt only
		}
	}
}

// checkAMQPEndpointEnv checks an amqp_endpoint from the environment, which no validator saw.
func checkAMQPEndpointEnv(m providerModel, v string, diags *diag.Diagnostics) {
	if v == "" || !m.AMQPEndpoint.IsNull() {
		return
	}
	if _, err := mover.ValidateEndpoint(v); err != nil {
		diags.AddAttributeError(path.Root("amqp_endpoint"), "Invalid "+EnvAMQP, amqpEndpointText(err))
	}
}
