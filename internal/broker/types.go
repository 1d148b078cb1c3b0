package broker

import (
	"time"
)

// The values the client's calls take and give: a queue (Queue), what a read of queues asks for
// (Detail, Freshness) and what it answers (QueueList); a vhost (Vhost); a vhost's policies (Policy,
// Policies). They stand apart from the calls that read them (listing.go, queues.go, vhosts.go,
// policies.go) because the Client keeps its shared reads of them (client.go).

// Queue is what the management API reports of a queue.
type Queue struct {
	Name       string
	Vhost      string
	Type       string
	Durable    bool
	AutoDelete bool
	Exclusive  bool
	// Arguments as decoded from JSON: numbers are json.Number.
	Arguments map[string]any
	// Messages (ready plus unacked) is nil while the broker has not reported it.
	Messages *int64
	// Consumers is set only by the listings CheckedWithConsumers and Consumers.
	Consumers *int64
	// State is the queue's process state: "running", "live", "idle" or "flow" while it works;
	// "down", "stopped" and the like while its node is down (listings and GETs may word it
	// differently).
	State string
	// Node is the cluster node that hosts the queue, e.g. rabbit@host-2.
	Node string
}

// Running reports whether the queue's process works, or its state is not reported.
func (q Queue) Running() bool {
	switch q.State {
	case "", "running", "live", "idle", "flow":
		return true
	}
	return false
}

// Detail is what a read reports of each queue.
type Detail int

const (
	// Declared: type, flags, arguments, state and node; no counts. The cheapest listing.
	Declared Detail = iota
	// Counted: Declared plus the live message count (GetQueue: where 4.x reports it; nil on 3.10).
	Counted
	// Checked: counts from two listings at once, a queue missing from the counted one with nil
	// count.
	Checked
	// CheckedWithConsumers: Checked, plus each queue's consumer count.
	CheckedWithConsumers
	// Consumers: only queues with consumers; its cost grows with the vhost's consumers, not queues.
	Consumers
)

// Freshness says which earlier answer of the same listing a call may take.
type Freshness int

const (
	// Live: only a request in flight when the call began, else a new one.
	Live Freshness = iota
	// Recent: the answer of a request begun at most timing.checkAge before the call.
	Recent
	// Kept: any answer since this client's last write.
	Kept
	// KeptIfListed: Kept, but without an answer it returns ErrNotListed at once, starting a
	// request.
	KeptIfListed
)

// QueueList is the answer of a listing.
type QueueList struct {
	// Queues by name, shared with every caller: do not modify.
	Queues map[string]Queue
	// Began is when the request that answered began.
	Began time.Time
}

// Vhost is what the provider needs to know of a virtual host.
type Vhost struct {
	Name string
	// DefaultQueueType is "classic", "quorum", "stream", or "" (classic) when none is set.
	DefaultQueueType string
	// FromNode: the vhost sets none and DefaultQueueType is the node's.
	FromNode bool
}

// IsClassic reports whether queues declared without x-queue-type are classic in this vhost.
func (v Vhost) IsClassic() bool {
	return v.DefaultQueueType == "" || v.DefaultQueueType == "classic"
}

// Policy is a user policy or an operator policy as the broker lists it.
type Policy struct {
	Name    string
	Pattern string
	// ApplyTo is the broker's apply-to ("all", "queues", "exchanges", "classic_queues", ...); "all"
	// when the broker reports none.
	ApplyTo  string
	Priority int
	// Definition holds the keys as the broker reports them, shared with every caller: do not modify.
	// Numbers are json.Number, exact whatever their size (topology.AsInt reads them); strings,
	// booleans, lists and objects decode as encoding/json does.
	Definition map[string]any
}

// Policies are a vhost's user policies and operator policies, each sorted by name.
type Policies struct {
	User     []Policy
	Operator []Policy
}

// policyRead is a vhost's shared answer; a refusal is kept in it as an answer (see Policies).
type policyRead struct {
	p   Policies
	err error
}
