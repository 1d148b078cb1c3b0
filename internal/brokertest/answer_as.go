package brokertest

// Where RabbitMQ versions answer differently, the fake answers as the version AnswerAs set
// (the recorded answers and the versions themselves are in versions.go).

// AnswerAs makes the fake answer as RabbitMQ v does where versions differ:
//
//   - a vhost that sets no default queue type: "undefined" on 3.10, the node's ("classic") on 4.x,
//     also in its metadata;
//   - /api/overview?columns=default_queue_type: [] on 3.10, the node's on 4.x;
//   - a GET of one queue with totals: no message count on 3.10;
//   - a running queue's state: "live" on 3.10 except in a listing with totals, "running" on 4.x;
//   - a declaration without x-queue-type: recorded as classic on 4.x;
//   - /api/whoami: is_internal_user on 4.x;
//   - over AMQP, the 403 of a queue the user may not read: "access to queue ..." on 3.10, "read
//     access to queue ..." on 4.x.
func (s *Server) AnswerAs(v Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
	s.noSingleCounts = v == V310
}

// is4x reports whether the fake answers as RabbitMQ 4.x.
func (s *Server) is4x() bool { return s.version == V40 || s.version == V43 }

// vhostType is the default queue type reported for a vhost added with t ("" for none).
func (s *Server) vhostType(t string) string {
	switch {
	case t != "":
		return t
	case s.is4x():
		return "classic"
	}
	return NoDefaultQueueType310
}

// runningState is a working queue's state, by whether the request asks totals and is a listing.
func (s *Server) runningState(totals, listing bool) string {
	if s.version == V310 && (!totals || !listing) {
		return "live"
	}
	return "running"
}
