package provider

import (
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// Every cause of a failed call is worded with the provider's setting names, word for word as the
// broker client worded it before it returned causes.
func TestBrokerNextStep(t *testing.T) {
	t.Parallel()
	for _, tc := range nextStepCases {
		if got := brokerNextStep(&tc.e); got != tc.want {
			t.Errorf("%s:\n got  %q\n want %q", tc.name, got, tc.want)
		}
	}
}

// nextStepCases are the causes with their wording (an expired bearer token has its own test).
var nextStepCases = []struct {
	name string
	e    broker.Error
	want string
}{
	{"none", broker.Error{}, ""},
	{"credentials", broker.Error{Cause: broker.CauseCredentials, User: "u"},
		`Authentication failed for user "u": check username and password (or RABBITMQ_USERNAME and RABBITMQ_PASSWORD)`},
	{"management tag", broker.Error{Cause: broker.CauseManagementTag, User: "u"},
		"User \"u\" lacks permission for this: it needs the management (or administrator) tag, e.g. `rabbitmqctl set_user_tags u management`"},
	{"vhost access", broker.Error{Cause: broker.CauseVhostAccess, User: "u"},
		"User \"u\" lacks permission for this: it has no access to the vhost; grant it configure permission there on the queues it " +
			"manages (`rabbitmqctl set_permissions -p VHOST u QUEUES_PATTERN '^$' '^$'`; write and read are not needed)"},
	{"permissions", broker.Error{Cause: broker.CausePermissions, User: "u"},
		"User \"u\" lacks permission for this: its configure permission in the vhost must match the queues it declares and " +
			"deletes (the resource's queues_pattern); write and read are not needed"},
	{"vhost not visible", broker.Error{Cause: broker.CauseVhostNotVisible, User: "u", Vhost: "v"},
		"Vhost \"v\" is not among the vhosts user \"u\" can access: either it does not exist, or the user has no permissions in " +
			"it (RabbitMQ 4.3 answers 404 to both). Grant the user configure permission there on the queues it manages " +
			"(`rabbitmqctl set_permissions -p v u QUEUES_PATTERN '^$' '^$'`), or create the vhost"},
	{"token without tag, bearer", broker.Error{Cause: broker.CauseTokenNoTag},
		"The broker accepted the token but it carries no management tag: the management API needs the scope " +
			"`<resource_server_id>.tag:management` (with RabbitMQ's default settings and resource_server_id rabbitmq: " +
			"`rabbitmq.tag:management`; brokers with auth_oauth2.scope_prefix set use that prefix instead), in the bearer_token"},
	{"token without permission, oauth2", broker.Error{Cause: broker.CauseTokenNoPermission, TokenFetched: true},
		"The token lacks a permission on the vhost: it needs the scopes `<resource_server_id>.configure:<vhost>/<queues>`, " +
			"`.write:` and `.read:` for the queues, e.g. `rabbitmq.configure:*/*`, `rabbitmq.write:*/*` and `rabbitmq.read:*/*`, " +
			"granted to oauth2.client_id by the identity provider (or asked for in oauth2.scopes)"},
	{"bearer token refused", broker.Error{Cause: broker.CauseTokenRefused},
		"The broker did not accept the bearer_token: check that it has not expired, that its audience (aud) includes the " +
			"broker's resource_server_id and that the broker knows the key it is signed with"},
	{"fetched token refused", broker.Error{Cause: broker.CauseTokenRefused, TokenFetched: true},
		"The broker did not accept a freshly fetched token: check that its audience (aud) includes the broker's " +
			"resource_server_id (oauth2.endpoint_params audience or resource, depending on the identity provider) and that the " +
			"broker knows the identity provider's signing keys (auth_oauth2.jwks_url or signing keys)"},
	{"metadata store", broker.Error{Cause: broker.CauseMetadataStore},
		"The cluster's metadata store did not answer in time: most likely a majority of the cluster's nodes is down or " +
			"cannot reach each other, and nothing can be declared or deleted until it is back (check `rabbitmqctl cluster_status`). " +
			"The declaration may still take effect once the majority is back"},
	{"node down", broker.Error{Cause: broker.CauseNodeDown},
		"The queue's node is down or restarting: bring it back (check `rabbitmqctl cluster_status`), then try again"},
	{"no majority", broker.Error{Cause: broker.CauseNoMajority, NodesDown: []string{"b@h", "c@h"}, Nodes: 3},
		"2 of the cluster's 3 nodes are not running (b@h, c@h): without a majority the cluster's metadata store cannot take " +
			"declarations or deletions, and this one may still take effect once the majority is back. Bring them back " +
			"(check `rabbitmqctl cluster_status`), then try again"},
	{"no answer", broker.Error{Cause: broker.CauseNoAnswer, Endpoint: "http://rabbit:15672"},
		"Check that the management API answers at http://rabbit:15672 (the rabbitmq_management plugin enabled, the port open), " +
			"or raise request_timeout"},
	{"certificate", broker.Error{Cause: broker.CauseCertificate},
		"The TLS handshake failed over a certificate: set cacert_file (or RABBITMQ_CACERT) to the CA that signed the " +
			"management API's certificate (insecure = true skips that check), and clientcert_file and clientkey_file when the " +
			"server asks for a client certificate"},
	{"first contact", broker.Error{Cause: broker.CauseFirstContact, Addr: "127.0.0.1:15672"},
		"The broker has not answered at this endpoint recently: check that the broker is running and that its management API " +
			"listens at 127.0.0.1:15672 (the management plugin's port is usually 15672; 5672 is AMQP), and that the scheme is " +
			"right (http://, or https:// for a TLS listener). A broker that is still starting: wait until its management API " +
			"answers before running Terraform"},
	{"first contact, unresolved", broker.Error{Cause: broker.CauseFirstContact, Addr: "rabbit.invalid:15672", Unresolved: true},
		"The broker has not answered at this endpoint recently: check the host name in endpoint (or RABBITMQ_ENDPOINT) (the " +
			"management plugin's port is usually 15672; 5672 is AMQP), and that the scheme is right (http://, or https:// for " +
			"a TLS listener). A broker that is still starting: wait until its management API answers before running Terraform"},
	{"AMQP port", broker.Error{Cause: broker.CauseAMQPPort},
		"This is RabbitMQ's AMQP port (it answered with the AMQP protocol header), not the management API: set endpoint (or " +
			"RABBITMQ_ENDPOINT) to the management API's URL, which is usually on port 15672, e.g. http://127.0.0.1:15672"},
	{"not HTTP", broker.Error{Cause: broker.CauseNotHTTP},
		"This port speaks another protocol than HTTP: set endpoint (or RABBITMQ_ENDPOINT) to the management API's URL, which " +
			"is usually on port 15672, e.g. http://127.0.0.1:15672"},
	{"want https", broker.Error{Cause: broker.CauseWantHTTPS, SuggestedURL: "https://rabbit:15671"},
		"This port speaks TLS: set endpoint to https://rabbit:15671 (https://, not http://)"},
	{"want http", broker.Error{Cause: broker.CauseWantHTTP, SuggestedURL: "http://rabbit:15672"},
		"This port speaks plain HTTP, not TLS: set endpoint to http://rabbit:15672 (http://, not https://), or enable TLS on " +
			"the management listener"},
	{"endpoint ending in /api", broker.Error{Cause: broker.CauseAPISuffix, SuggestedURL: "http://rabbit:15672"},
		"The endpoint is the management API's base URL, without /api (the provider appends /api/ itself): set endpoint to " +
			"http://rabbit:15672"},
	{"endpoint with another path", broker.Error{Cause: broker.CauseAPIPath, Path: "/rabbit", SuggestedURL: "http://rabbit:15672"},
		"The endpoint's path \"/rabbit\" is not where the management API is: set endpoint to its base URL, e.g. " +
			"http://rabbit:15672 (with the path prefix only when management.path_prefix is set)"},
	{"not the API", broker.Error{Cause: broker.CauseNotAPI},
		"The server at the endpoint is not RabbitMQ's management API (it answered 400 without a reason): set endpoint to the " +
			"management API's base URL, usually on port 15672"},
}

// An expired bearer token is named with its expiry and how long ago it was.
func TestBrokerNextStep_expiredBearerToken(t *testing.T) {
	t.Parallel()
	exp := time.Now().Add(-90 * time.Minute).Truncate(time.Second)
	got := brokerNextStep(&broker.Error{Cause: broker.CauseTokenRefused, TokenExpiry: exp})
	want := regexp.MustCompile(`^The bearer_token expired at ` + regexp.QuoteMeta(exp.UTC().Format(time.RFC3339)) +
		` \(1h30m\ds ago\): get a new token and set bearer_token \(or RABBITMQ_BEARER_TOKEN\) again, or use the oauth2 block ` +
		`so that the provider fetches and renews tokens itself$`)
	if !want.MatchString(got) {
		t.Errorf("got %q", got)
	}
}

// The token endpoint's failure is worded by its OAuth 2.0 error code, else by whether it answered;
// its text names oauth2.token_url, and a budget that ran out names retry_budget and request_timeout.
func TestTokenEndpointWording(t *testing.T) {
	t.Parallel()
	const prefix = "getting an OAuth 2.0 token from oauth2.token_url https://idp/token failed: "
	budget := &broker.BudgetError{Attempts: 3, Budget: time.Second, Timeout: 2 * time.Second, Last: &broker.NoAnswerError{Timeout: 2 * time.Second}}
	for _, tc := range []struct {
		name      string
		te        broker.TokenError
		msg, step string
	}{
		{"invalid client", broker.TokenError{Status: 401, Code: "invalid_client"}, `HTTP 401, error "invalid_client"`,
			"The identity provider did not accept the client: check oauth2.client_id and oauth2.client_secret " +
				"(or RABBITMQ_OAUTH2_CLIENT_ID and RABBITMQ_OAUTH2_CLIENT_SECRET). Not retried"},
		{"unauthorized client", broker.TokenError{Status: 400, Code: "unauthorized_client"}, `HTTP 400, error "unauthorized_client"`,
			"The client may not use the client credentials grant: allow it in the identity provider (a confidential client " +
				"with service accounts or client credentials enabled)"},
		{"invalid scope", broker.TokenError{Status: 400, Code: "invalid_scope", Description: "Bad scope."},
			`HTTP 400, error "invalid_scope" (Bad scope)`,
			"The identity provider refused the requested scopes: check oauth2.scopes against the scopes the client may request"},
		{"invalid request", broker.TokenError{Status: 400, Code: "invalid_request"}, `HTTP 400, error "invalid_request"`,
			"The identity provider refused the request: check oauth2.endpoint_params (audience or resource) and oauth2.scopes"},
		{"invalid target", broker.TokenError{Status: 400, Code: "invalid_target"}, `HTTP 400, error "invalid_target"`,
			"The identity provider refused the request: check oauth2.endpoint_params (audience or resource) and oauth2.scopes"},
		{"status only", broker.TokenError{Status: 503}, "HTTP 503", "Check oauth2.token_url, oauth2.client_id and oauth2.client_secret"},
		{"no answer", broker.TokenError{Err: budget},
			"no usable answer within retry_budget 1s (3 attempts, request_timeout 2s each): no answer within request_timeout 2s",
			"Check that oauth2.token_url (or RABBITMQ_OAUTH2_TOKEN_URL) is the identity provider's token endpoint and that it answers"},
		{"no token", broker.TokenError{}, "no token in the answer",
			"Check that oauth2.token_url (or RABBITMQ_OAUTH2_TOKEN_URL) is the identity provider's token endpoint and that it answers"},
	} {
		tc.te.TokenURL = "https://idp/token"
		e := &broker.Error{Op: "reading vhost \"/\"", Endpoint: "http://x", Reason: tc.te.Error(), Kind: broker.ErrTokenEndpoint,
			Cause: broker.CauseTokenEndpoint, Err: &tc.te}
		want := "reading vhost \"/\" at http://x failed: " + prefix + tc.msg + ". " + tc.step
		if got := brokerText(e); got != want {
			t.Errorf("%s:\n got  %q\n want %q", tc.name, got, want)
		}
	}
}

// A request that waited in vain names request_timeout and retry_budget; other reasons are the
// broker's.
func TestBrokerReason(t *testing.T) {
	t.Parallel()
	noAnswer := &broker.NoAnswerError{Timeout: 30 * time.Second}
	refused := errors.New("connect: connection refused")
	for _, tc := range []struct {
		e    broker.Error
		want string
	}{
		{broker.Error{Reason: noAnswer.Error(), Err: noAnswer}, "no answer within request_timeout 30s"},
		{broker.Error{Reason: "x", Err: &broker.BudgetError{Attempts: 1, Timeout: time.Second, Last: refused}},
			"no usable answer within retry_budget 0s (1 attempts, request_timeout 1s each): connect: connection refused"},
		{broker.Error{Reason: refused.Error(), Err: refused}, "connect: connection refused"},
		{broker.Error{Reason: "nothing answered", Cause: broker.CauseFirstContact, Err: fmt.Errorf("nothing answered: %w", refused)},
			"nothing answered"},
	} {
		if got := brokerReason(&tc.e); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// Settings the broker client refuses are named as in the provider's schema.
func TestConfigErrorText(t *testing.T) {
	t.Parallel()
	pair := []broker.Setting{broker.SettingClientCertFile, broker.SettingClientKeyFile}
	for _, tc := range []struct {
		e    broker.ConfigError
		want string
	}{
		{broker.ConfigError{Problem: broker.ConfigUnreadable, Settings: []broker.Setting{broker.SettingCACertFile}, Err: errors.New("no such file")},
			"reading cacert_file: no such file"},
		{broker.ConfigError{Problem: broker.ConfigNoPEM, Settings: []broker.Setting{broker.SettingCACertFile}, Values: []string{"/ca.pem"}},
			"cacert_file /ca.pem holds no PEM certificate"},
		{broker.ConfigError{Problem: broker.ConfigHalfPair, Settings: pair},
			"clientcert_file and clientkey_file go together: set both or neither"},
		{broker.ConfigError{Problem: broker.ConfigKeyPair, Settings: pair, Err: errors.New("no such file")},
			"loading clientcert_file and clientkey_file: no such file"},
		{broker.ConfigError{Problem: broker.ConfigMissing, Settings: []broker.Setting{broker.SettingOAuth2TokenURL,
			broker.SettingOAuth2ClientID, broker.SettingOAuth2ClientSecret}},
			"the oauth2 block needs token_url, client_id, client_secret (or the RABBITMQ_OAUTH2_* environment variables)"},
		{broker.ConfigError{Problem: broker.ConfigNotHTTP, Settings: []broker.Setting{broker.SettingOAuth2TokenURL}, Values: []string{"ftp://x"}},
			`oauth2.token_url must be an http or https URL; got "ftp://x"`},
		{broker.ConfigError{Problem: broker.ConfigInvalidHeaders, Settings: []broker.Setting{broker.SettingHeaders}, Values: []string{`"A B"`}},
			`headers: "A B" is not a valid HTTP header name`},
		{broker.ConfigError{Problem: broker.ConfigInvalidHeaders, Settings: []broker.Setting{broker.SettingHeaders}, Values: []string{`"A B"`, `"C:"`}},
			`headers: "A B", "C:" are not valid HTTP header names`},
	} {
		if got := errorText(&tc.e); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// The detail of a failed call has the next step once: after the error, or inside the provider's
// own wrapper that words it; a wrapper that does not (fmt.Errorf, another package's) gets it after.
func TestBrokerDetail(t *testing.T) {
	t.Parallel()
	e := &broker.Error{Op: "deleting queue \"q\" in vhost \"/\"", Endpoint: "http://x", Reason: "no answer within request_timeout 1s",
		Err: &broker.NoAnswerError{Timeout: time.Second}, Kind: broker.ErrUnreachable, Cause: broker.CauseNoAnswer}
	full := brokerText(e)
	step := brokerNextStep(e)
	q := topology.Queue{Name: "q"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"bare", e, full},
		{"the provider's wrapper", &declareError{queue: q, err: e}, full},
		{"a destroy that deleted some", deletedThen([]string{"q.dead"}, e), "deleted q.dead, then: " + full},
		{"another wrapper", fmt.Errorf("queue %q was not changed: %w", "q", e),
			"queue \"q\" was not changed: " + e.Error() + ". " + step},
		{"no broker error", errors.New("x"), "x"},
	} {
		if got := brokerDetail(tc.err); got != tc.want {
			t.Errorf("%s:\n got  %q\n want %q", tc.name, got, tc.want)
		}
	}
}
