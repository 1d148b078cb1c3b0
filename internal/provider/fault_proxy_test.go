package provider

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fault is what the fault proxy does with one request, named as the logs
// show it.
type fault string

const (
	// pass forwards the request to the management API.
	pass fault = "pass"
	// drop closes the connection without forwarding the request or answering.
	drop fault = "drop"
	// lost forwards the request, then closes the connection without passing
	// the answer on: the broker acted, the client never hears of it.
	lost fault = "lost"
	// hang holds the request without answering until the client gives up.
	hang fault = "hang"
	// slow waits the proxy's delay, then forwards.
	slow fault = "slow"
	// status500 ... status504 answer with that status without forwarding.
	status500 fault = "500"
	status502 fault = "502"
	status503 fault = "503"
	status504 fault = "504"
)

// policy picks the fault for a request: the n-th (0-based) since the policy
// was set, and the same-th among those with the same method and URL (the
// attempts of one request share them).
type policy func(n, sameN int) fault

// always applies f to every request.
func always(f fault) policy { return func(int, int) fault { return f } }

// twoFaultsThenPass fails the first two attempts of every request, with the
// given faults in turn across requests, and forwards the third: the most the
// provider's 3 attempts absorb. Requests sent at the same time do not change
// that, since it counts attempts per request (method and URL).
func twoFaultsThenPass(fs ...fault) policy {
	var mu sync.Mutex
	next := 0
	return func(_, sameN int) fault {
		if sameN%3 == 2 {
			return pass
		}
		mu.Lock()
		defer mu.Unlock()
		f := fs[next%len(fs)]
		next++
		return f
	}
}

// passThenDrop forwards k requests, then drops every one after them.
func passThenDrop(k int) policy {
	return func(n, _ int) fault {
		if n < k {
			return pass
		}
		return drop
	}
}

// proxyRecord is what the proxy saw of one request.
type proxyRecord struct {
	// Method and URL (path and query as sent) identify the request.
	Method, URL string
	Fault       fault
	Header      http.Header
	// Status is the answer's status, 0 when there was none; Reason is the
	// body of a 401 or a 403.
	Status     int
	Reason     string
	Start, End time.Time
}

// faultProxy is a reverse proxy on a random loopback port in front of the
// management API that injects faults chosen by its policy and records every
// request.
type faultProxy struct {
	URL string

	t        *testing.T
	srv      *httptest.Server
	rp       *httputil.ReverseProxy
	stop     chan struct{}
	stopOnce sync.Once

	mu          sync.Mutex
	policy      policy
	n           int            // requests since the policy was set
	sameN       map[string]int // the same, by method and URL
	delay       time.Duration
	records     []proxyRecord
	inflight    int
	maxInflight int
	conns       int
}

// newFaultProxy starts a fault proxy in front of the acceptance tests'
// management API, over HTTPS with tlsCfg (its certificates, client
// authentication; nil: plain HTTP), closed at cleanup.
func newFaultProxy(t *testing.T, tlsCfg *tls.Config) *faultProxy {
	t.Helper()
	testAccPreCheck(t)
	return proxyTo(t, strings.TrimRight(os.Getenv(EnvEndpoint), "/"), tlsCfg)
}

// proxyTo starts a fault proxy in front of the management API at upstream,
// forwarding every request until a policy is set, closed at cleanup.
func proxyTo(t *testing.T, upstream string, tlsCfg *tls.Config) *faultProxy {
	t.Helper()
	up, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	up.User = nil
	p := &faultProxy{t: t, stop: make(chan struct{}), policy: always(pass), sameN: map[string]int{}, delay: 300 * time.Millisecond}
	quiet := log.New(io.Discard, "", 0)
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up) // keeps the escaped path: %2F stays %2F
		},
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
			// The upstream of a test is a local broker; its certificate is not what is tested.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: up.Scheme == "https"}, //nolint:gosec // test upstream
		},
		ErrorLog: quiet,
	}
	p.srv = httptest.NewUnstartedServer(p)
	p.srv.Config.ErrorLog = quiet
	p.srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			p.mu.Lock()
			p.conns++
			p.mu.Unlock()
		}
	}
	if tlsCfg != nil {
		p.srv.TLS = tlsCfg
		p.srv.StartTLS()
	} else {
		p.srv.Start()
	}
	p.URL = p.srv.URL
	t.Cleanup(p.Close)
	return p
}

// Close releases held requests and stops the proxy.
func (p *faultProxy) Close() {
	p.stopOnce.Do(func() {
		close(p.stop)
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
}

// Set replaces the policy; its request numbers start again at 0.
func (p *faultProxy) Set(pol policy) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.policy, p.n, p.sameN = pol, 0, map[string]int{}
}

// SetDelay sets how long a slow request waits before it is forwarded.
func (p *faultProxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Records returns a copy of what the proxy has seen.
func (p *faultProxy) Records() []proxyRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxyRecord(nil), p.records...)
}

// Conns is the number of connections accepted, TLS handshakes that failed
// included.
func (p *faultProxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns
}

// MaxInflight is the largest number of requests the proxy held at once.
func (p *faultProxy) MaxInflight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxInflight
}

// Attempts counts the requests by method and URL.
func (p *faultProxy) Attempts() map[string]int {
	out := map[string]int{}
	for _, r := range p.Records() {
		out[r.Method+" "+r.URL]++
	}
	return out
}

// Summary counts the requests by fault, for test logs.
func (p *faultProxy) Summary() string {
	counts := map[fault]int{}
	recs := p.Records()
	for _, r := range recs {
		counts[r.Fault]++
	}
	var parts []string
	for f, n := range counts {
		parts = append(parts, fmt.Sprintf("%s=%d", f, n))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d requests (%s)", len(recs), strings.Join(parts, " "))
}

func (p *faultProxy) begin(r *http.Request) (int, fault, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := r.Method + " " + r.URL.String()
	f := p.policy(p.n, p.sameN[key])
	p.n++
	p.sameN[key]++
	p.inflight++
	if p.inflight > p.maxInflight {
		p.maxInflight = p.inflight
	}
	p.records = append(p.records, proxyRecord{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Fault: f, Start: time.Now()})
	return len(p.records) - 1, f, p.delay
}

func (p *faultProxy) end(i, status int, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	p.records[i].Status, p.records[i].Reason = status, reason
	p.records[i].End = time.Now()
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i, f, delay := p.begin(r)
	status, reason := 0, ""
	defer func() { p.end(i, status, reason) }()
	switch f {
	case drop:
		hijackClose(w)
	case lost:
		rec := httptest.NewRecorder()
		p.rp.ServeHTTP(rec, r)
		status = rec.Code
		hijackClose(w)
	case hang:
		select {
		case <-r.Context().Done():
		case <-p.stop:
		}
	case status500, status502, status503, status504:
		status, _ = strconv.Atoi(string(f))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"error":"injected","reason":"HTTP %d injected by the test proxy"}`, status)
	default:
		if f == slow {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			case <-p.stop:
				return
			}
		}
		sw := &statusWriter{ResponseWriter: w}
		p.rp.ServeHTTP(sw, r)
		status, reason = sw.status, sw.reason.String()
	}
}

// hijackClose closes the client's connection without an answer.
func hijackClose(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(fmt.Sprintf("fault proxy cannot hijack the connection: %v", err))
	}
	_ = conn.Close()
}

// statusWriter records the status of an answer, and the body of a 401 or a 403.
type statusWriter struct {
	http.ResponseWriter
	status int
	reason strings.Builder
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if s.status == http.StatusUnauthorized || s.status == http.StatusForbidden {
		s.reason.Write(b)
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
