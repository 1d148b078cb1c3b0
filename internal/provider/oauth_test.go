package provider

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// These tests run against a broker node with the rabbitmq_auth_backend_oauth2
// plugin (see oauthPreCheck); make testacc-oauth runs them on RabbitMQ
// 3.10 and 4.3. They change environment variables, so none runs in parallel.

// randomSecret is prefix and 26 random characters (130 bits).
func randomSecret(prefix string) string { return prefix + rand.Text() }

// checkQueues checks that exactly the given queues exist with prefix.
func (b *oauthBroker) checkQueues(t *testing.T, prefix string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got := b.queues(t, prefix)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("queues with prefix %s: got %q, want %q", prefix, got, want)
		}
		return nil
	}
}

// queueAndHoldQueuesConfig is a provider block with endpoint and the given
// lines, a queue with a message TTL and a maximum priority, and the live
// data source of its hold queues.
func queueAndHoldQueuesConfig(endpoint, providerLines, name string) string {
	return providerQueue(fmt.Sprintf("  endpoint = %q\n%s", endpoint, providerLines), name, "  message_ttl  = \"1h\"\n  max_priority = 5") +
		"\ndata \"queuey_hold_queues\" \"q\" {\n  queue = queuey_queue.test.name\n}\n"
}

// apply, plan and destroy with only endpoint and oauth2 in the provider block;
// RABBITMQ_USERNAME and RABBITMQ_PASSWORD in the environment are ignored.
func TestAccOAuth2_applyPlanDestroy(t *testing.T) {
	b, issuer := newOAuthTest(t, 10*time.Minute)
	proxy := proxyTo(t, b.endpoint, nil)
	t.Setenv(EnvUsername, defaultUser)
	t.Setenv(EnvPassword, defaultPassword)
	name := uniqueName("oauth")
	b.cleanup(t, name)
	cfg := queueAndHoldQueuesConfig(proxy.URL, issuer.block(), name)
	resource.Test(t, b.queueCase(t, name, []resource.TestStep{
		{
			Config: cfg,
			Check: resource.ComposeTestCheckFunc(
				b.checkQueues(t, name, name, name+".dead"),
				resource.TestCheckResourceAttr("queuey_queue.test", "dead_queue", name+".dead"),
			),
		},
		{
			Config:           cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	}))
	proxy.checkAllBearer(t, issuer.tokens()...)
	if n := issuer.hits.Load(); n < 1 || n > 3 {
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
	b, issuer := newOAuthTest(t, 10*time.Minute)
	proxy := proxyTo(t, b.endpoint, nil)
	t.Setenv(EnvUsername, "")
	t.Setenv(EnvPassword, "")
	t.Setenv(EnvOAuth2TokenURL, issuer.URL)
	t.Setenv(EnvOAuth2ClientID, "terraform")
	t.Setenv(EnvOAuth2ClientSecret, issuer.secret)
	name := uniqueName("oauth-env")
	b.cleanup(t, name)
	resource.Test(t, b.queueCase(t, name, []resource.TestStep{{
		Config: fmt.Sprintf("provider \"queuey\" {\n  endpoint = %q\n}\n\nresource \"queuey_queue\" \"q\" {\n  name = %q\n}\n", proxy.URL, name),
		Check:  b.checkQueues(t, name, name, name+".dead"),
	}}))
	proxy.checkAllBearer(t, issuer.tokens()...)
}

// Tokens that live 3 s, over an apply of 30 queues through a proxy that
// holds each request, so that the apply outlasts several tokens: every token
// is replaced before it expires and nothing fails.
func TestAccOAuth2_shortLivedTokens(t *testing.T) {
	b, issuer := newOAuthTest(t, 3*time.Second)
	proxy := proxyTo(t, b.endpoint, nil)
	proxy.SetDelay(300 * time.Millisecond)
	proxy.Set(always(slow))
	base := uniqueName("oauth-short")
	b.cleanup(t, base)
	cfg := proxiedQueuesConfig(proxy.URL, issuer.block(), base, 30, `  message_ttl = "10m"`)
	start := time.Now()
	var applied time.Duration
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             b.checkQueues(t, base),
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: resource.ComposeTestCheckFunc(
				checkStateCount("queuey_queue", 30),
				func(*terraform.State) error {
					applied = time.Since(start)
					got := b.queues(t, base)
					if len(got) != 60 {
						return fmt.Errorf("%d queues with prefix %s, want 60", len(got), base)
					}
					return nil
				},
			),
		}},
	})
	total := time.Since(start)
	hits := issuer.hits.Load()
	t.Logf("apply took %s, the whole test %s; %d token requests, %d management API requests", applied.Round(time.Millisecond),
		total.Round(time.Millisecond), hits, len(proxy.Records()))
	if applied < 3*time.Second {
		t.Errorf("the apply took %s, shorter than a token's life: the test proves nothing", applied)
	}
	// A token is replaced after three quarters of its life, which its exp
	// claim (whole seconds) makes 2 to 3 s: at most one token per 1.5 s of
	// the test, plus a few.
	if maxHits := int64(total/(1500*time.Millisecond)) + 4; hits < 2 || hits > maxHits {
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
	proxy.checkAllBearer(t, issuer.tokens()...)
}

