package brokertest

import (
	"fmt"
	"net/http"
)

// StampListings adds a queue seq-<n> to the vhost's n-th listing, to tell which request answered.
func (s *Server) StampListings() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listings.stamp = true
}

// HoldListings makes every listing wait, after its snapshot, until release closes; nil stops it.
func (s *Server) HoldListings(release chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listings.hold = release
}

// FailListings makes every queue listing answer status after its hold; 0 stops it.
func (s *Server) FailListings(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listings.status = status
}

// Listings returns the number of queue listing requests of vhost so far.
func (s *Server) Listings(vhost string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listings.count[vhost]
}

// CanceledListings returns the number of held listings whose client left before the answer.
func (s *Server) CanceledListings() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listings.canceled
}

// listQueues answers a queue listing with the queues as they were when it arrived.
func (s *Server) listQueues(w http.ResponseWriter, r *http.Request, vhost string) {
	s.mu.Lock()
	if s.listings.count == nil {
		s.listings.count = map[string]int64{}
	}
	s.listings.count[vhost]++
	qs, exists := s.queues[vhost]
	out := []map[string]any{}
	for _, q := range qs {
		out = append(out, s.render(vhost, q, r, true))
	}
	if s.listings.stamp {
		out = append(out, s.render(vhost, &Queue{Name: fmt.Sprintf("seq-%d", s.listings.count[vhost]), Type: "classic",
			Durable: true, Arguments: map[string]any{}, Messages: Count(0)}, r, true))
	}
	hold, status := s.listings.hold, s.listings.status
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			s.mu.Lock()
			s.listings.canceled++
			s.mu.Unlock()
			return
		}
	}
	switch {
	case status != 0:
		ErrorBody(w, status, "Object Not Found", "Not Found")
	case !exists:
		ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
	default:
		writeJSON(w, out)
	}
}
