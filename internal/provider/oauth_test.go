package provider

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// These tests run against a broker node with the rabbitmq_auth_backend_oauth2
// plugin (see newOAuthTest); make testacc-oauth runs them on RabbitMQ
// 3.10 and 4.3. They change environment variables, so none runs in parallel.

// randomSecret is prefix and 26 random characters (130 bits).
func randomSecret(prefix string) string { return prefix + rand.Text() }

// queueAndHoldQueuesConfig is a provider block with an endpoint and more
// lines, a queue with a message TTL and a maximum priority, and the live data
// source of its hold queues.
const queueAndHoldQueuesConfig = `
provider "queuey" {
  endpoint = %q
%s}

resource "queuey_queue" "test" {
  name         = %q
  message_ttl  = "1h"
  max_priority = 5
}

data "queuey_hold_queues" "q" {
  queue = queuey_queue.test.name
}
`

// apply, plan and destroy with only endpoint and oauth2 in the provider block;
// RABBITMQ_USERNAME and RABBITMQ_PASSWORD in the environment are ignored.
func TestAccOAuth2_applyPlanDestroy(t *testing.T) {
	b, name := newOAuthTest(t, "oauth", 10*time.Minute)
	proxy := proxyTo(t, b.endpoint, nil)
	t.Setenv(EnvUsername, defaultUser)
	t.Setenv(EnvPassword, defaultPassword)
	cfg := fmt.Sprintf(queueAndHoldQueuesConfig, proxy.URL, b.block(), name)
	resource.Test(t, b.queueCase(name,
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeTestCheckFunc(
				b.checkQueues(name, name, name+".dead"),
				resource.TestCheckResourceAttr("queuey_queue.test", "dead_queue", name+".dead"),
			),
		},
		resource.TestStep{
			Config:           cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	))
	b.bearerTokens(t, proxy)
	if n := b.issuer.Hits(); n < 1 || n > 3 {
		t.Errorf("the token endpoint was asked %d times over the whole test, want 1 to 3 (one shared token)", n)
	}
	methods := map[string]int{}
	for _, r := range proxy.Records() {
		methods[r.Method]++
	}
	if methods["PUT"] < 2 || methods["DELETE"] < 2 {
		t.Errorf("requests by method %v: want the declarations and deletions among them", methods)
	}
}

// The provider block names only the endpoint; the oauth2 settings come from
// the environment.
func TestAccOAuth2_fromEnvironment(t *testing.T) {
	b, name := newOAuthTest(t, "oauth-env", 10*time.Minute)
	proxy := proxyTo(t, b.endpoint, nil)
	t.Setenv(EnvUsername, "")
	t.Setenv(EnvPassword, "")
	t.Setenv(EnvOAuth2TokenURL, b.tokenURL)
	t.Setenv(EnvOAuth2ClientID, "terraform")
	t.Setenv(EnvOAuth2ClientSecret, b.secret)
	resource.Test(t, b.queueCase(name, resource.TestStep{
		Config: fmt.Sprintf("provider \"queuey\" {\n  endpoint = %q\n}\n\nresource \"queuey_queue\" \"q\" {\n  name = %q\n}\n", proxy.URL, name),
		Check:  b.checkQueues(name, name, name+".dead"),
	}))
	b.bearerTokens(t, proxy)
}

// Tokens that live 3 s, over an apply of 30 queues through a proxy that
// holds each request, so that the apply outlasts several tokens: every token
// is replaced before it expires and nothing fails.
func TestAccOAuth2_shortLivedTokens(t *testing.T) {
	b, base := newOAuthTest(t, "oauth-short", 3*time.Second)
	proxy := proxyTo(t, b.endpoint, nil)
	proxy.SetDelay(300 * time.Millisecond)
	proxy.Set(always(slow))
	cfg := proxiedQueuesConfig(proxy.URL, b.block(), base, 30, `  message_ttl = "10m"`)
	start := time.Now()
	var applied time.Duration
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             b.checkQueues(base),
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: func(*terraform.State) error {
				applied = time.Since(start)
				return b.checkQueues(base, queueNames(base, 30)...)(nil)
			},
		}},
	})
	total := time.Since(start)
	hits := b.issuer.Hits()
	t.Logf("apply took %s, the whole test %s; %d token requests, %d management API requests", applied.Round(time.Millisecond),
		total.Round(time.Millisecond), hits, len(proxy.Records()))
	if applied < 3*time.Second {
		t.Errorf("the apply took %s, shorter than a token's life: the test proves nothing", applied)
	}
	// A token is replaced after three quarters of its life, which its exp
	// claim (whole seconds) makes 2 to 3 s: at most one token per 1.5 s of
	// the test, plus a few.
	if maxHits := int(total/(1500*time.Millisecond)) + 4; hits < 2 || hits > maxHits {
		t.Errorf("%d token requests over %s, want from 2 to %d", hits, total.Round(time.Millisecond), maxHits)
	}
	for _, r := range proxy.Records() {
		// A management user may not read one vhost ("Not administrator
		// user"); the client then lists the vhosts. Any other refusal means
		// a token was refused.
		if r.Status == 401 && !strings.Contains(r.Reason, "Not administrator user") {
			t.Errorf("%s %s answered 401 (%s): a token expired in use", r.Method, r.URL, r.Reason)
		}
	}
	b.bearerTokens(t, proxy)
}

