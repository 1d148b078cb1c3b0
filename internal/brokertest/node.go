package brokertest

import (
	"net/http"
	"sort"
)

// node answers, under s.mu, whoami, overview, nodes and vhosts; false for any other path.
func (s *Server) node(w http.ResponseWriter, r *http.Request, path string) bool {
	switch path {
	case "whoami":
		user, _, _ := r.BasicAuth()
		who := map[string]any{"name": user, "tags": []string{"administrator"}}
		if s.is4x() {
			who["is_internal_user"] = true
		}
		writeJSON(w, who)
	case "overview":
		if r.URL.Query().Get("columns") == "rabbitmq_version" {
			writeJSON(w, map[string]any{"rabbitmq_version": s.version.release()})
			return true
		}
		if !s.is4x() {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(Overview310))
			return true
		}
		writeJSON(w, pick(map[string]any{"default_queue_type": "classic"}, r))
	case "nodes":
		writeJSON(w, []map[string]any{pick(map[string]any{"name": DefaultNode, "running": true}, r)})
	case "vhosts":
		names := make([]string, 0, len(s.vhosts))
		for n := range s.vhosts {
			names = append(names, n)
		}
		sort.Strings(names)
		out := make([]map[string]any, 0, len(names))
		for _, n := range names {
			v := s.renderVhost(n, s.vhosts[n])
			if !s.is4x() { // 4.x answers every field whatever the columns
				v = pick(v, r)
			}
			out = append(out, v)
		}
		writeJSON(w, out)
	default:
		return false
	}
	return true
}
