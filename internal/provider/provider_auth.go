package provider

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// The ways to authenticate to the management API; exactly one applies.
const (
	authBasic  = "username and password"
	authBearer = "bearer_token"
	authOAuth2 = "the oauth2 block"
)

const authMethodsText = "`username` + `password`, `bearer_token`, or the `oauth2` block"

// authSetting is one way to authenticate the configuration or environment sets, with what sets it.
type authSetting struct {
	method string
	attr   string
}

// configuredAuthMethods lists the ways the configuration sets, in schema order.
func configuredAuthMethods(m providerModel) []authSetting {
	var out []authSetting
	set := func(v attr.Value) bool { return !v.IsNull() && !v.IsUnknown() }
	switch {
	case set(m.Username):
		out = append(out, authSetting{authBasic, "username"})
	case set(m.Password):
		out = append(out, authSetting{authBasic, "password"})
	}
	if set(m.BearerToken) {
		out = append(out, authSetting{authBearer, "bearer_token"})
	}
	if set(m.OAuth2) {
		out = append(out, authSetting{authOAuth2, "oauth2"})
	}
	return out
}

func environmentAuthMethods() []authSetting {
	var out []authSetting
	for _, e := range []authSetting{
		{authBasic, EnvUsername}, {authBasic, EnvPassword},
		{authBearer, EnvBearerToken},
		{authOAuth2, EnvOAuth2TokenURL}, {authOAuth2, EnvOAuth2ClientID}, {authOAuth2, EnvOAuth2ClientSecret},
	} {
		if os.Getenv(e.attr) != "" && (len(out) == 0 || out[len(out)-1].method != e.method) {
			out = append(out, e)
		}
	}
	return out
}

func joinMethods(ms []authSetting) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = "`" + m.attr + "` (" + m.method + ")"
	}
	return strings.Join(parts, " and ")
}

// resolveAuth fills cfg's credentials and headers; each attribute beats its variable.
func resolveAuth(ctx context.Context, m providerModel, cfg *broker.Config, data *providerData, diags *diag.Diagnostics) {
	cfg.Headers = stringMap(ctx, m.Headers, data, diags)
	for _, v := range []attr.Value{m.Username, m.Password, m.BearerToken, m.OAuth2} {
		if v.IsUnknown() {
			data.brokerUnknown = true
			return
		}
	}
	method, ok := authMethod(m, diags)
	if !ok {
		return
	}
	switch method {
	case authBasic:
		data.setting(m.Username, EnvUsername, &cfg.Username)
		data.setting(m.Password, EnvPassword, &cfg.Password)
	case authBearer:
		data.setting(m.BearerToken, EnvBearerToken, &cfg.BearerToken)
	case authOAuth2:
		cfg.OAuth2 = resolveOAuth2(ctx, m, data, diags)
	}
}

// authMethod picks the configuration's way, else the environment's, else basic auth.
func authMethod(m providerModel, diags *diag.Diagnostics) (string, bool) {
	methods := configuredAuthMethods(m)
	if len(methods) == 0 {
		methods = environmentAuthMethods()
		if len(methods) > 1 {
			diags.AddError("Conflicting Authentication Settings",
				fmt.Sprintf("Set exactly one way to authenticate to the management API: %s. The provider block sets none, "+
					"and the environment sets %s: unset all but one (or choose one in the provider block, which takes precedence).",
					authMethodsText, joinMethods(methods)))
			return "", false
		}
	}
	if len(methods) == 0 {
		return authBasic, true
	}
	return methods[0].method, true
}

// resolveOAuth2 takes the oauth2 block, each attribute defaulting to its variable.
func resolveOAuth2(ctx context.Context, m providerModel, data *providerData, diags *diag.Diagnostics) *broker.OAuth2Config {
	o := oauth2Model{TokenURL: types.StringNull(), ClientID: types.StringNull(), ClientSecret: types.StringNull(),
		Scopes: types.ListNull(types.StringType), EndpointParams: types.MapNull(types.StringType)}
	if !m.OAuth2.IsNull() {
		diags.Append(m.OAuth2.As(ctx, &o, basetypes.ObjectAsOptions{})...)
	}
	oc := &broker.OAuth2Config{}
	data.setting(o.TokenURL, EnvOAuth2TokenURL, &oc.TokenURL)
	data.setting(o.ClientID, EnvOAuth2ClientID, &oc.ClientID)
	data.setting(o.ClientSecret, EnvOAuth2ClientSecret, &oc.ClientSecret)
	oc.EndpointParams = stringMap(ctx, o.EndpointParams, data, diags)
	if o.Scopes.IsUnknown() {
		data.brokerUnknown = true
	} else if !o.Scopes.IsNull() {
		diags.Append(o.Scopes.ElementsAs(ctx, &oc.Scopes, false)...)
	}
	if data.brokerUnknown {
		return oc
	}
	for _, f := range []struct{ name, env, v string }{
		{"token_url", EnvOAuth2TokenURL, oc.TokenURL},
		{"client_id", EnvOAuth2ClientID, oc.ClientID},
		{"client_secret", EnvOAuth2ClientSecret, oc.ClientSecret},
	} {
		if f.v == "" {
			diags.AddAttributeError(path.Root("oauth2").AtName(f.name), "Missing OAuth 2.0 Setting",
				fmt.Sprintf("The OAuth 2.0 client credentials grant needs %s: set it in the oauth2 block or in the %s environment variable.", f.name, f.env))
		}
	}
	return oc
}

// stringMap reads a map of strings: nil when null or (with brokerUnknown set) unknown.
func stringMap(ctx context.Context, v types.Map, data *providerData, diags *diag.Diagnostics) map[string]string {
	if v.IsNull() {
		return nil
	}
	if v.IsUnknown() {
		data.brokerUnknown = true
		return nil
	}
	for _, e := range v.Elements() {
		if e.IsUnknown() {
			data.brokerUnknown = true
			return nil
		}
	}
	out := map[string]string{}
	diags.Append(v.ElementsAs(ctx, &out, false)...)
	return out
}
