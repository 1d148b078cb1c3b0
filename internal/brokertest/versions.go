package brokertest

// Answers recorded from real nodes: RabbitMQ 3.10.8 (Debian 12), 4.0.5
// (Debian trixie) and 4.3.6 (Debian forky), where the versions differ or
// where the provider reads the wording. The fake answers with them; tests
// script them (Script) where the fake does not model the cause (users,
// permissions, a node that stops or starts).
const (
	// ObjectNotFound is every version's 404 body for a vhost or queue that
	// does not exist.
	ObjectNotFound = `{"error":"Object Not Found","reason":"Not Found"}`
	// NotFound43 is 4.3's 404 body to a user without access to the vhost
	// (3.10 and 4.0 answer NotVhostUser, a 401).
	NotFound43 = `{"error":"not_found","reason":"Not Found"}`
	// LoginFailed310 (3.10) and LoginFailed4x (4.0, 4.3) answer a wrong
	// password, with status 401.
	LoginFailed310 = `{"error":"not_authorized","reason":"Login failed"}`
	LoginFailed4x  = `{"error":"not_authorized","reason":"Not_Authorized"}`
	// NotManagement answers a user without the management tag (401).
	NotManagement = `{"error":"not_authorised","reason":"Not management user"}`
	// NotVhostUser answers a user without access to the vhost on 3.10 and
	// 4.0 (401).
	NotVhostUser = `{"error":"not_authorised","reason":"User not authorised to access virtual host"}`
	// NotAdministrator answers a management user's GET of one vhost (401).
	NotAdministrator = `{"error":"not_authorised","reason":"Not administrator user"}`
	// AccessRefused answers a user whose permissions do not match (401).
	AccessRefused = `{"error":"access_refused","reason":"Access refused."}`
	// NotEmpty43 is 4.3's answer to a guarded delete of an empty queue for a
	// moment after start_app (the queue's process has not counted its
	// messages yet); it is also every version's wording for a queue that
	// holds messages (see NotEmptyReason).
	NotEmpty43 = `{"error":"bad_request","reason":"queue 'q' in vhost '/' not empty"}`
	// NoDefaultQueueType310 is what 3.10 reports as the default_queue_type of
	// a vhost that sets none (4.x reports the node's, "classic" by default).
	NoDefaultQueueType310 = "undefined"
	// Overview310 is 3.10's answer to /api/overview?columns=default_queue_type:
	// it has no such column.
	Overview310 = `[]`
	// StoppedBySupervisor is the 404 a declaration gets while the queue's
	// node restarts (its process is down).
	StoppedBySupervisor = `{"error":"Object Not Found","reason":"process is stopped by supervisor"}`
)

// NotEmptyReason is the reason of a guarded delete (if-empty=true) refused
// because the queue holds messages, on 3.10 as on 4.3.
func NotEmptyReason(vhost, name string) string {
	return "queue '" + name + "' in vhost '" + vhost + "' not empty"
}

// InUseReason is the reason of a guarded delete (if-unused=true) refused
// because the queue has a consumer (3.10).
func InUseReason(vhost, name string) string {
	return "queue '" + name + "' in vhost '" + vhost + "' in use"
}

// Version is a RabbitMQ version whose answers the fake gives where the
// versions differ (see AnswerAs).
type Version string

// The versions the fake models.
const (
	V310 Version = "3.10"
	V40  Version = "4.0"
	V43  Version = "4.3"
)

// Versions are the versions the fake models, oldest first.
var Versions = []Version{V310, V40, V43}

// AnswerAs makes the fake answer as RabbitMQ v does where the versions
// differ:
//   - a vhost that sets no default queue type: "undefined" on 3.10, the
//     node's ("classic") on 4.x, also in its metadata;
//   - /api/overview?columns=default_queue_type: [] on 3.10, the node's on 4.x;
//   - a GET of one queue with enable_queue_totals: without its message count
//     on 3.10 (NoSingleQueueCounts), with it on 4.x;
//   - a running queue's state: "live" on 3.10 except in a listing with
//     totals, "running" on 4.x;
//   - a declaration without x-queue-type: recorded with x-queue-type classic
//     on 4.x;
//   - /api/whoami: is_internal_user on 4.x.
//
// Without AnswerAs the fake answers as 3.10 does, except that a GET of one
// queue has its message count and a running queue is "running".
func (s *Server) AnswerAs(v Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
	s.noSingleCounts = v == V310
}

// is4x reports whether the fake answers as RabbitMQ 4.x.
func (s *Server) is4x() bool { return s.version == V40 || s.version == V43 }

// vhostType is what the fake reports as the default queue type of a vhost
// that was added with t ("" for none).
func (s *Server) vhostType(t string) string {
	switch {
	case t != "":
		return t
	case s.is4x():
		return "classic"
	}
	return NoDefaultQueueType310
}

// runningState is the state a working queue is reported in, by a request
// for totals (enable_queue_totals) or not, in a listing or not.
func (s *Server) runningState(totals, listing bool) string {
	if s.version == V310 && (!totals || !listing) {
		return "live"
	}
	return "running"
}
