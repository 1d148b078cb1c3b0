package provider

import (
	"fmt"
	"strings"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// The broker client returns causes and facts; this file words them for the user, naming the
// provider's settings and environment variables. It is the one place that does: the broker knows no
// setting's name.

// managementPort is where the management API usually listens.
const managementPort = "15672"

// errorText is err's text, in the provider's words when err is one of the broker's errors.
func errorText(err error) string {
	switch e := err.(type) {
	case *broker.Error:
		return brokerText(e)
	case *broker.ConfigError:
		return configErrorText(e)
	}
	return err.Error()
}

// brokerDetail is the detail of a failed call: err's text, then the next step of the broker error
// inside it, unless a wrapper of the provider has worded it already (causeWorded).
func brokerDetail(err error) string {
	text := errorText(err)
	if e := unworded(err); e != nil && e != err {
		if step := brokerNextStep(e); step != "" {
			text += ". " + step
		}
	}
	return text
}

// causeWorded is a wrapper of the provider whose text already says what to do about what it wraps.
type causeWorded interface {
	error
	causeWorded()
}

// unworded is the *broker.Error inside err that no causeWorded wrapper has worded, or nil.
func unworded(err error) *broker.Error {
	for ; err != nil; err = unwrapOne(err) {
		switch e := err.(type) {
		case *broker.Error:
			return e
		case causeWorded:
			return nil
		}
	}
	return nil
}

// unwrapOne follows a single-error Unwrap; an error that wraps several ends the walk.
func unwrapOne(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		return u.Unwrap()
	}
	return nil
}

// brokerText is a failed call in full: what failed, then what to do next.
func brokerText(e *broker.Error) string {
	text := brokerShort(e)
	if step := brokerNextStep(e); step != "" {
		text += ". " + step
	}
	return text
}

// brokerShort is what failed, where, and why, without the next step.
func brokerShort(e *broker.Error) string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(" at ")
	b.WriteString(e.Endpoint)
	if e.Status != 0 {
		fmt.Fprintf(&b, " failed: HTTP %d", e.Status)
		if e.Reason != "" {
			b.WriteString(": ")
			b.WriteString(strings.TrimSuffix(e.Reason, "."))
		}
		return b.String()
	}
	b.WriteString(" failed: ")
	b.WriteString(brokerReason(e))
	return b.String()
}

// brokerReason is why a call got no answer: the failures that depend on the settings
// (request_timeout, retry_budget, the oauth2 token endpoint) name them.
func brokerReason(e *broker.Error) string {
	switch v := e.Err.(type) {
	case *broker.TokenError:
		return tokenErrorText(v)
	case *broker.BudgetError, *broker.NoAnswerError:
		return waitText(v)
	}
	return e.Reason
}

// waitText words a request that waited in vain, naming request_timeout and retry_budget.
func waitText(err error) string {
	switch v := err.(type) {
	case *broker.BudgetError:
		return fmt.Sprintf("no usable answer within retry_budget %s (%d attempts, request_timeout %s each): %s",
			v.Budget, v.Attempts, v.Timeout, waitText(v.Last))
	case *broker.NoAnswerError:
		return fmt.Sprintf("no answer within request_timeout %s", v.Timeout)
	}
	return err.Error()
}

// tokenErrorText words a failure to get a token from oauth2.token_url.
func tokenErrorText(t *broker.TokenError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "getting an OAuth 2.0 token from oauth2.token_url %s failed: ", t.TokenURL)
	switch {
	case t.Status != 0:
		fmt.Fprintf(&b, "HTTP %d", t.Status)
		if t.Code != "" {
			fmt.Fprintf(&b, ", error %q", t.Code)
		}
		if t.Description != "" {
			fmt.Fprintf(&b, " (%s)", strings.TrimSuffix(t.Description, "."))
		}
	case t.Err != nil:
		b.WriteString(waitText(t.Err))
	default:
		b.WriteString("no token in the answer")
	}
	return b.String()
}

// brokerNextStep says what to do about a failed call, or "" when the error says it all.
func brokerNextStep(e *broker.Error) string {
	if step, ok := brokerSteps[e.Cause]; ok {
		return step(e)
	}
	return ""
}

