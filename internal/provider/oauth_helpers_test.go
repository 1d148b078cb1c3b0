package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// The OAuth 2.0 acceptance tests (TestAccOAuth2_*, TestAccBearerToken_*) need
// a broker node with the rabbitmq_auth_backend_oauth2 plugin, which
// scripts/testacc-oauth.sh starts (scripts/oauth-node.sh) and describes in
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
	var missing []string
	for _, e := range []string{EnvOAuthEndpoint, EnvOAuthSigningKey, EnvOAuthResourceServerID, EnvOAuthVersion} {
		if os.Getenv(e) == "" {
			missing = append(missing, e)
		}
	}
	if len(missing) > 0 {
		t.Skipf("needs a RabbitMQ node with the OAuth 2.0 backend, described by %s: run scripts/testacc-oauth.sh",
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
	all, err := b.admin.ListQueues(context.Background(), "/")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name := range all {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	return out
}

// tokenIssuer is a loopback OAuth 2.0 token endpoint for the client
// credentials grant. It grants the scopes asked for (all of fullScopes when
// none are), signs JWTs with the broker's key, remembers every token it
// issued and counts its requests.
type tokenIssuer struct {
	URL    string
	b      *oauthBroker
	secret string
	// life is the tokens' lifetime; expires_in is sent unless omitExpiresIn.
	life          time.Duration
	omitExpiresIn bool

	hits   atomic.Int64
	mu     sync.Mutex
	issued []string
}

func newTokenIssuer(t *testing.T, b *oauthBroker, secret string, life time.Duration) *tokenIssuer {
	ti := &tokenIssuer{b: b, secret: secret, life: life}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti.hits.Add(1)
		_ = r.ParseForm()
		id, sec, ok := r.BasicAuth()
		if !ok {
			id, sec = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("grant_type") != "client_credentials" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"unsupported_grant_type"}`))
			return
		}
		if id != "terraform" || sec != ti.secret {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"Invalid client or Invalid client credentials"}`))
			return
		}
		scopes := strings.Fields(r.PostForm.Get("scope"))
		if len(scopes) == 0 {
			scopes = b.fullScopes()
		}
		tok := b.token(t, scopes, ti.life)
		ti.mu.Lock()
		ti.issued = append(ti.issued, tok)
		ti.mu.Unlock()
		body := map[string]any{"access_token": tok, "token_type": "Bearer", "scope": strings.Join(scopes, " ")}
		if !ti.omitExpiresIn {
			body["expires_in"] = int(ti.life / time.Second)
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	ti.URL = srv.URL + "/realms/test/protocol/openid-connect/token"
	return ti
}

// tokens returns the tokens issued so far.
func (ti *tokenIssuer) tokens() []string {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return append([]string(nil), ti.issued...)
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
		q := make([]string, len(scopes))
		for i, sc := range scopes {
			q[i] = fmt.Sprintf("%q", sc)
		}
		s += "    scopes        = [" + strings.Join(q, ", ") + "]\n"
	}
	return s + "  }\n"
}

// seenRequest is what the recording proxy saw of one request.
type seenRequest struct {
	method, path, auth string
	header             http.Header
	status             int
	// reason is the body of a 401 or 403.
	reason string
}

// recordingProxy is a loopback reverse proxy in front of a management API that
// records the Authorization header and the other headers of every request,
// optionally holding each for a while.
type recordingProxy struct {
	URL   string
	delay time.Duration
	mu    sync.Mutex
	seen  []seenRequest
}

func newRecordingProxy(t *testing.T, upstream string, delay time.Duration) *recordingProxy {
	up, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{delay: delay}
	rp := &httputil.ReverseProxy{
		Rewrite:  func(pr *httputil.ProxyRequest) { pr.SetURL(up) },
		ErrorLog: log.New(io.Discard, "", 0),
		ModifyResponse: func(resp *http.Response) error {
			r := resp.Request
			var reason string
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
				b, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				resp.Body = io.NopCloser(bytes.NewReader(b))
				reason = string(b)
			}
			p.mu.Lock()
			p.seen = append(p.seen, seenRequest{method: r.Method, path: r.URL.EscapedPath(), auth: r.Header.Get("Authorization"),
				header: r.Header.Clone(), status: resp.StatusCode, reason: reason})
			p.mu.Unlock()
			return nil
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.delay > 0 {
			time.Sleep(p.delay)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *recordingProxy) requests() []seenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seenRequest(nil), p.seen...)
}

// checkAllBearer fails unless every request the proxy saw carried a bearer
// token (one of allowed, when given) and none carried basic auth.
func (p *recordingProxy) checkAllBearer(t *testing.T, allowed ...string) {
	t.Helper()
	seen := p.requests()
	if len(seen) == 0 {
		t.Fatal("the proxy saw no request")
	}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok["Bearer "+a] = true
	}
	for _, r := range seen {
		switch {
		case !strings.HasPrefix(r.auth, "Bearer "):
			t.Errorf("%s %s: Authorization scheme %q, want Bearer only", r.method, r.path, strings.SplitN(r.auth+" ", " ", 2)[0])
		case len(ok) > 0 && !ok[r.auth]:
			t.Errorf("%s %s: a bearer token the test did not issue", r.method, r.path)
		}
	}
	t.Logf("the broker saw %d requests, all with a bearer token and none with basic auth", len(seen))
}