// The least a token needs, as the operating guide says: the management tag
// and configure on the queues of the topology, in vhost "/" only (%2F).
func TestAccOAuth2_minimalScopes(t *testing.T) {
	b, name := newOAuthTest(t, "oauth-min", 10*time.Minute)
	scopes := []string{b.rsid + ".tag:management", b.rsid + ".configure:%2F/" + name + "*"}
	cfg := fmt.Sprintf(queueAndHoldQueuesConfig, b.endpoint, b.block(scopes...), name)
	resource.Test(t, b.queueCase(name,
		resource.TestStep{Config: cfg, Check: b.checkQueues(name, name, name+".dead")},
		resource.TestStep{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	))
}

// terraform apply -invoke of queuey_redrive_dead_letters with the oauth2
// block: the token is the AMQP password (the username is ignored), and the
// scopes the dead-letters guide names for the actions are enough. The
// provider has no other credentials: RABBITMQ_USERNAME and RABBITMQ_PASSWORD
// are unset, so neither the management API nor the AMQP port can be reached
// but with a token.
func TestAccOAuth2_redriveWithToken(t *testing.T) {
	b, name := newOAuthTest(t, "oauth-redrive", 10*time.Minute)
	needsCLI(t, featureActions)
	amqpAdmin := os.Getenv(EnvOAuthAMQPURL) // amqp://guest:guest@127.0.0.1:5676/
	u, err := url.Parse(amqpAdmin)
	if err != nil || u.Host == "" {
		t.Fatalf("%s is %q (%v): run make testacc-oauth", EnvOAuthAMQPURL, amqpAdmin, err)
	}
	amqpEndpoint := u.Scheme + "://" + u.Host // without the user, the password and the vhost path
	t.Setenv(EnvUsername, "")
	t.Setenv(EnvPassword, "")
	t.Setenv(EnvAMQP, "")
	proxy := proxyTo(t, b.endpoint, nil)
	// The management tag, configure on the topology's queues (apply), read
	// on them (consume q.dead) and write on the default exchange (publish
	// to q): docs/guides/dead-letters.md's permissions table.
	scopes := []string{b.rsid + ".tag:management", b.rsid + ".configure:%2F/" + name + "*",
		b.rsid + ".read:%2F/" + name + "*", b.rsid + ".write:%2F/amq.default"}
	tf := newTerraformCLI(t, requiredQueuey+fmt.Sprintf(`
provider "queuey" {
  endpoint      = %q
  amqp_endpoint = %q
%s}

resource "queuey_queue" "q" {
  name = %q
}
`, proxy.URL, amqpEndpoint, b.block(scopes...), name)+redriveBlock(name, ""))
	tf.mustRun("apply", "-auto-approve")
	if err := b.checkQueues(name, name, name+".dead")(nil); err != nil {
		t.Fatalf("after the apply: %v", err)
	}

	// The dead letters, published by the admin (guest, the internal backend).
	const n = 20
	admin := amqpChannelAt(t, strings.TrimRight(amqpAdmin, "/")+"/"+url.PathEscape("/"))
	publishDead(t, admin, name, n, nil)
	out := tf.mustRun("apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r")
	t.Logf("terraform apply -invoke prints:\n%s", out)
	if !saysWords(out, fmt.Sprintf("moved %d messages from %s.dead to %s", n, name, name)) {
		t.Errorf("apply -invoke lacks the last line:\n%s", out)
	}
	moved, left := readBack(t, admin, name), readBack(t, admin, name+".dead")
	dups := checkNoneLost(t, n, moved)
	if _, _, unexpected := tally(n, moved); len(unexpected) > 0 || len(left) != 0 {
		t.Errorf("after the redrive: ids on %s not published: %v; %d messages left on %s.dead (want 0)", name, unexpected, len(left), name)
	}
	t.Logf("%d messages on %s after the redrive (%d duplicates)", len(moved), name, dups)
	b.bearerTokens(t, proxy)
}

// A wrong client secret: an error naming token_url and the identity
// provider's error code, and no storm of token requests.
func TestAccOAuth2_wrongClientSecret(t *testing.T) {
	b, base := newOAuthTest(t, "oauth-wrong", 10*time.Minute)
	proxy := proxyTo(t, b.endpoint, nil)
	wrong := strings.Replace(b.block(), b.secret, randomSecret("wrong-"), 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      proxiedQueuesConfig(proxy.URL, wrong, base, 5, ""),
			ExpectError: regexp.MustCompile(`(?s)token_url\s+` + regexp.QuoteMeta(b.tokenURL) + `.*HTTP\s+401.*"invalid_client".*client_secret`),
		}},
	})
	// The oauth2 package tries the credentials in a header, then in the form
	// body: two requests, once per process at most.
	if n := b.issuer.Hits(); n < 1 || n > 4 {
		t.Errorf("the token endpoint was asked %d times for 5 queues, want 1 to 4", n)
	}
	if n := len(proxy.Records()); n != 0 {
		t.Errorf("the management API saw %d requests without a token", n)
	}
	if err := b.checkQueues(base)(nil); err != nil {
		t.Error(err)
	}
}