// The least a token needs, as the operating guide says: the management tag
// and configure on the queues of the topology, in vhost "/" only (%2F).
func TestAccOAuth2_minimalScopes(t *testing.T) {
	b, issuer := newOAuthTest(t, 10*time.Minute)
	name := uniqueName("oauth-min")
	b.cleanup(t, name)
	scopes := []string{b.rsid + ".tag:management", b.rsid + ".configure:%2F/" + name + "*"}
	cfg := queueAndHoldQueuesConfig(b.endpoint, issuer.block(scopes...), name)
	resource.Test(t, b.queueCase(t, name, []resource.TestStep{
		{Config: cfg, Check: b.checkQueues(t, name, name, name+".dead")},
		{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	}))
}

// terraform apply -invoke of queuey_redrive_dead_letters with the oauth2
// block: the token is the AMQP password (the username is ignored), and the
// scopes the dead-letters guide names for the actions are enough. The
// provider has no other credentials: RABBITMQ_USERNAME and RABBITMQ_PASSWORD
// are unset, so neither the management API nor the AMQP port can be reached
// but with a token.
func TestAccOAuth2_redriveWithToken(t *testing.T) {
	b := oauthPreCheck(t)
	needsCLI(t, featureActions)
	issuer := newTokenIssuer(t, b, randomSecret("cs-"), 10*time.Minute)
	amqpAdmin := os.Getenv(EnvOAuthAMQPURL) // amqp://guest:guest@127.0.0.1:5676/
	if amqpAdmin == "" {
		t.Fatalf("%s is not set: run make testacc-oauth", EnvOAuthAMQPURL)
	}
	amqpEndpoint := withoutCredentials(t, amqpAdmin)
	t.Setenv(EnvUsername, "")
	t.Setenv(EnvPassword, "")
	t.Setenv(EnvAMQP, "")
	proxy := proxyTo(t, b.endpoint, nil)
	name := uniqueName("oauth-redrive")
	b.cleanup(t, name)
	// The management tag, configure on the topology's queues (apply), read
	// on them (consume q.dead) and write on the default exchange (publish
	// to q): docs/guides/dead-letters.md's permissions table.
	scopes := []string{b.rsid + ".tag:management", b.rsid + ".configure:%2F/" + name + "*",
		b.rsid + ".read:%2F/" + name + "*", b.rsid + ".write:%2F/amq.default"}
	tf := newTerraformCLI(t, fmt.Sprintf(`terraform {
  required_providers {
    queuey = { source = "queuey/queuey" }
  }
}

provider "queuey" {
  endpoint      = %q
  amqp_endpoint = %q
%s}

resource "queuey_queue" "q" {
  name = %q
}
`, proxy.URL, amqpEndpoint, issuer.block(scopes...), name)+redriveBlock(name, ""))
	tf.mustRun("apply", "-auto-approve")
	if got := b.queues(t, name); len(got) != 2 {
		t.Fatalf("queues after the apply: %q, want %s and %s.dead", got, name, name)
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
	counts := idCounts(moved)
	dups := checkNoneLost(t, n, counts)
	if len(counts) != n || len(left) != 0 {
		t.Errorf("after the redrive: %d distinct message ids on %s (want %d), %d messages left on %s.dead (want 0)",
			len(counts), name, n, len(left), name)
	}
	t.Logf("%d messages on %s after the redrive (%d duplicates)", len(moved), name, dups)
	if len(issuer.tokens()) == 0 {
		t.Error("no token was issued")
	}
	proxy.checkAllBearer(t, issuer.tokens()...)
}

// withoutCredentials is an AMQP URL without its user, password and vhost
// path: an amqp_endpoint.
func withoutCredentials(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("AMQP URL: %v", err)
	}
	u.User, u.Path, u.RawPath = nil, "", ""
	return u.String()
}

// A wrong client secret: an error naming token_url and the identity
// provider's error code, and no storm of token requests.
func TestAccOAuth2_wrongClientSecret(t *testing.T) {
	b := oauthPreCheck(t)
	issuer := newTokenIssuer(t, b, randomSecret("right-"), 10*time.Minute)
	proxy := proxyTo(t, b.endpoint, nil)
	base := uniqueName("oauth-wrong")
	b.cleanup(t, base)
	wrong := randomSecret("wrong-")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      proxiedQueuesConfig(proxy.URL, issuer.oauth2Block(fmt.Sprintf("%q", wrong)), base, 5, ""),
			ExpectError: regexp.MustCompile(`(?s)token_url\s+` + regexp.QuoteMeta(issuer.URL) + `.*HTTP\s+401.*"invalid_client".*client_secret`),
		}},
	})
	// The oauth2 package tries the credentials in a header, then in the form
	// body: two requests, once per process at most.
	if n := issuer.hits.Load(); n < 1 || n > 4 {
		t.Errorf("the token endpoint was asked %d times for 5 queues, want 1 to 4", n)
	}
	if n := len(proxy.Records()); n != 0 {
		t.Errorf("the management API saw %d requests without a token", n)
	}
	if got := b.queues(t, base); len(got) != 0 {
		t.Errorf("queues created: %q", got)
	}
}