// brokerSteps word the next step of each cause.
var brokerSteps = map[broker.Cause]func(e *broker.Error) string{
	broker.CauseCredentials: func(e *broker.Error) string {
		return fmt.Sprintf("Authentication failed for user %q: check username and password (or %s and %s)",
			e.User, EnvUsername, EnvPassword)
	},
	broker.CauseManagementTag: func(e *broker.Error) string {
		return fmt.Sprintf("User %q lacks permission for this: it needs the management (or administrator) tag, "+
			"e.g. `rabbitmqctl set_user_tags %s management`", e.User, e.User)
	},
	broker.CauseVhostAccess: func(e *broker.Error) string {
		return fmt.Sprintf("User %q lacks permission for this: it has no access to the vhost; grant it configure permission "+
			"there on the queues it manages (`rabbitmqctl set_permissions -p VHOST %s QUEUES_PATTERN '^$' '^$'`; write and "+
			"read are not needed)", e.User, e.User)
	},
	broker.CausePermissions: func(e *broker.Error) string {
		return fmt.Sprintf("User %q lacks permission for this: its configure permission in the vhost must match the "+
			"queues it declares and deletes (the resource's queues_pattern); write and read are not needed", e.User)
	},
	broker.CauseVhostNotVisible: func(e *broker.Error) string {
		return fmt.Sprintf("Vhost %q is not among the vhosts user %q can access: either it does not exist, or the user has no "+
			"permissions in it (RabbitMQ 4.3 answers 404 to both). Grant the user configure permission there on the queues it "+
			"manages (`rabbitmqctl set_permissions -p %s %s QUEUES_PATTERN '^$' '^$'`), or create the vhost",
			e.Vhost, e.User, e.Vhost, e.User)
	},
	broker.CauseTokenNoTag:        tokenNoTagStep,
	broker.CauseTokenNoPermission: tokenNoPermissionStep,
	broker.CauseTokenRefused:      tokenRefusedStep,
	broker.CauseTokenEndpoint:     tokenEndpointStep,
	broker.CauseMetadataStore: func(*broker.Error) string {
		return "The cluster's metadata store did not answer in time: most likely a majority of the cluster's nodes is down or " +
			"cannot reach each other, and nothing can be declared or deleted until it is back (check `rabbitmqctl cluster_status`). " +
			"The declaration may still take effect once the majority is back"
	},
	broker.CauseNodeDown: func(*broker.Error) string {
		return "The queue's node is down or restarting: bring it back (check `rabbitmqctl cluster_status`), then try again"
	},
	broker.CauseNoMajority: func(e *broker.Error) string {
		return fmt.Sprintf("%d of the cluster's %d nodes are not running (%s): without a majority the cluster's metadata store "+
			"cannot take declarations or deletions, and this one may still take effect once the majority is back. Bring them "+
			"back (check `rabbitmqctl cluster_status`), then try again", len(e.NodesDown), e.Nodes, strings.Join(e.NodesDown, ", "))
	},
	broker.CauseNoAnswer: func(e *broker.Error) string {
		return fmt.Sprintf("Check that the management API answers at %s (the rabbitmq_management plugin enabled, the port open), "+
			"or raise request_timeout", e.Endpoint)
	},
	broker.CauseCertificate: func(*broker.Error) string {
		return "The TLS handshake failed over a certificate: set cacert_file (or " + EnvCACert + ") to the CA that signed the " +
			"management API's certificate (insecure = true skips that check), and clientcert_file and clientkey_file when the " +
			"server asks for a client certificate"
	},
	broker.CauseFirstContact: firstContactStep,
	broker.CauseAMQPPort:     notHTTPStep,
	broker.CauseNotHTTP:      notHTTPStep,
	broker.CauseWantHTTPS: func(e *broker.Error) string {
		return fmt.Sprintf("This port speaks TLS: set endpoint to %s (https://, not http://)", e.SuggestedURL)
	},
	broker.CauseWantHTTP: func(e *broker.Error) string {
		return fmt.Sprintf("This port speaks plain HTTP, not TLS: set endpoint to %s (http://, not https://), "+
			"or enable TLS on the management listener", e.SuggestedURL)
	},
	broker.CauseAPISuffix: func(e *broker.Error) string {
		return "The endpoint is the management API's base URL, without /api (the provider appends /api/ itself): " +
			"set endpoint to " + e.SuggestedURL
	},
	broker.CauseAPIPath: func(e *broker.Error) string {
		return fmt.Sprintf("The endpoint's path %q is not where the management API is: set endpoint to its base URL, "+
			"e.g. %s (with the path prefix only when management.path_prefix is set)", e.Path, e.SuggestedURL)
	},
	broker.CauseNotAPI: func(*broker.Error) string {
		return "The server at the endpoint is not RabbitMQ's management API (it answered 400 without a reason): " +
			"set endpoint to the management API's base URL, usually on port " + managementPort
	},
}

// tokenGrant says where a token's scopes come from: the identity provider, or the bearer_token.
func tokenGrant(e *broker.Error) string {
	if e.TokenFetched {
		return "granted to oauth2.client_id by the identity provider (or asked for in oauth2.scopes)"
	}
	return "in the bearer_token"
}

func tokenNoTagStep(e *broker.Error) string {
	return "The broker accepted the token but it carries no management tag: the management API needs the scope " +
		"`<resource_server_id>.tag:management` (with RabbitMQ's default settings and resource_server_id rabbitmq: " +
		"`rabbitmq.tag:management`; brokers with auth_oauth2.scope_prefix set use that prefix instead), " + tokenGrant(e)
}

func tokenNoPermissionStep(e *broker.Error) string {
	return "The token lacks a permission on the vhost: it needs the scopes `<resource_server_id>.configure:<vhost>/<queues>`, " +
		"`.write:` and `.read:` for the queues, e.g. `rabbitmq.configure:*/*`, `rabbitmq.write:*/*` and `rabbitmq.read:*/*`, " +
		tokenGrant(e)
}

