package provider

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
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
	// held waits until Release (see Hold), then forwards.
	held fault = "held"
	// status500 ... status504 answer with that status without forwarding.
	status500 fault = "500"
	status502 fault = "502"
	status503 fault = "503"
	status504 fault = "504"
)

// policy picks the fault for each request. The proxy calls it under its
// lock, so it may count what it saw.
type policy func(r *http.Request) fault

// always applies f to every request.
func always(f fault) policy { return func(*http.Request) fault { return f } }

// twoFaultsThenPass fails the first two attempts of every request, with the
// given faults in turn across requests, and forwards the third: the most the
// provider's 3 attempts absorb. Requests sent at the same time do not change
// that, since it counts attempts per request (method and URL).
func twoFaultsThenPass(fs ...fault) policy {
	next, attempts := -1, map[string]int{}
	return func(r *http.Request) fault {
		key := r.Method + " " + r.URL.String()
		if attempts[key]++; attempts[key]%3 == 0 {
			return pass
		}
		next++
		return fs[next%len(fs)]
	}
}

// passThenDrop forwards k requests, then drops every one after them.
func passThenDrop(k int) policy {
	return func(*http.Request) fault {
		if k--; k >= 0 {
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

	rp *httputil.ReverseProxy

	mu          sync.Mutex
	policy      policy
	delay       time.Duration
	records     []proxyRecord
	inflight    int
	maxInflight int
	held        int           // requests held since Hold
	release     chan struct{} // what they wait for
}

// newFaultProxy starts a fault proxy in front of the acceptance tests'
// management API, over HTTPS with tlsCfg (its certificates, client
// authentication; nil: plain HTTP), closed at cleanup.
func newFaultProxy(t *testing.T, tlsCfg *tls.Config) *faultProxy {
	t.Helper()
	testAccPreCheck(t)
	return proxyTo(t, strings.TrimRight(os.Getenv(EnvEndpoint), "/"), tlsCfg)
}

// recordIndex is the context key of the index of a forwarded request's record.
type recordIndex struct{}

// proxyTo starts a fault proxy in front of the management API at upstream,
// forwarding every request until a policy is set, closed at cleanup.
func proxyTo(t *testing.T, upstream string, tlsCfg *tls.Config) *faultProxy {
	t.Helper()
	up, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	up.User = nil
	p := &faultProxy{policy: always(pass), delay: 300 * time.Millisecond}
	quiet := log.New(io.Discard, "", 0)
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(up) }, // keeps the escaped path: %2F stays %2F
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
			// The upstream of a test is a local broker; its certificate is not what is tested.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: up.Scheme == "https"}, //nolint:gosec // test upstream
		},
		ModifyResponse: p.answered,
		ErrorLog:       quiet,
		// A lost answer, or a request the upstream does not take (a node's
		// port closed), gets its connection closed with no answer, as one
		// open to a node that stops does.
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
	}
	srv := httptest.NewUnstartedServer(p)
	srv.Config.ErrorLog = quiet
	// Every request's context ends with the test, before the cleanup that
	// closes the server waits for the requests held or hanging.
	srv.Config.BaseContext = func(net.Listener) context.Context { return t.Context() }
	if srv.TLS = tlsCfg; tlsCfg != nil {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	p.URL = srv.URL
	t.Cleanup(srv.Close)
	return p
}

// Set replaces the policy.
func (p *faultProxy) Set(pol policy) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.policy = pol
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
	return slices.Clone(p.records)
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

// Summary counts the requests by fault, for test logs: "12 requests [drop:2 pass:10]".
func (p *faultProxy) Summary() string {
	counts := map[fault]int{}
	recs := p.Records()
	for _, r := range recs {
		counts[r.Fault]++
	}
	return fmt.Sprintf("%d requests %s", len(recs), strings.TrimPrefix(fmt.Sprint(counts), "map")) // fmt sorts the keys
}