// A token without the management tag scope: the refusal explained, with the
// scope needed.
func TestAccOAuth2_noManagementScope(t *testing.T) {
	b, issuer := newOAuthTest(t, 10*time.Minute)
	base := uniqueName("oauth-notag")
	b.cleanup(t, base)
	scopes := []string{b.rsid + ".configure:*/*", b.rsid + ".write:*/*", b.rsid + ".read:*/*"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      proxiedQueuesConfig(b.endpoint, issuer.block(scopes...), base, 1, ""),
			ExpectError: errorMatching("HTTP 401", "Not management user", "rabbitmq.tag:management", "oauth2.client_id"),
		}},
	})
	if got := b.queues(t, base); len(got) != 0 {
		t.Errorf("queues created: %q", got)
	}
}

// A static bearer_token works, and headers reach the broker.
func TestAccBearerToken_staticWithHeaders(t *testing.T) {
	b := oauthPreCheck(t)
	tok := b.token(t, b.fullScopes(), 10*time.Minute)
	proxy := proxyTo(t, b.endpoint, nil)
	headerValue := randomSecret("hv-")
	t.Setenv("TF_VAR_queuey_token", tok)
	name := uniqueName("bearer")
	b.cleanup(t, name)
	resource.Test(t, b.queueCase(t, name, []resource.TestStep{{
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
		Check: b.checkQueues(t, name, name, name+".dead"),
	}}))
	proxy.checkAllBearer(t, tok)
	for _, r := range proxy.Records() {
		if r.Header.Get("X-Queuey-Test") != headerValue || r.Header.Get("Cf-Access-Client-Id") != "terraform.access" {
			t.Errorf("%s %s arrived without the configured headers", r.Method, r.URL)
		}
	}
}

