package brokertest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// How the fake words its management API answers: errors, JSON, the columns asked for, and
// a queue or vhost as the version it answers as reports them.

// ErrorBody writes a management API error answer.
func ErrorBody(w http.ResponseWriter, status int, errText, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": errText, "reason": reason})
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

// renderVhost is the fake's answer for a vhost added with default queue type t ("" for none).
func (s *Server) renderVhost(name, t string) map[string]any {
	meta := map[string]any{"description": "", "tags": []string{}}
	if s.is4x() {
		meta["default_queue_type"] = s.vhostType(t)
	}
	return map[string]any{"name": name, "description": "", "tags": []string{}, "tracing": false,
		"default_queue_type": s.vhostType(t), "metadata": meta}
}
