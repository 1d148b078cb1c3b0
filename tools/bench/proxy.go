package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// countingProxy sits before the management API on loopback, counting connections and requests by
// kind, with the broker's time.
type countingProxy struct {
	srv   *http.Server
	ln    net.Listener
	conns atomic.Int64

	mu    sync.Mutex
	kinds map[string]*kindStats
}

type kindStats struct {
	count int
	total time.Duration
	bytes int64
}

// counters is a snapshot of the proxy's counters.
type counters struct {
	conns int64
	kinds map[string]kindStats
}

func (c counters) requests() int {
	n := 0
	for _, k := range c.kinds {
		n += k.count
	}
	return n
}

// bytes is the size of the answers received, all kinds together.
func (c counters) bytes() int64 {
	var n int64
	for _, k := range c.kinds {
		n += k.bytes
	}
	return n
}

// sub returns the counts since an earlier snapshot.
func (c counters) sub(earlier counters) counters {
	out := counters{conns: c.conns - earlier.conns, kinds: map[string]kindStats{}}
	for name, k := range c.kinds {
		e := earlier.kinds[name]
		if d := (kindStats{count: k.count - e.count, total: k.total - e.total, bytes: k.bytes - e.bytes}); d.count > 0 {
			out.kinds[name] = d
		}
	}
	return out
}

func startProxy(upstream string) (*countingProxy, error) {
	target, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{ln: ln, kinds: map[string]*kindStats{}}
	transport := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport: transport,
		ModifyResponse: func(resp *http.Response) error {
			start, _ := resp.Request.Context().Value(startKey{}).(time.Time)
			kind := kindOf(resp.Request)
			resp.Body = &countingBody{ReadCloser: resp.Body, done: func(n int64) { p.record(kind, time.Since(start), n) }}
			return nil
		},
	}
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), startKey{}, time.Now())))
		}),
		ReadHeaderTimeout: time.Minute,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				p.conns.Add(1)
			}
		},
	}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *countingProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *countingProxy) Close() { _ = p.srv.Close() }

func (p *countingProxy) record(kind string, d time.Duration, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.kinds[kind]
	if k == nil {
		k = &kindStats{}
		p.kinds[kind] = k
	}
	k.count++
	k.total += d
	if n > 0 {
		k.bytes += n
	}
}

func (p *countingProxy) snapshot() counters {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := counters{conns: p.conns.Load(), kinds: map[string]kindStats{}}
	for name, k := range p.kinds {
		out.kinds[name] = *k
	}
	return out
}

// kindOf names a request by method and path shape, e.g. "GET queues/{vhost}".
func kindOf(r *http.Request) string {
	parts := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/api/"), "/")
	shape := parts[0]
	switch len(parts) {
	case 1:
	case 2:
		shape += "/{vhost}"
	default:
		shape += "/{vhost}/{name}"
		if len(parts) > 3 {
			shape += "/" + strings.Join(parts[3:], "/")
		}
	}
	return r.Method + " " + shape
}

func sortedKinds(m map[string]kindStats) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type startKey struct{}

// countingBody records the answer's size and the time until it was read whole.
type countingBody struct {
	io.ReadCloser
	n    int64
	once sync.Once
	done func(int64)
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *countingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.done(b.n) })
	return err
}