// An expired bearer_token: the refusal explained.
func TestAccBearerToken_expired(t *testing.T) {
	b := oauthPreCheck(t)
	tok := b.token(t, b.fullScopes(), -time.Minute)
	base := uniqueName("bearer-expired")
	b.cleanup(t, base)
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
	b, issuer := newOAuthTest(t, 10*time.Minute)
	headerValue := randomSecret("hv-")
	proxy := proxyTo(t, b.endpoint, nil)
	logPath := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logPath)
	t.Setenv("TF_VAR_client_secret", issuer.secret)
	// Through sensitive variables, as an operator would pass them:
	// terraform-plugin-testing logs each step's configuration text itself.
	t.Setenv("TF_VAR_header_value", headerValue)
	name := uniqueName("oauth-secrets")
	b.cleanup(t, name)
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
`, proxy.URL, issuer.oauth2Block("var.client_secret"), name)
	resource.Test(t, b.queueCase(t, name, []resource.TestStep{
		{Config: cfg, Check: b.checkQueues(t, name, name, name+".dead")},
		{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	}))
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := string(raw)
	secrets := map[string]string{"the client secret": issuer.secret, "the header value": headerValue}
	for i, tok := range issuer.tokens() {
		secrets[fmt.Sprintf("token %d", i+1)] = tok
		// The signature alone identifies a token.
		secrets[fmt.Sprintf("the signature of token %d", i+1)] = tok[strings.LastIndex(tok, ".")+1:]
	}
	if len(issuer.tokens()) == 0 {
		t.Fatal("no token was issued")
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
		"the test's configuration (token_url)": issuer.URL,
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

// oauthBroker is the OAuth-enabled node under test.
type oauthBroker struct {
	endpoint, rsid, keyID, version string
	key                            []byte
	// admin reaches the node with guest/guest (the internal backend, tried
	// after oauth2), for setting up and checking.
	admin *broker.Client
}

// oauthPreCheck skips the test, saying why, unless TF_ACC is set and an
// OAuth-enabled node is described in the environment.
func oauthPreCheck(t *testing.T) *oauthBroker {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	missing := slices.DeleteFunc([]string{EnvOAuthEndpoint, EnvOAuthSigningKey, EnvOAuthResourceServerID, EnvOAuthVersion},
		func(e string) bool { return os.Getenv(e) != "" })
	if len(missing) > 0 {
		t.Skipf("needs a RabbitMQ node with the OAuth 2.0 backend, described by %s: run make testacc-oauth",
			strings.Join(missing, ", "))
	}
	key, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(os.Getenv(EnvOAuthSigningKey), "="))
	if err != nil {
		t.Fatalf("%s: %v", EnvOAuthSigningKey, err)
	}
	b := &oauthBroker{
		endpoint: strings.TrimRight(os.Getenv(EnvOAuthEndpoint), "/"), rsid: os.Getenv(EnvOAuthResourceServerID),
		keyID: os.Getenv(EnvOAuthKeyID), version: os.Getenv(EnvOAuthVersion), key: key,
	}
	b.admin, err = broker.New(broker.Config{Endpoint: b.endpoint, Username: defaultUser, Password: defaultPassword})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("OAuth 2.0 broker: RabbitMQ %s at %s", b.version, b.endpoint)
	return b
}

// fullScopes are the scopes Terraform's client needs on every vhost.
func (b *oauthBroker) fullScopes() []string {
	return []string{b.rsid + ".tag:management", b.rsid + ".configure:*/*", b.rsid + ".write:*/*", b.rsid + ".read:*/*"}
}

// token signs a JWT for the broker with the given scopes and lifetime
// (negative: already expired).
func (b *oauthBroker) token(t *testing.T, scopes []string, life time.Duration) string {
	t.Helper()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "terraform", "client_id": "terraform", "aud": []string{b.rsid},
		"scope": strings.Join(scopes, " "), "iat": now.Unix(), "exp": now.Add(life).Unix(),
		"jti": uniqueName("jti"),
	})
	if b.keyID != "" {
		tok.Header["kid"] = b.keyID
	}
	s, err := tok.SignedString(b.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cleanup deletes, at the end of the test, the queues whose names start with
// prefix.
func (b *oauthBroker) cleanup(t *testing.T, prefix string) {
	t.Cleanup(func() { deleteQueuesWithPrefix(b.admin, "/", prefix) })
}

// queueCase is an acceptance test of the queuey_queue name on this broker:
// its steps, then a check that its queues are gone.
func (b *oauthBroker) queueCase(t *testing.T, name string, steps []resource.TestStep) resource.TestCase {
	return resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             b.checkQueues(t, name),
		Steps:                    steps,
	}
}

// queues lists the queues of vhost "/" whose names start with prefix.
func (b *oauthBroker) queues(t *testing.T, prefix string) []string {
	t.Helper()
	names, err := queuesWithPrefix(b.admin, "/", prefix)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// tokenIssuer is a loopback OAuth 2.0 token endpoint for the client
// credentials grant. It grants the scopes asked for (all of fullScopes when
// none are), signs JWTs with the broker's key, remembers every token it
// issued and counts its requests.
type tokenIssuer struct {
	URL    string
	secret string

	hits   atomic.Int64
	mu     sync.Mutex
	issued []string
}

// newTokenIssuer starts a token issuer for the client "terraform" with
// secret, whose tokens live life, closed at cleanup.
func newTokenIssuer(t *testing.T, b *oauthBroker, secret string, life time.Duration) *tokenIssuer {
	ti := &tokenIssuer{secret: secret}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti.hits.Add(1)
		_ = r.ParseForm()
		id, sec, ok := r.BasicAuth()
		if !ok {
			id, sec = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.PostForm.Get("grant_type") != "client_credentials":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"unsupported_grant_type"}`)
			return
		case id != "terraform" || sec != ti.secret:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"Invalid client or Invalid client credentials"}`)
			return
		}
		scopes := strings.Fields(r.PostForm.Get("scope"))
		if len(scopes) == 0 {
			scopes = b.fullScopes()
		}
		tok := b.token(t, scopes, life)
		ti.mu.Lock()
		ti.issued = append(ti.issued, tok)
		ti.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "scope": strings.Join(scopes, " "),
			"expires_in": int(life / time.Second)})
	}))
	t.Cleanup(srv.Close)
	ti.URL = srv.URL + "/realms/test/protocol/openid-connect/token"
	return ti
}

// tokens returns the tokens issued so far.
func (ti *tokenIssuer) tokens() []string {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return slices.Clone(ti.issued)
}

// newOAuthTest checks that the test can run (oauthPreCheck) and starts a
// token issuer for it with a fresh client secret.
func newOAuthTest(t *testing.T, life time.Duration) (*oauthBroker, *tokenIssuer) {
	t.Helper()
	b := oauthPreCheck(t)
	return b, newTokenIssuer(t, b, randomSecret("cs-"), life)
}

// block is the provider's oauth2 block for this issuer, with the right
// secret written out.
func (ti *tokenIssuer) block(scopes ...string) string {
	return ti.oauth2Block(fmt.Sprintf("%q", ti.secret), scopes...)
}

// oauth2Block is the provider's oauth2 block for this issuer.
func (ti *tokenIssuer) oauth2Block(secretExpr string, scopes ...string) string {
	s := fmt.Sprintf("  oauth2 {\n    token_url     = %q\n    client_id     = \"terraform\"\n    client_secret = %s\n", ti.URL, secretExpr)
	if len(scopes) > 0 {
		list, _ := json.Marshal(scopes) // a JSON list of strings is an HCL one
		s += "    scopes        = " + string(list) + "\n"
	}
	return s + "  }\n"
}

// checkAllBearer fails unless every request the proxy saw carried a bearer
// token (one of allowed, when given) and none carried basic auth.
func (p *faultProxy) checkAllBearer(t *testing.T, allowed ...string) {
	t.Helper()
	seen := p.Records()
	if len(seen) == 0 {
		t.Fatal("the proxy saw no request")
	}
	for _, r := range seen {
		switch scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " "); {
		case scheme != "Bearer":
			t.Errorf("%s %s: Authorization scheme %q, want Bearer only", r.Method, r.URL, scheme)
		case len(allowed) > 0 && !slices.Contains(allowed, token):
			t.Errorf("%s %s: a bearer token the test did not issue", r.Method, r.URL)
		}
	}
	t.Logf("the broker saw %d requests, all with a bearer token and none with basic auth", len(seen))
}