// A token without the management tag scope: the refusal explained, with the
// scope needed.
func TestAccOAuth2_noManagementScope(t *testing.T) {
	b, base := newOAuthTest(t, "oauth-notag", 10*time.Minute)
	scopes := []string{b.rsid + ".configure:*/*", b.rsid + ".write:*/*", b.rsid + ".read:*/*"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      proxiedQueuesConfig(b.endpoint, b.block(scopes...), base, 1, ""),
			ExpectError: errorMatching("HTTP 401", "Not management user", "rabbitmq.tag:management", "oauth2.client_id"),
		}},
	})
	if err := b.checkQueues(base)(nil); err != nil {
		t.Error(err)
	}
}

// A static bearer_token works, and headers reach the broker.
func TestAccBearerToken_staticWithHeaders(t *testing.T) {
	b, name := newOAuthTest(t, "bearer", 0)
	tok := b.token("", 10*time.Minute)
	proxy := proxyTo(t, b.endpoint, nil)
	headerValue := randomSecret("hv-")
	t.Setenv("TF_VAR_queuey_token", tok)
	resource.Test(t, b.queueCase(name, resource.TestStep{
		Config: fmt.Sprintf(`
variable "queuey_token" {
  type      = string
  sensitive = true
}

provider "queuey" {
  endpoint     = %q
  bearer_token = var.queuey_token
  headers = {
    "X-Queuey-Test"       = %q
    "CF-Access-Client-Id" = "terraform.access"
  }
}

resource "queuey_queue" "q" {
  name = %q
}
`, proxy.URL, headerValue, name),
		Check: b.checkQueues(name, name, name+".dead"),
	}))
	if got := b.bearerTokens(t, proxy); !slices.Equal(got, []string{tok}) {
		t.Errorf("the broker saw %d bearer tokens, want the static one only", len(got))
	}
	for _, r := range proxy.Records() {
		if r.Header.Get("X-Queuey-Test") != headerValue || r.Header.Get("Cf-Access-Client-Id") != "terraform.access" {
			t.Errorf("%s %s arrived without the configured headers", r.Method, r.URL)
		}
	}
}

// An expired bearer_token: the refusal explained.
func TestAccBearerToken_expired(t *testing.T) {
	b, base := newOAuthTest(t, "bearer-expired", 0)
	tok := b.token("", -time.Minute)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      proxiedQueuesConfig(b.endpoint, fmt.Sprintf("  bearer_token = %q", tok), base, 1, ""),
			ExpectError: errorMatching("HTTP 401", "The bearer_token expired at", "get a new token"),
		}},
	})
}

