package provider

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// holdProxy is a reverse proxy in front of one node's management API with a
// gate: once armed, it forwards requests until a given number of one method
// have gone through, then holds every request that arrives, whatever its
// method, until Release. A test arranges with it that an operation is under
// way and cannot go on before something happens to the node (e.g. the node
// has stopped), however fast or slow the machine is.
//
// A request the node does not take (its port closed) gets its connection
// closed with no answer, as a connection open to a node that stops does.
type holdProxy struct {
	URL string

	srv *httptest.Server
	rp  *httputil.ReverseProxy

	mu      sync.Mutex
	armed   bool
	method  string
	after   int // requests of method to forward before the gate holds
	passed  int // requests of method forwarded since Arm
	held    int // requests held since Arm
	reached chan struct{}
	release chan struct{}
}

// newHoldProxy starts a proxy to the management API at upstream, unarmed
// (it forwards everything), closed at cleanup.
func newHoldProxy(t *testing.T, upstream string) *holdProxy {
	t.Helper()
	up, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	up.User = nil
	quiet := log.New(io.Discard, "", 0)
	p := &holdProxy{}
	p.rp = &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.SetURL(up) }, // keeps %2F escaped
		ErrorLog:     quiet,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) { hijackClose(w) },
	}
	p.srv = httptest.NewUnstartedServer(p)
	p.srv.Config.ErrorLog = quiet
	p.srv.Start()
	p.URL = p.srv.URL
	t.Cleanup(func() {
		p.Release()
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
	return p
}

// Arm sets the gate: after requests of method have been forwarded, every
// request is held until Release. The channel it returns is closed when the
// first request is held.
func (p *holdProxy) Arm(method string, after int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.method, p.after, p.passed, p.held = true, method, after, 0, 0
	p.reached, p.release = make(chan struct{}), make(chan struct{})
	return p.reached
}

// Release lets the held requests go on and disarms the gate.
func (p *holdProxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed {
		close(p.release)
		p.armed = false
	}
}

// Held is the number of requests the gate held since Arm.
func (p *holdProxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// gate returns what r waits for before it is forwarded: nil for nothing.
func (p *holdProxy) gate(r *http.Request) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.armed:
		return nil
	case p.passed < p.after:
		if r.Method == p.method {
			p.passed++
		}
		return nil
	}
	p.held++
	if p.held == 1 {
		close(p.reached)
	}
	return p.release
}

func (p *holdProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if wait := p.gate(r); wait != nil {
		select {
		case <-wait:
		case <-r.Context().Done():
			return
		}
	}
	p.rp.ServeHTTP(w, r)
}

// TestHoldProxy_holdsUntilRelease: the armed gate forwards requests until
// two PUTs went through, then holds the next request (a GET) from the
// upstream until Release, and forwards everything after that.
func TestHoldProxy_holdsUntilRelease(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method)
		mu.Unlock()
	}))
	t.Cleanup(up.Close)
	p := newHoldProxy(t, up.URL)
	reached := p.Arm(http.MethodPut, 2)
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
	if before != 3 || p.Held() != 1 {
		t.Fatalf("at the gate the upstream saw %d requests and the proxy holds %d, want 3 and 1", before, p.Held())
	}
	p.Release()
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
