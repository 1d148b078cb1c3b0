// Package brokertest is an in-memory fake of the parts of the RabbitMQ management API the provider
// uses, for unit tests that need no broker. It answers as RabbitMQ 3.10, 4.0 or 4.3 does
// (AnswerAs), held to real brokers' answers by the contract test in internal/provider. Tests
// arrange what the broker holds, inject faults (Intercept), shape the listings (listings.go) and
// read back the requests. It also holds what tests and the bench share around a real broker: Admin
// (admin.go) and RawListener (listener.go).
package brokertest

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// New starts a fake management API with the vhost "/", closed at the end of the test.
func New(t testing.TB) *Server {
	s := newServer()
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// NewTLS is New over TLS with the server settings cfg.
func NewTLS(t testing.TB, cfg *tls.Config) *Server {
	s := newServer()
	s.TLS = cfg
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func newServer() *Server {
	s := &Server{
		vhosts:  map[string]string{"/": ""},
		queues:  map[string]map[string]*Queue{"/": {}},
		version: DefaultVersion,
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serveAPI))
	// TLS tests provoke refused handshakes: not worth a log line.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	return s
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.EscapedPath(); !strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/api/api/") {
		// A path outside the API with an escaped slash gets 400 without a body, else 404.
		if strings.Contains(strings.ToUpper(p), "%2F") {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
		return
	}
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/api/"), "/")
	for i, seg := range segs {
		if u, err := url.PathUnescape(seg); err == nil {
			segs[i] = u
		}
	}
	s.mu.Lock()
	rec := r.Method + " " + strings.Join(segs, " ")
	if r.URL.RawQuery != "" {
		rec += " ?" + r.URL.RawQuery
	}
	s.requests = append(s.requests, rec)
	intercepts := slices.Clone(s.intercepts)
	s.mu.Unlock()
	for _, in := range intercepts {
		if in.f(w, r) {
			return
		}
	}
	if len(segs) == 2 && segs[0] == "queues" && r.Method == http.MethodGet {
		s.listQueues(w, r, segs[1])
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.route(w, r, segs)
}

// route answers every request but a queue listing, under s.mu.
func (s *Server) route(w http.ResponseWriter, r *http.Request, segs []string) {
	get := r.Method == http.MethodGet
	switch {
	case len(segs) == 1 && get && s.node(w, r, segs[0]):
	case len(segs) == 2 && segs[0] == "vhosts" && get:
		t, ok := s.vhosts[segs[1]]
		if !ok {
			ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
			return
		}
		writeJSON(w, pick(s.renderVhost(segs[1], t), r))
	case len(segs) >= 2 && (segs[0] == userPolicies || segs[0] == operatorPolicies):
		s.policy(w, r, segs)
	case len(segs) == 3 && segs[0] == "queues":
		s.queueRequest(w, r, segs[1], segs[2])
	case len(segs) == 2 && segs[0] == "consumers" && get:
		if _, ok := s.vhosts[segs[1]]; !ok {
			ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
			return
		}
		out := []map[string]any{}
		for _, q := range s.queues[segs[1]] {
			for range q.Consumers {
				out = append(out, map[string]any{"queue": map[string]any{"name": q.Name}})
			}
		}
		writeJSON(w, out)
	default:
		ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
	}
}

// queueRequest answers a GET, PUT or DELETE of one queue, under s.mu.
func (s *Server) queueRequest(w http.ResponseWriter, r *http.Request, vhost, name string) {
	qs, ok := s.queues[vhost]
	if !ok && r.Method == http.MethodPut {
		ErrorBody(w, http.StatusNotFound, "not_found", "vhost_not_found")
		return
	}
	if !ok {
		ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
		return
	}
	q, exists := qs[name]
	switch r.Method {
	case http.MethodGet:
		if !exists {
			ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
			return
		}
		m := s.render(vhost, q, r, false)
		if s.noSingleCounts {
			delete(m, "messages")
		}
		writeJSON(w, m)
	case http.MethodPut:
		s.declare(w, r, qs, vhost, name)
	case http.MethodDelete:
		if !exists {
			ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
			return
		}
		query := r.URL.Query()
		if query.Get("if-empty") == "true" && (q.Messages == nil || *q.Messages > 0) {
			ErrorBody(w, http.StatusBadRequest, "bad_request", NotEmptyReason(vhost, name))
			return
		}
		if query.Get("if-unused") == "true" && q.Consumers > 0 {
			ErrorBody(w, http.StatusBadRequest, "bad_request", InUseReason(vhost, name))
			return
		}
		delete(qs, name)
		w.WriteHeader(http.StatusNoContent)
	default:
		ErrorBody(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method)
	}
}