// No secret — the client secret, a token, a header value — in the output or
// in the TRACE logs of Terraform and the provider.
func TestAccOAuth2_secretsNotLogged(t *testing.T) {
	b, name := newOAuthTest(t, "oauth-secrets", 10*time.Minute)
	headerValue := randomSecret("hv-")
	proxy := proxyTo(t, b.endpoint, nil)
	logPath := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logPath)
	t.Setenv("TF_VAR_client_secret", b.secret)
	// Through sensitive variables, as an operator would pass them:
	// terraform-plugin-testing logs each step's configuration text itself.
	t.Setenv("TF_VAR_header_value", headerValue)
	cfg := fmt.Sprintf(`
variable "client_secret" {
  type      = string
  sensitive = true
}

variable "header_value" {
  type      = string
  sensitive = true
}

provider "queuey" {
  endpoint = %q
  headers  = { "X-Queuey-Test" = var.header_value }
%s}

resource "queuey_queue" "q" {
  name = %q
}

output "dead" {
  value = queuey_queue.q.dead_queue
}
`, proxy.URL, strings.Replace(b.block(), strconv.Quote(b.secret), "var.client_secret", 1), name)
	resource.Test(t, b.queueCase(name,
		resource.TestStep{Config: cfg, Check: b.checkQueues(name, name, name+".dead")},
		resource.TestStep{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	))
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := string(raw)
	secrets := map[string]string{"the client secret": b.secret, "the header value": headerValue}
	// Every token the provider sent: the proxy saw them all.
	for i, tok := range b.bearerTokens(t, proxy) {
		secrets[fmt.Sprintf("token %d", i+1)] = tok
		// The signature alone identifies a token.
		secrets[fmt.Sprintf("the signature of token %d", i+1)] = tok[strings.LastIndex(tok, ".")+1:]
	}
	for what, s := range secrets {
		if i := strings.Index(logs, s); i >= 0 {
			from, to := max(0, i-300), min(len(logs), i+len(s)+100)
			t.Errorf("the TRACE logs contain %s: …%s…", what, strings.ReplaceAll(logs[from:to], s, "<"+what+">"))
		}
	}
	if !strings.Contains(logs, "Terraform version:") && !strings.Contains(logs, "OpenTofu version:") {
		t.Error("the logs lack the CLI's log lines: the search did not cover them")
	}
	for what, marker := range map[string]string{
		"the provider's Configure":             "Calling provider defined Provider Configure",
		"the provider's Create":                "Calling provider defined Resource Create",
		"the provider's Delete":                "Calling provider defined Resource Delete",
		"the test's configuration (token_url)": b.tokenURL,
	} {
		if !strings.Contains(logs, marker) {
			t.Errorf("the logs lack %s (%q): the search did not cover them", what, marker)
		}
	}
	t.Logf("searched %d bytes of TRACE logs for %d secrets", len(logs), len(secrets))
	for _, r := range proxy.Records() {
		if r.Header.Get("X-Queuey-Test") != headerValue {
			t.Fatalf("%s %s arrived without the header: the search for its value proves nothing", r.Method, r.URL)
		}
	}
}

// The OAuth 2.0 acceptance tests (TestAccOAuth2_*, TestAccBearerToken_*) need
// a broker node with the rabbitmq_auth_backend_oauth2 plugin, which
// make testacc-oauth starts (the oauth-* brokers of tools/acc) and describes in
// these variables.
const (
	EnvOAuthEndpoint         = "RABBITMQ_OAUTH_ENDPOINT"
	EnvOAuthSigningKey       = "RABBITMQ_OAUTH_SIGNING_KEY"
	EnvOAuthResourceServerID = "RABBITMQ_OAUTH_RESOURCE_SERVER_ID"
	EnvOAuthAMQPURL          = "RABBITMQ_OAUTH_AMQP_URL"
	EnvOAuthVersion          = "RABBITMQ_OAUTH_VERSION"
	EnvOAuthKeyID            = "RABBITMQ_OAUTH_KEY_ID"
)

// oauthBroker is the OAuth-enabled node under test, and a loopback OAuth 2.0
// token endpoint for it.
type oauthBroker struct {
	endpoint, rsid, keyID string
	key                   []byte
	// admin reaches the node with guest/guest (the internal backend, tried
	// after oauth2), for setting up and checking.
	admin *broker.Client
	// issuer is the token endpoint, at tokenURL, which accepts the client
	// "terraform" with secret and issues tokens signed with key for the scopes
	// asked for (all of token's when none are).
	issuer           *brokertest.TokenEndpoint
	tokenURL, secret string
}

