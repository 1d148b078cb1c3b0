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
	// held waits until Release (see After), then forwards.
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
	held        int           // requests held since After
	waiting     func()        // called by each held request as it waits
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
	p := &faultProxy{policy: always(pass), delay: 300 * time.Millisecond, waiting: func() {}}
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

// locked runs f under the proxy's lock: every read or change of its fields
// but URL and rp goes through it.
func (p *faultProxy) locked(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}

// Set replaces the policy.
func (p *faultProxy) Set(pol policy) { p.locked(func() { p.policy = pol }) }

// SetDelay sets how long a slow request waits before it is forwarded.
func (p *faultProxy) SetDelay(d time.Duration) { p.locked(func() { p.delay = d }) }

// proxySeen is what the proxy has seen so far: a copy of its records, the
// largest number of requests it held at once, and the requests counted by
// method and URL (Attempts) and by fault (Faults). It prints as a summary
// for test logs: "12 requests [drop:2 pass:10]".
type proxySeen struct {
	Records     []proxyRecord
	MaxInflight int
	Attempts    map[string]int
	Faults      map[fault]int
}

// Seen returns what the proxy has seen so far.
func (p *faultProxy) Seen() proxySeen {
	s := proxySeen{Attempts: map[string]int{}, Faults: map[fault]int{}}
	p.locked(func() { s.Records, s.MaxInflight = slices.Clone(p.records), p.maxInflight })
	for _, r := range s.Records {
		s.Attempts[r.Method+" "+r.URL]++
		s.Faults[r.Fault]++
	}
	return s
}

// Records returns a copy of what the proxy has seen of each request.
func (p *faultProxy) Records() []proxyRecord { return p.Seen().Records }

func (s proxySeen) String() string {
	return fmt.Sprintf("%d requests %s", len(s.Records), strings.TrimPrefix(fmt.Sprint(s.Faults), "map")) // fmt sorts the keys
}

// After sets a policy that forwards requests until n of method (of any
// method when empty) have gone through, then gives f to every request that
// arrives, whatever its method. With f held, those requests wait for
// Release, and the channel After returns is closed when the first of them
// waits (past the point where it could have been forwarded): a test arranges
// with it that an operation is under way and cannot go on before something
// happens to the node, however fast the machine is.
func (p *faultProxy) After(method string, n int, f fault) <-chan struct{} {
	reached := make(chan struct{})
	p.locked(func() {
		p.held, p.waiting, p.release = 0, sync.OnceFunc(func() { close(reached) }), make(chan struct{})
		p.policy = func(r *http.Request) fault {
			if n == 0 {
				return f
			}
			if method == "" || r.Method == method {
				n--
			}
			return pass
		}
	})
	return reached
}

// Release forwards every request again, the held ones too, and returns the
// number of requests held since After.
func (p *faultProxy) Release() (held int) {
	p.locked(func() { p.policy, held = always(pass), p.held; close(p.release) })
	return held
}

// ServeHTTP records r with the fault the policy picks for it and applies it:
// drop and the statuses answer without the upstream; pass and lost forward
// at once, slow after the delay, held after Release, hang never.
func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var i int
	var f fault
	ready, waiting := make(chan struct{}), func() {}
	p.locked(func() {
		f, i = p.policy(r), len(p.records)
		p.inflight++
		p.maxInflight = max(p.maxInflight, p.inflight)
		p.records = append(p.records, proxyRecord{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Fault: f, Start: time.Now()})
		switch f {
		case pass, lost:
			close(ready)
		case slow:
			time.AfterFunc(p.delay, func() { close(ready) })
		case held:
			p.held++
			ready, waiting = p.release, p.waiting
		}
	})
	defer p.locked(func() { p.records[i].End = time.Now(); p.inflight-- })
	if f == drop {
		panic(http.ErrAbortHandler) // the server closes the connection without an answer
	}
	if status, _ := strconv.Atoi(string(f)); status != 0 {
		p.locked(func() { p.records[i].Status = status })
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"error":"injected","reason":"HTTP %d injected by the test proxy"}`, status)
		return
	}
	select {
	case <-ready:
	default: // not forwarded yet, it waits
		waiting()
		select {
		case <-ready:
		case <-r.Context().Done(): // the client gave up, or the test ended
			return
		}
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), recordIndex{}, i))) // answered records the answer
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
	p.locked(func() {
		p.records[i].Status, p.records[i].Reason, f = res.StatusCode, string(reason), p.records[i].Fault
	})
	if f == lost {
		return errors.New("answer lost by the fault proxy")
	}
	return nil
}

// TestFaultProxy_holdsUntilRelease: After(PUT, 2, held) forwards requests
// until two PUTs went through, then holds the next request (a GET) from the
// upstream until Release, and forwards everything after that. The proxy
// signals the hold only once the request waits, past where it could have
// been forwarded, so the upstream's count at that moment catches a held
// request forwarded instead of held. (One forwarded after it signalled is
// not caught: only a clock could tell.)
func TestFaultProxy_holdsUntilRelease(t *testing.T) {
	arrived := make(chan string, 10) // the methods the upstream saw, in order
	up := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { arrived <- r.Method }))
	t.Cleanup(up.Close)
	p := proxyTo(t, up.URL, nil)
	reached := p.After(http.MethodPut, 2, held)
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
		t.Fatalf("the request after two PUTs was not held: it was answered (%v) and the upstream saw %d requests, want 3", err, len(arrived))
	}
	if n := len(arrived); n != 3 {
		t.Fatalf("while the proxy held a request the upstream had seen %d requests, want 3: it was forwarded before Release", n)
	}
	if held := p.Release(); held != 1 {
		t.Fatalf("Release says %d requests were held, want 1", held)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := send(http.MethodDelete); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(arrived) > 0 {
		got = append(got, <-arrived)
	}
	if want := []string{"GET", "PUT", "PUT", "GET", "DELETE"}; !slices.Equal(got, want) {
		t.Fatalf("the upstream saw %v, want %v", got, want)
	}
}