// begin records r with the fault the policy picks for it, and returns the
// record's index, the fault and what it waits for before it is forwarded:
// nothing for pass and lost, the delay for slow, Release for held, and what
// never comes for hang.
func (p *faultProxy) begin(r *http.Request) (int, fault, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.policy(r)
	p.inflight++
	p.maxInflight = max(p.maxInflight, p.inflight)
	p.records = append(p.records, proxyRecord{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Fault: f, Start: time.Now()})
	wait := make(chan struct{})
	switch f {
	case pass, lost:
		close(wait)
	case slow:
		time.AfterFunc(p.delay, func() { close(wait) })
	case held:
		return len(p.records) - 1, f, p.release
	}
	return len(p.records) - 1, f, wait
}

// edit changes the i-th record under the lock.
func (p *faultProxy) edit(i int, change func(*proxyRecord)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	change(&p.records[i])
}

// answered records the upstream's answer to a forwarded request (the body of
// a 401 or a 403 as its reason), and loses it when its fault says so.
func (p *faultProxy) answered(res *http.Response) error {
	i, _ := res.Request.Context().Value(recordIndex{}).(int)
	var reason []byte
	if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
		reason, _ = io.ReadAll(res.Body)
		res.Body = io.NopCloser(bytes.NewReader(reason))
	}
	var f fault
	p.edit(i, func(r *proxyRecord) { r.Status, r.Reason, f = res.StatusCode, string(reason), r.Fault })
	if f == lost {
		return errors.New("answer lost by the fault proxy")
	}
	return nil
}

// Hold sets a policy that forwards requests until after of method have
// gone through, then holds every request that arrives, whatever its method,
// until Release. The channel it returns is closed when the first request is
// held. A test arranges with it that an operation is under way and cannot go
// on before something happens to the node, however fast the machine is.
func (p *faultProxy) Hold(method string, after int) <-chan struct{} {
	reached, passed := make(chan struct{}), 0
	p.mu.Lock()
	p.held, p.release = 0, make(chan struct{}) // before the policy that holds requests on it
	p.mu.Unlock()
	p.Set(func(r *http.Request) fault {
		if passed < after {
			if r.Method == method {
				passed++
			}
			return pass
		}
		if p.held++; p.held == 1 {
			close(reached)
		}
		return held
	})
	return reached
}

// Release forwards every request again, the held ones too, and returns the
// number of requests held since Hold.
func (p *faultProxy) Release() int {
	p.Set(always(pass))
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.release)
	return p.held
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i, f, wait := p.begin(r)
	defer p.edit(i, func(rec *proxyRecord) { rec.End = time.Now(); p.inflight-- })
	if f == drop {
		panic(http.ErrAbortHandler) // the server closes the connection without an answer
	}
	if status, _ := strconv.Atoi(string(f)); status != 0 {
		p.edit(i, func(rec *proxyRecord) { rec.Status = status })
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"error":"injected","reason":"HTTP %d injected by the test proxy"}`, status)
		return
	}
	select { // answered records the answer
	case <-wait:
		p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), recordIndex{}, i)))
	case <-r.Context().Done(): // the client gave up, or the test ended
	}
}

// TestFaultProxy_holdsUntilRelease: the armed gate forwards requests until
// two PUTs went through, then holds the next request (a GET) from the
// upstream until Release, and forwards everything after that.
func TestFaultProxy_holdsUntilRelease(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method)
		mu.Unlock()
	}))
	t.Cleanup(up.Close)
	p := proxyTo(t, up.URL, nil)
	reached := p.Hold(http.MethodPut, 2)
	send := func(method string) error {
		req, err := http.NewRequest(method, p.URL+"/api/queues/%2F/q", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPut} {
		if err := send(m); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- send(http.MethodGet) }()
	select {
	case <-reached:
	case err := <-done:
		t.Fatalf("the request after two PUTs was not held (%v)", err)
	}
	mu.Lock()
	before := len(seen)
	mu.Unlock()
	if held := p.Release(); before != 3 || held != 1 {
		t.Fatalf("at the gate the upstream saw %d requests and the proxy held %d, want 3 and 1", before, held)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := send(http.MethodDelete); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 5 {
		t.Fatalf("after Release the upstream saw %d requests, want 5", len(seen))
	}
}
