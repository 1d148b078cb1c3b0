package broker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/queuey/terraform-provider-queuey/internal/redact"
)

// Bearer tokens: the OAuth 2.0 client-credentials grant's tokens, shared by every client of the
// process with the same settings, fetched through a retry transport of their own and replaced
// before they expire; a JWT's expiry; and the failures of a fetch (TokenError).

// sharedToken is the process's token for one set of oauth2 settings; fetches are serialised.
type sharedToken struct {
	conf     *clientcredentials.Config
	client   *http.Client
	tokenURL string // without credentials, for errors

	mu        sync.Mutex
	tok       string
	refreshAt time.Time // zero: no known expiry
	failure   error     // a refusal by the token endpoint: final for this process
	// lastErr is the last fetch that failed without a refusal: its waiters share it.
	lastErr   error
	lastErrAt time.Time
	// lastDrop is when a token the broker refused was last dropped.
	lastDrop time.Time
}

// minDropInterval spaces out dropped tokens: when every token is refused, not every request
// fetches one.
const minDropInterval = 30 * time.Second

var sharedTokens = struct {
	sync.Mutex
	m map[string]*sharedToken
}{m: map[string]*sharedToken{}}

// sharedTokenFor returns the process-wide token source of cfg's oauth2 and TLS settings.
func sharedTokenFor(cfg Config, tokenBase *http.Transport) *sharedToken {
	o := cfg.OAuth2
	h := sha256.New()
	keys := make([]string, 0, len(o.EndpointParams))
	for k := range o.EndpointParams {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{o.TokenURL, o.ClientID, o.ClientSecret, strings.Join(o.Scopes, " "), fmt.Sprint(cfg.Insecure), cfg.CACertFile, cfg.RequestTimeout.String(), cfg.retryBudget().String(), fmt.Sprint(cfg.timing)}
	for _, k := range keys {
		parts = append(parts, k+"="+o.EndpointParams[k])
	}
	for _, p := range parts {
		_, _ = fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	key := hex.EncodeToString(h.Sum(nil))

	sharedTokens.Lock()
	defer sharedTokens.Unlock()
	if s, ok := sharedTokens.m[key]; ok {
		return s
	}
	params := url.Values{}
	for k, v := range o.EndpointParams {
		params.Set(k, v)
	}
	s := &sharedToken{
		conf: &clientcredentials.Config{
			ClientID: o.ClientID, ClientSecret: o.ClientSecret, TokenURL: o.TokenURL,
			Scopes: o.Scopes, EndpointParams: params,
		},
		// Connection errors and 5xx of the token endpoint are retried; its refusals (4xx) are not.
		client: &http.Client{
			Transport: newRetryTransport(tokenBase, tokenConfig(cfg)),
			Timeout:   cfg.maxRequestTime() + cfg.RequestTimeout,
		},
		tokenURL: redact.URL(o.TokenURL),
	}
	sharedTokens.m[key] = s
	return s
}

func (s *sharedToken) token(ctx context.Context) (string, error) {
	asked := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failure != nil {
		return "", s.failure
	}
	if s.lastErr != nil && !s.lastErrAt.Before(asked) {
		return "", s.lastErr // the fetch this caller waited for failed
	}
	now := time.Now()
	if s.tok != "" && (s.refreshAt.IsZero() || now.Before(s.refreshAt)) {
		return s.tok, nil
	}
	// An endpoint that did not answer within the budget is not asked a second way by oauth2.
	client := &http.Client{Transport: &finalAnswer{base: s.client.Transport}, Timeout: s.client.Timeout}
	tok, err := s.conf.Token(context.WithValue(ctx, oauth2.HTTPClient, client))
	if err != nil {
		terr := s.tokenError(err)
		if terr.Status >= 400 && terr.Status < 500 {
			s.failure = terr
		} else {
			s.lastErr, s.lastErrAt = terr, time.Now()
		}
		return "", terr
	}
	s.lastErr = nil
	s.tok = tok.AccessToken
	// The expiry is expires_in, or a JWT's exp when earlier: exp is what the broker checks.
	expiry := tok.Expiry
	if exp := jwtExpiry(tok.AccessToken); !exp.IsZero() && (expiry.IsZero() || exp.Before(expiry)) {
		expiry = exp
	}
	s.refreshAt = refreshTime(now, expiry)
	return s.tok, nil
}

// refreshTime is when to replace a token: a quarter of its lifetime early, at most a minute.
func refreshTime(now, expiry time.Time) time.Time {
	if expiry.IsZero() {
		return time.Time{}
	}
	early := min(max(expiry.Sub(now)/4, 0), time.Minute)
	return expiry.Add(-early)
}

// invalidate forgets tok unless replaced, and reports whether to retry (not within
// minDropInterval).
func (s *sharedToken) invalidate(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok != tok {
		return true // replaced meanwhile: try the newer one
	}
	if !s.lastDrop.IsZero() && time.Since(s.lastDrop) < minDropInterval {
		return false
	}
	s.tok = ""
	s.lastDrop = time.Now()
	return true
}

// TokenError is a failure to get an OAuth 2.0 token from the token endpoint.
type TokenError struct {
	// TokenURL is the token endpoint, without credentials.
	TokenURL string
	// Status is the token endpoint's HTTP status, or 0 when it did not answer.
	Status int
	// Code and Description are the OAuth 2.0 error and error_description.
	Code        string
	Description string
	Err         error
}

func (s *sharedToken) tokenError(err error) *TokenError {
	e := &TokenError{TokenURL: s.tokenURL}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		e.Code, e.Description = re.ErrorCode, re.ErrorDescription
		if re.Response != nil {
			e.Status = re.Response.StatusCode
		}
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	e.Err = err
	return e
}

func (e *TokenError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "getting an OAuth 2.0 token from the token endpoint %s failed: ", e.TokenURL)
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d", e.Status)
		if e.Code != "" {
			fmt.Fprintf(&b, ", error %q", e.Code)
		}
		if e.Description != "" {
			fmt.Fprintf(&b, " (%s)", strings.TrimSuffix(e.Description, "."))
		}
	} else if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("no token in the answer")
	}
	return b.String()
}

