// Package brokertest is an in-memory fake of the parts of the RabbitMQ management API the provider
// uses, for unit tests that need no broker. It answers as RabbitMQ 3.10, 4.0 or 4.3 does
// (AnswerAs), held to real brokers' answers by the contract test in internal/provider. Tests
// arrange what the broker holds, inject faults (Intercept), shape the listings (listings.go) and
// read back the requests. It also holds what tests and the bench share around a real broker: Admin
// (admin.go) and RawListener (listener.go).
package brokertest

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Queue is a queue as the fake broker holds it.
type Queue struct {
	Name       string
	Type       string // "classic" unless set
	Durable    bool
	AutoDelete bool
	Exclusive  bool
	Arguments  map[string]any
	// Messages is reported as is; nil leaves the count out.
	Messages  *int64
	Consumers int
	// State is reported as is ("down": the node is down); Node defaults to DefaultNode.
	State string
	Node  string
}

// Server is a fake management API, holding the vhost "/" at first.
type Server struct {
	*httptest.Server

	mu         sync.Mutex
	vhosts     map[string]string            // name → default queue type, "" for none
	queues     map[string]map[string]*Queue // vhost → name → queue
	requests   []string
	intercepts []*interceptor
	listings   listings // see listings.go
	conns      int
	// amqpQueues holds the messages of the queues for the AMQP port (amqp_server.go).
	amqpQueues map[queueKey]*amqpQueue
	// noSingleCounts: a GET of one queue leaves out its message count, as 3.10 does.
	noSingleCounts bool
	version        Version // see AnswerAs

	// policies are the vhosts' user and operator policies (policies.go).
	policies policyStore
}

// interceptor is one fault installed by Intercept.
type interceptor struct {
	f func(w http.ResponseWriter, r *http.Request) bool
}

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

// NoSingleQueueCounts makes a GET of one queue leave out its message count, as 3.10 does.
func (s *Server) NoSingleQueueCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noSingleCounts = true
}

// Conns returns the number of connections the fake accepted so far.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Count returns a pointer to n, for Queue.Messages.
func Count(n int64) *int64 { return &n }

// AddVhost adds a vhost with a default queue type ("" for none).
func (s *Server) AddVhost(name, defaultQueueType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vhosts[name] = defaultQueueType
	if s.queues[name] == nil {
		s.queues[name] = map[string]*Queue{}
	}
}

// RemoveVhost deletes a vhost and its queues.
func (s *Server) RemoveVhost(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.vhosts, name)
	delete(s.queues, name)
	delete(s.policies[userPolicies], name)
	delete(s.policies[operatorPolicies], name)
}

// PutQueue adds or replaces a queue of vhost, which must exist.
func (s *Server) PutQueue(vhost string, q Queue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.Type == "" {
		q.Type = "classic"
	}
	if q.Arguments == nil {
		q.Arguments = map[string]any{}
	}
	s.queues[vhost][q.Name] = &q
}

// RemoveQueue removes a queue of vhost, as someone else deleting it would.
func (s *Server) RemoveQueue(vhost, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.queues[vhost], name)
	delete(s.amqpQueues, queueKey{vhost, name})
}

// Queue returns a queue of vhost, if it exists.
func (s *Server) Queue(vhost, name string) (Queue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[vhost][name]
	if !ok {
		return Queue{}, false
	}
	return *q, true
}

// QueueNames returns the names of the queues of vhost, sorted.
func (s *Server) QueueNames(vhost string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n := range s.queues[vhost] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Intercept adds a fault f, seeing requests before the fake; true means f answered. The result
// removes f.
func (s *Server) Intercept(f func(w http.ResponseWriter, r *http.Request) bool) (remove func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := &interceptor{f: f}
	s.intercepts = append(s.intercepts, in)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.intercepts = slices.DeleteFunc(s.intercepts, func(x *interceptor) bool { return x == in })
	}
}

// FailDelete makes every DELETE of the queue name fail with status; the queue stays.
func (s *Server) FailDelete(name string, status int, errText, reason string) {
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodDelete || !strings.HasSuffix(r.URL.EscapedPath(), "/"+url.PathEscape(name)) {
			return false
		}
		ErrorBody(w, status, errText, reason)
		return true
	})
}

// Requests returns the requests received: "DELETE queues / orders.dead ?if-empty=true".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// RequestsMatching returns the requests that start with prefix.
func (s *Server) RequestsMatching(prefix string) []string {
	var out []string
	for _, r := range s.Requests() {
		if strings.HasPrefix(r, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// ErrorBody writes a management API error answer.
func ErrorBody(w http.ResponseWriter, status int, errText, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": errText, "reason": reason})
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

// render is q's answer to r: the columns r asks for, the count only with enable_queue_totals.
func (s *Server) render(vhost string, q *Queue, r *http.Request, listing bool) map[string]any {
	totals := r.URL.Query().Get("enable_queue_totals") == "true"
	m := map[string]any{
		"name": q.Name, "vhost": vhost, "type": q.Type, "durable": q.Durable, "auto_delete": q.AutoDelete,
		"exclusive": q.Exclusive, "arguments": q.Arguments, "consumers": q.Consumers,
	}
	if q.Messages != nil && totals {
		m["messages"] = *q.Messages
	}
	m["state"] = q.State
	if q.State == "" {
		m["state"] = s.runningState(totals, listing)
		m["node"] = DefaultNode
	}
	if q.Node != "" {
		m["node"] = q.Node
	}
	return pick(m, r)
}

// pick keeps of m the columns r asks for (columns=a,b.c keeps a and b), or all.
func pick(m map[string]any, r *http.Request) map[string]any {
	cols := r.URL.Query().Get("columns")
	if cols == "" {
		return m
	}
	out := map[string]any{}
	for c := range strings.SplitSeq(cols, ",") {
		c, _, _ = strings.Cut(c, ".")
		if v, ok := m[c]; ok {
			out[c] = v
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