// tokenRefusedStep explains a token the broker did not accept: an expired bearer_token, another
// bearer_token, or a token fetched through the oauth2 block.
func tokenRefusedStep(e *broker.Error) string {
	switch {
	case !e.TokenExpiry.IsZero():
		return fmt.Sprintf("The bearer_token expired at %s (%s ago): get a new token and set bearer_token (or %s) again, "+
			"or use the oauth2 block so that the provider fetches and renews tokens itself",
			e.TokenExpiry.UTC().Format(time.RFC3339), time.Since(e.TokenExpiry).Round(time.Second), EnvBearerToken)
	case !e.TokenFetched:
		return "The broker did not accept the bearer_token: check that it has not expired, that its audience (aud) includes the " +
			"broker's resource_server_id and that the broker knows the key it is signed with"
	}
	return "The broker did not accept a freshly fetched token: check that its audience (aud) includes the broker's " +
		"resource_server_id (oauth2.endpoint_params audience or resource, depending on the identity provider) and that the " +
		"broker knows the identity provider's signing keys (auth_oauth2.jwks_url or signing keys)"
}

// tokenEndpointStep says what to do about the token endpoint's failure: by its OAuth 2.0 error
// code, else by whether it answered.
func tokenEndpointStep(e *broker.Error) string {
	t, _ := e.Err.(*broker.TokenError)
	if t == nil {
		return ""
	}
	switch t.Code {
	case "invalid_client":
		return "The identity provider did not accept the client: check oauth2.client_id and oauth2.client_secret " +
			"(or " + EnvOAuth2ClientID + " and " + EnvOAuth2ClientSecret + "). Not retried"
	case "unauthorized_client":
		return "The client may not use the client credentials grant: allow it in the identity provider (a confidential client " +
			"with service accounts or client credentials enabled)"
	case "invalid_scope":
		return "The identity provider refused the requested scopes: check oauth2.scopes against the scopes the client may request"
	case "invalid_request", "invalid_target":
		return "The identity provider refused the request: check oauth2.endpoint_params (audience or resource) and oauth2.scopes"
	}
	if t.Status == 0 {
		return "Check that oauth2.token_url (or " + EnvOAuth2TokenURL + ") is the identity provider's token endpoint and that it answers"
	}
	return "Check oauth2.token_url, oauth2.client_id and oauth2.client_secret"
}

// firstContactStep says what to check when nothing answered at the endpoint.
func firstContactStep(e *broker.Error) string {
	check := "check that the broker is running and that its management API listens at " + e.Addr
	if e.Unresolved {
		check = "check the host name in endpoint (or " + EnvEndpoint + ")"
	}
	return "The broker has not answered at this endpoint recently: " + check + " (the management plugin's port is usually " +
		managementPort + "; 5672 is AMQP), and that the scheme is right (http://, or https:// for a TLS listener). " +
		"A broker that is still starting: wait until its management API answers before running Terraform"
}

// notHTTPStep says what the port that answered is, and where the management API usually is.
func notHTTPStep(e *broker.Error) string {
	what := "This port speaks another protocol than HTTP"
	if e.Cause == broker.CauseAMQPPort {
		what = "This is RabbitMQ's AMQP port (it answered with the AMQP protocol header), not the management API"
	}
	return what + ": set endpoint (or " + EnvEndpoint + ") to the management API's URL, which is usually on port " +
		managementPort + ", e.g. http://127.0.0.1:" + managementPort
}

// configSettings are the names of the broker's settings in the provider's schema.
var configSettings = map[broker.Setting]string{
	broker.SettingCACertFile: "cacert_file", broker.SettingClientCertFile: "clientcert_file",
	broker.SettingClientKeyFile: "clientkey_file", broker.SettingHeaders: "headers",
	broker.SettingOAuth2TokenURL: "token_url", broker.SettingOAuth2ClientID: "client_id",
	broker.SettingOAuth2ClientSecret: "client_secret",
}

// configErrorText words settings the broker client refused, by their names in the schema.
func configErrorText(e *broker.ConfigError) string {
	names := make([]string, len(e.Settings))
	for i, s := range e.Settings {
		names[i] = configSettings[s]
	}
	what := strings.Join(names, " and ")
	switch e.Problem {
	case broker.ConfigUnreadable:
		return fmt.Sprintf("reading %s: %v", what, e.Err)
	case broker.ConfigKeyPair:
		return fmt.Sprintf("loading %s: %v", what, e.Err)
	case broker.ConfigNoPEM:
		return fmt.Sprintf("%s %s holds no PEM certificate", what, e.Values[0])
	case broker.ConfigHalfPair:
		return what + " go together: set both or neither"
	case broker.ConfigMissing:
		return fmt.Sprintf("the oauth2 block needs %s (or the RABBITMQ_OAUTH2_* environment variables)", strings.Join(names, ", "))
	case broker.ConfigNotHTTP:
		return fmt.Sprintf("oauth2.%s must be an http or https URL; got %q", what, e.Values[0])
	}
	if len(e.Values) == 1 {
		return fmt.Sprintf("%s: %s is not a valid HTTP header name", what, e.Values[0])
	}
	return fmt.Sprintf("%s: %s are not valid HTTP header names", what, strings.Join(e.Values, ", "))
}
