package brokertest

// Answers recorded from RabbitMQ 3.10.8, 4.0.5 and 4.3.6; tests Script those the fake does not
// model.
const (
	// ObjectNotFound is every version's 404 body for a vhost or queue that does not exist.
	ObjectNotFound = `{"error":"Object Not Found","reason":"Not Found"}`
	// NotFound43 is 4.3's 404 to a user without access to the vhost (3.10, 4.0: NotVhostUser).
	NotFound43 = `{"error":"not_found","reason":"Not Found"}`
	// LoginFailed310 (3.10) and LoginFailed4x (4.0, 4.3) answer a wrong password (401).
	LoginFailed310 = `{"error":"not_authorized","reason":"Login failed"}`
	LoginFailed4x  = `{"error":"not_authorized","reason":"Not_Authorized"}`
	// NotManagement answers a user without the management tag (401).
	NotManagement = `{"error":"not_authorised","reason":"Not management user"}`
	// NotVhostUser answers a user without access to the vhost on 3.10 and 4.0 (401).
	NotVhostUser = `{"error":"not_authorised","reason":"User not authorised to access virtual host"}`
	// NotAdministrator answers a management user's GET of one vhost (401).
	NotAdministrator = `{"error":"not_authorised","reason":"Not administrator user"}`
	// AccessRefused answers a user whose permissions do not match (401).
	AccessRefused = `{"error":"access_refused","reason":"Access refused."}`
	// NotEmpty43 is 4.3's answer to a guarded delete of an empty queue just after start_app.
	NotEmpty43 = `{"error":"bad_request","reason":"queue 'q' in vhost '/' not empty"}`
	// NoDefaultQueueType310 is 3.10's default_queue_type of a vhost that sets none.
	NoDefaultQueueType310 = "undefined"
	// Overview310 is 3.10's answer to /api/overview?columns=default_queue_type: no such column.
	Overview310 = `[]`
	// StoppedBySupervisor is the 404 a declaration gets while the queue's node restarts.
	StoppedBySupervisor = `{"error":"Object Not Found","reason":"process is stopped by supervisor"}`
)

// NotEmptyReason is the reason of a guarded delete refused because the queue holds messages.
func NotEmptyReason(vhost, name string) string {
	return "queue '" + name + "' in vhost '" + vhost + "' not empty"
}

// InUseReason is the reason of a guarded delete refused because the queue has a consumer (3.10).
func InUseReason(vhost, name string) string {
	return "queue '" + name + "' in vhost '" + vhost + "' in use"
}

// Version is a RabbitMQ version whose answers the fake gives where versions differ.
type Version string

// The versions the fake models.
const (
	V310 Version = "3.10"
	V40  Version = "4.0"
	V43  Version = "4.3"
)

// release is the full version the fake reports for v, as /api/overview does.
func (v Version) release() string {
	return map[Version]string{V310: "3.10.8", V40: "4.0.5", V43: "4.3.6"}[v]
}

// DefaultVersion is what a new fake answers as, so that no mode goes unchecked by the contract.
const DefaultVersion = V43

// Versions are the versions the fake models, oldest first.
var Versions = []Version{V310, V40, V43}
