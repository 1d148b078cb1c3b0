package brokertest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
)

// What the fake broker holds: its vhosts, queues and their messages, policies and the requests
// it received, under one lock; the management API (fake.go) and the AMQP port (amqp_server.go)
// answer from it.

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
	listings   listings // see HoldListings and the rest
	conns      int
	// amqpQueues holds the messages of the queues for the AMQP port (ServeAMQP).
	amqpQueues map[queueKey]*amqpQueue
	// noSingleCounts: a GET of one queue leaves out its message count, as 3.10 does.
	noSingleCounts bool
	version        Version // see AnswerAs

	// policies are the vhosts' user and operator policies (SetPolicy, the API's policies).
	policies policyStore
}

// interceptor is one fault installed by Intercept.
type interceptor struct {
	f func(w http.ResponseWriter, r *http.Request) bool
}

// Count returns a pointer to n, for Queue.Messages.
func Count(n int64) *int64 { return &n }

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

// DefaultNode is the name of the fake's one node.
const DefaultNode = "rabbit@localhost"

// listings shapes the queue listings, for the tests of shared reads.
type listings struct {
	count    map[string]int64 // listing requests so far, by vhost
	stamp    bool
	hold     chan struct{}
	status   int
	canceled int64
}

// queueKey names a queue of a vhost.
type queueKey struct{ vhost, name string }

// amqpQueue is what a queue holds for the AMQP side.
type amqpQueue struct {
	ready   []Message
	unacked int
}

// Message is a message of a queue: its properties as written on the wire
// (Props, replayed unchanged to a consumer) and its body. PutMessages
// writes a message id and a user id into Props; ID and UserID read them.
type Message struct {
	Props []byte
	Body  []byte
	// redelivered: delivered before and requeued, as the redelivered flag
	// of its next delivery says.
	redelivered bool
}

// NewMessage is a message with that message id, user id (either may be
// empty) and body.
func NewMessage(id, userID, body string) Message {
	return Message{Props: encodeProps(id, userID), Body: []byte(body)}
}

// ID is the message's message-id property.
func (m Message) ID() string { return m.prop(propMessageID) }

// UserID is the message's user-id property.
func (m Message) UserID() string { return m.prop(propUserID) }

func (m Message) prop(i int) string {
	p, _ := props(m.Props).shortstrs()
	return p[i]
}

// PutMessages appends msgs to the ready messages of queue in vhost, which
// must exist; its message count in the management API follows.
func (s *Server) PutMessages(vhost, queue string, msgs ...Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.amqpQueue(queueKey{vhost, queue})
	q.ready = append(q.ready, msgs...)
	s.syncCount(queueKey{vhost, queue})
}

// Messages returns the ready messages of queue in vhost, in order.
func (s *Server) Messages(vhost, queue string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.amqpQueue(queueKey{vhost, queue}).ready)
}

// amqpQueue is the AMQP side of queue k, under s.mu.
func (s *Server) amqpQueue(k queueKey) *amqpQueue {
	if s.amqpQueues == nil {
		s.amqpQueues = map[queueKey]*amqpQueue{}
	}
	q := s.amqpQueues[k]
	if q == nil {
		q = &amqpQueue{}
		s.amqpQueues[k] = q
	}
	return q
}

// syncCount sets the management API's message count of k (ready and
// unacknowledged, as RabbitMQ's messages), under s.mu.
func (s *Server) syncCount(k queueKey) {
	if q, ok := s.queues[k.vhost][k.name]; ok {
		aq := s.amqpQueue(k)
		q.Messages = Count(int64(len(aq.ready) + aq.unacked))
	}
}

// Policy is a user policy or an operator policy as the fake holds it.
type Policy struct {
	Name    string
	Pattern string
	// ApplyTo is reported as is; "all" when empty, as RabbitMQ defaults it.
	ApplyTo  string
	Priority int
	// Definition is reported as is: int64 keeps a large integer exact.
	Definition map[string]any
}

// policyKinds are the two listings, by their path below /api/.
const (
	userPolicies     = "policies"
	operatorPolicies = "operator-policies"
)

// policyStore holds a vhost's policies by listing path, vhost and name.
type policyStore map[string]map[string]map[string]Policy
