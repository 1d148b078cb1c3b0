package brokertest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// TokenEndpoint is a fake OAuth 2.0 client-credentials token endpoint: it checks the client
// credentials (basic auth or form) and hands out numbered tokens ("tok-1", ...), unsigned JWTs
// expiring JWTLife ahead, or what Mint makes. Set its fields before the first request; faults are scripted (Script).
type TokenEndpoint struct {
	*httptest.Server
	// ClientID and Secret are the credentials it accepts.
	ClientID, Secret string
	// ExpiresIn, in seconds, is sent when not 0.
	ExpiresIn int
	// JWTLife, when set, makes the tokens JWTs expiring that much later.
	JWTLife time.Duration
	// Delay, when set, holds every answer that long.
	Delay time.Duration
	// Mint, when set, makes each token from the request's form, instead of the numbered tokens or JWTLife's.
	Mint func(form url.Values) string

	mu       sync.Mutex
	hits     int
	lastForm string
	faults   *Server // scripted faults only: its own answers are never used
}

// NewTokenEndpoint starts a token endpoint accepting the client "terraform" with secret.
func NewTokenEndpoint(t testing.TB, secret string) *TokenEndpoint {
	te := &TokenEndpoint{ClientID: "terraform", Secret: secret, faults: &Server{}}
	te.Server = httptest.NewServer(http.HandlerFunc(te.serve))
	t.Cleanup(te.Close)
	return te
}

// Hits returns the number of token requests so far.
func (te *TokenEndpoint) Hits() int {
	te.mu.Lock()
	defer te.mu.Unlock()
	return te.hits
}

// LastForm returns the form of the last token request, encoded.
func (te *TokenEndpoint) LastForm() string {
	te.mu.Lock()
	defer te.mu.Unlock()
	return te.lastForm
}

// Script answers the next token requests with answers, in turn, before any credential is checked.
func (te *TokenEndpoint) Script(answers ...Answer) { te.faults.Script(nil, answers...) }

// Fail answers every token request with status.
func (te *TokenEndpoint) Fail(status int) {
	te.faults.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(status)
		return true
	})
}

func (te *TokenEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	te.mu.Lock()
	te.hits++
	n := te.hits
	te.lastForm = r.PostForm.Encode()
	te.mu.Unlock()
	time.Sleep(te.Delay)
	te.faults.mu.Lock()
	intercepts := append([]*interceptor(nil), te.faults.intercepts...)
	te.faults.mu.Unlock()
	for _, in := range intercepts {
		if in.f(w, r) {
			return
		}
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	w.Header().Set("Content-Type", "application/json")
	if id != te.ClientID || secret != te.Secret {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"Invalid client credentials"}`))
		return
	}
	body := map[string]any{"access_token": fmt.Sprintf("tok-%d", n), "token_type": "Bearer"}
	if te.JWTLife > 0 {
		body["access_token"] = UnsignedJWT(map[string]any{"n": n, "exp": time.Now().Add(te.JWTLife).Unix()})
	}
	if te.Mint != nil {
		body["access_token"] = te.Mint(r.PostForm)
	}
	if te.ExpiresIn > 0 {
		body["expires_in"] = te.ExpiresIn
	}
	_ = json.NewEncoder(w).Encode(body)
}

// UnsignedJWT is a JWT with claims and a fixed signature: the client reads exp, never verifies.
func UnsignedJWT(claims map[string]any) string {
	return JWT(map[string]any{"alg": "HS256", "typ": "JWT"}, claims)
}

// JWT is a token with the given header and claims and a fixed signature.
func JWT(header, claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(header) + "." + enc(claims) + ".c2ln"
}
