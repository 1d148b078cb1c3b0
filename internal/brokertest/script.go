package brokertest

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Answer is one scripted answer (see Script).
type Answer struct {
	Status int
	Body   string
	// Drop closes the connection without an answer, as a node whose application stopped does.
	Drop bool
}

var Drop = Answer{Drop: true}

// Reply is the Answer status with body (a JSON text, or "").
func Reply(status int, body string) Answer { return Answer{Status: status, Body: body} }

// Script adds a fault answering the requests match accepts (all when nil) with answers, in turn.
func (s *Server) Script(match func(*http.Request) bool, answers ...Answer) (remove func()) {
	var mu sync.Mutex
	next := 0
	return s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if match != nil && !match(r) {
			return false
		}
		mu.Lock()
		i := next
		if i < len(answers) {
			next++
		}
		mu.Unlock()
		if i >= len(answers) {
			return false
		}
		answers[i].write(w)
		return true
	})
}

// Path matches requests whose escaped path below /api/ is p, e.g. "vhosts/%2F".
func Path(p string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.URL.EscapedPath() == "/api/"+p }
}

func (a Answer) write(w http.ResponseWriter) {
	if a.Drop {
		hijackClose(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.Status)
	_, _ = io.WriteString(w, a.Body)
}

// hijackClose closes the client's connection without an answer.
func hijackClose(w http.ResponseWriter) {
	if h, ok := w.(http.Hijacker); ok {
		if conn, _, err := h.Hijack(); err == nil {
			_ = conn.Close()
		}
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