// newOAuthTest skips the test, saying why, unless TF_ACC is set and an
// OAuth-enabled node is described in the environment. It returns that node,
// with a token endpoint whose tokens live life (closed at cleanup), and a
// queue name made from prefix whose queues are deleted at the end.
func newOAuthTest(t *testing.T, prefix string, life time.Duration) (*oauthBroker, string) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" || os.Getenv(EnvOAuthEndpoint) == "" {
		t.Skip("needs TF_ACC=1 and a RabbitMQ node with the OAuth 2.0 backend, described by RABBITMQ_OAUTH_*: run make testacc-oauth")
	}
	// A node described without its key or resource server id fails the test.
	key, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(os.Getenv(EnvOAuthSigningKey), "="))
	b := &oauthBroker{endpoint: strings.TrimRight(os.Getenv(EnvOAuthEndpoint), "/"), rsid: os.Getenv(EnvOAuthResourceServerID),
		keyID: os.Getenv(EnvOAuthKeyID), key: key, secret: randomSecret("cs-")}
	if err == nil {
		b.admin, err = broker.New(broker.Config{Endpoint: b.endpoint, Username: defaultUser, Password: defaultPassword})
	}
	if err != nil || len(key) == 0 || b.rsid == "" {
		t.Fatalf("the OAuth 2.0 node of %s: %s or %s unset, or %v", EnvOAuthEndpoint, EnvOAuthSigningKey, EnvOAuthResourceServerID, err)
	}
	t.Logf("OAuth 2.0 broker: RabbitMQ %s at %s", os.Getenv(EnvOAuthVersion), b.endpoint)
	b.issuer = brokertest.NewTokenEndpoint(t, b.secret)
	b.issuer.ExpiresIn = int(life / time.Second)
	b.issuer.Mint = func(form url.Values) string { return b.token(form.Get("scope"), life) }
	b.tokenURL = b.issuer.URL + "/realms/test/protocol/openid-connect/token"
	name := uniqueName(prefix)
	t.Cleanup(func() { deleteQueuesWithPrefix(b.admin, "/", name) })
	return b, name
}

// token signs a JWT for the broker with scope, a space-separated list (""
// for all Terraform's client needs on every vhost), and lifetime (negative:
// already expired). Signing with HS256 fails only on a key that is not a
// []byte or is empty, which newOAuthTest has ruled out.
func (b *oauthBroker) token(scope string, life time.Duration) string {
	scope = cmp.Or(scope, b.rsid+".tag:management "+b.rsid+".configure:*/* "+b.rsid+".write:*/* "+b.rsid+".read:*/*")
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "terraform", "client_id": "terraform",
		"aud": []string{b.rsid}, "scope": scope, "iat": time.Now().Unix(),
		"exp": time.Now().Add(life).Unix(), "jti": uniqueName("jti")})
	if b.keyID != "" {
		tok.Header["kid"] = b.keyID
	}
	s, _ := tok.SignedString(b.key)
	return s
}

// checkQueues checks that exactly the given queues exist with prefix.
func (b *oauthBroker) checkQueues(prefix string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := queuesWithPrefix(b.admin, "/", prefix)
		if slices.Sort(got); err == nil && !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			err = fmt.Errorf("queues with prefix %s: got %q, want %q", prefix, got, want)
		}
		return err
	}
}

// queueCase is an acceptance test of the queuey_queue name on this broker:
// its steps, then a check that its queues are gone.
func (b *oauthBroker) queueCase(name string, steps ...resource.TestStep) resource.TestCase {
	return resource.TestCase{ProtoV6ProviderFactories: testProviderFactories, CheckDestroy: b.checkQueues(name), Steps: steps}
}

// bearerTokens fails unless every request the proxy saw carried a bearer
// token signed with the broker's key (so issued by the test) and none
// carried basic auth; it returns the tokens, each once.
func (b *oauthBroker) bearerTokens(t *testing.T, p *faultProxy) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range p.Records() {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		_, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return b.key, nil }, jwt.WithoutClaimsValidation())
		if seen[tok] = true; scheme != "Bearer" || err != nil {
			t.Errorf("%s %s: Authorization scheme %q, want Bearer only with a token the test issued (%v)", r.Method, r.URL, scheme, err)
		}
	}
	if len(seen) == 0 {
		t.Fatal("the proxy saw no request")
	}
	return slices.Sorted(maps.Keys(seen))
}

// block is the provider's oauth2 block for the token endpoint, with the
// right secret written out and the given scopes (none: null, as if unset).
func (b *oauthBroker) block(scopes ...string) string {
	list, _ := json.Marshal(scopes) // a JSON list of strings is an HCL one
	return fmt.Sprintf("  oauth2 {\n    token_url     = %q\n    client_id     = \"terraform\"\n    client_secret = %q\n    scopes        = %s\n  }\n",
		b.tokenURL, b.secret, list)
}
