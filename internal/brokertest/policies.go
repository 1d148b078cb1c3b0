package brokertest

import (
	"encoding/json"
	"net/http"
	"sort"
)

// SetPolicy adds or replaces a user policy of vhost, as PUT /api/policies/{vhost}/{name} does.
func (s *Server) SetPolicy(vhost string, p Policy) { s.setPolicy(userPolicies, vhost, p) }

// SetOperatorPolicy adds or replaces an operator policy of vhost.
func (s *Server) SetOperatorPolicy(vhost string, p Policy) { s.setPolicy(operatorPolicies, vhost, p) }

// RemovePolicy removes a user policy of vhost, as someone else deleting it would.
func (s *Server) RemovePolicy(vhost, name string) { s.removePolicy(userPolicies, vhost, name) }

// RemoveOperatorPolicy removes an operator policy of vhost.
func (s *Server) RemoveOperatorPolicy(vhost, name string) {
	s.removePolicy(operatorPolicies, vhost, name)
}

func (s *Server) setPolicy(kind, vhost string, p Policy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putPolicy(kind, vhost, p)
}

func (s *Server) removePolicy(kind, vhost, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.policies[kind][vhost], name)
}

// putPolicy stores p under s.mu and reports whether it replaced one.
func (s *Server) putPolicy(kind, vhost string, p Policy) bool {
	if p.ApplyTo == "" {
		p.ApplyTo = "all"
	}
	if p.Definition == nil {
		p.Definition = map[string]any{}
	}
	if s.policies == nil {
		s.policies = policyStore{}
	}
	if s.policies[kind] == nil {
		s.policies[kind] = map[string]map[string]Policy{}
	}
	if s.policies[kind][vhost] == nil {
		s.policies[kind][vhost] = map[string]Policy{}
	}
	_, replaced := s.policies[kind][vhost][p.Name]
	s.policies[kind][vhost][p.Name] = p
	return replaced
}

// policy answers, under s.mu, segs = [kind, vhost] (the listing) or [kind, vhost, name].
func (s *Server) policy(w http.ResponseWriter, r *http.Request, segs []string) {
	kind, vhost := segs[0], segs[1]
	_, vhostExists := s.vhosts[vhost]
	if len(segs) == 2 && r.Method == http.MethodGet {
		if !vhostExists {
			ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
			return
		}
		names := make([]string, 0, len(s.policies[kind][vhost]))
		for n := range s.policies[kind][vhost] {
			names = append(names, n)
		}
		sort.Strings(names)
		out := make([]map[string]any, 0, len(names))
		for _, n := range names {
			out = append(out, renderPolicy(vhost, s.policies[kind][vhost][n]))
		}
		writeJSON(w, out)
		return
	}
	if len(segs) != 3 {
		ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
		return
	}
	p, exists := s.policies[kind][vhost][segs[2]]
	switch r.Method {
	case http.MethodGet:
		if !exists {
			ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
			return
		}
		writeJSON(w, renderPolicy(vhost, p))
	case http.MethodPut:
		s.putPolicyRequest(w, r, kind, vhost, segs[2], vhostExists)
	case http.MethodDelete:
		if !exists {
			ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
			return
		}
		delete(s.policies[kind][vhost], segs[2])
		w.WriteHeader(http.StatusNoContent)
	default:
		ErrorBody(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method)
	}
}

// putPolicyRequest answers a PUT of a policy as RabbitMQ does: 201 created, 204 replaced, 404 in
// a missing vhost, 400 for a body without a pattern or definition or with an apply-to the version
// does not know; apply-to defaults to "all".
func (s *Server) putPolicyRequest(w http.ResponseWriter, r *http.Request, kind, vhost, name string, vhostExists bool) {
	if !vhostExists {
		ErrorBody(w, http.StatusNotFound, "not_found", "vhost_not_found")
		return
	}
	var body struct {
		Pattern    *string        `json:"pattern"`
		ApplyTo    *string        `json:"apply-to"`
		Priority   int            `json:"priority"`
		Definition map[string]any `json:"definition"`
	}
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil || body.Pattern == nil || body.Definition == nil {
		ErrorBody(w, http.StatusBadRequest, "bad_request", "a policy needs a pattern and a definition")
		return
	}
	appliesTo := "all"
	if body.ApplyTo != nil {
		appliesTo = *body.ApplyTo
	}
	if reason, ok := s.applyToRefused(appliesTo); ok {
		ErrorBody(w, http.StatusBadRequest, "bad_request", reason)
		return
	}
	p := Policy{Name: name, Pattern: *body.Pattern, ApplyTo: appliesTo, Priority: body.Priority, Definition: body.Definition}
	if s.putPolicy(kind, vhost, p) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// renderPolicy is a policy as RabbitMQ lists it (3.10, 4.0 and 4.3 alike).
func renderPolicy(vhost string, p Policy) map[string]any {
	return map[string]any{"vhost": vhost, "name": p.Name, "pattern": p.Pattern, "apply-to": p.ApplyTo,
		"definition": p.Definition, "priority": p.Priority}
}

// applyToRefused is the reason the broker's version refuses apply-to with, if it does: 3.10 knows
// queues, exchanges and all; 4.x also the queue types.
func (s *Server) applyToRefused(appliesTo string) (string, bool) {
	switch appliesTo {
	case "queues", "exchanges", "all":
		return "", false
	case "classic_queues", "quorum_queues", "streams":
		if s.is4x() {
			return "", false
		}
	}
	if !s.is4x() {
		return "Validation failed\n\napply-to '" + appliesTo + "' unrecognised; should be 'queues', 'exchanges' or 'all'\n", true
	}
	return "Validation failed\n\napply-to '" + appliesTo + "' unrecognised; should be one of: 'queues', 'classic_queues',  " +
		"'quorum_queues', 'streams', 'exchanges', or 'all'\n", true
}