// jwtExpiry reads a JWT's exp claim without verifying it (the broker verifies tokens); zero when
// tok is not a JWT or has no positive exp. An unknown signing algorithm still yields the claims
// (ErrTokenUnverifiable).
func jwtExpiry(tok string) time.Time {
	claims := jwt.MapClaims{}
	_, _, err := jwt.NewParser(jwt.WithPaddingAllowed()).ParseUnverified(tok, claims)
	if err != nil && !errors.Is(err, jwt.ErrTokenUnverifiable) {
		return time.Time{}
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil || exp.Unix() <= 0 {
		return time.Time{}
	}
	return exp.Time
}

// tokenTransport is the transport to the token endpoint: the management API's TLS settings, but the
// system's CAs stay trusted beside the CA file (identity providers have public certificates) and no
// client certificate is sent.
func tokenTransport(cfg Config, base *http.Transport) *http.Transport {
	t := base.Clone()
	tc := t.TLSClientConfig.Clone()
	tc.Certificates = nil
	if cfg.CACertFile != "" {
		if pool, err := x509.SystemCertPool(); err == nil {
			if pem, err := os.ReadFile(cfg.CACertFile); err == nil && pool.AppendCertsFromPEM(pem) {
				tc.RootCAs = pool
			}
		}
	}
	t.TLSClientConfig = tc
	return t
}

// finalAnswer gives every later request of a token fetch the first no-answer or server error at
// once.
type finalAnswer struct {
	base http.RoundTripper
	err  error
	resp *http.Response
	body []byte
}

func (f *finalAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	if f.err != nil {
		return nil, f.err
	}
	if f.resp != nil {
		again := *f.resp
		again.Body = io.NopCloser(bytes.NewReader(f.body))
		again.Request = req
		return &again, nil
	}
	resp, err := f.base.RoundTrip(req)
	if err != nil {
		f.err = err
		return resp, err
	}
	if resp.StatusCode >= 500 {
		f.body, _ = io.ReadAll(io.LimitReader(resp.Body, bodyPeek))
		_ = resp.Body.Close()
		f.resp = resp
		again := *resp
		again.Body = io.NopCloser(bytes.NewReader(f.body))
		return &again, nil
	}
	return resp, nil
}

// tokenConfig is cfg for the token endpoint, whose answers write no contact note.
func tokenConfig(cfg Config) Config {
	cfg.ContactNotes = ""
	return cfg
}
