package main

import "fmt"

// node is a RabbitMQ node of scripts/rabbitmq-node.sh beside the machine's
// own broker (AMQP 5672, management 15672, distribution 25672). Its ports
// follow one plan: management is 10000 above AMQP, distribution 20000 above.
type node struct {
	name, series string
	amqp         int
}

func (n node) mgmt() int { return n.amqp + 10000 }
func (n node) dist() int { return n.amqp + 20000 }

// startArgs are the node's arguments to scripts/rabbitmq-node.sh start.
func (n node) startArgs() []string {
	return []string{"start", n.name, "--version", n.series, "--amqp-port", fmt.Sprint(n.amqp),
		"--mgmt-port", fmt.Sprint(n.mgmt()), "--dist-port", fmt.Sprint(n.dist())}
}

// nodePlan is every node the tests start.
var nodePlan = []node{
	{"rabbit43", "4.3", 5673},
	{"rabbit40", "4.0", 5674},
	{"oauth310", "3.10", 5675},
	{"oauth43", "4.3", 5676},
	{"restart310", "3.10", 5677},
	{"restart43", "4.3", 5678},
	{"c1", "4.3", 5681},
	{"c2", "4.3", 5682},
	{"c3", "4.3", 5683},
	{"queuey-quorum43", "4.3", 5684},
}

// machinePorts are the machine's own broker's.
var machinePorts = []int{5672, 15672, 25672}

func nodeNamed(name string) (node, error) {
	for _, n := range nodePlan {
		if n.name == name {
			return n, nil
		}
	}
	return node{}, fmt.Errorf("no node %s in the port plan", name)
}

// brokerKind says how a broker is made ready.
type brokerKind int

const (
	system brokerKind = iota // the machine's own: scripts/broker-ready.sh; never stopped here
	plain                    // one node with rabbitmq.conf lines of its own
	oauth                    // one node with the OAuth 2.0 backend and a fresh signing key
	resil                    // the restart nodes and a 3-node cluster, c1 its endpoint
)

// broker is a broker a stage names.
type broker struct {
	name  string
	kind  brokerKind
	nodes []string
	conf  []string // rabbitmq.conf lines of a plain node
}

// RabbitMQ 4.x permits transient non-exclusive queues, deprecated, with a
// warning; the test nodes deny them, so that declaring one fails a test.
const denyTransient = "deprecated_features.permit.transient_nonexcl_queues = false"

var brokerPlan = []broker{
	{name: "3.10", kind: system},
	{name: "4.0", kind: plain, nodes: []string{"rabbit40"}, conf: []string{denyTransient}},
	{name: "4.3", kind: plain, nodes: []string{"rabbit43"}, conf: []string{denyTransient}},
	{name: "4.3-quorum", kind: plain, nodes: []string{"queuey-quorum43"}, conf: []string{denyTransient, "default_queue_type = quorum"}},
	{name: "oauth-3.10", kind: oauth, nodes: []string{"oauth310"}},
	{name: "oauth-4.3", kind: oauth, nodes: []string{"oauth43"}},
	{name: "resil", kind: resil, nodes: []string{"restart310", "restart43", "c1", "c2", "c3"}},
}

func brokerNamed(name string) (broker, error) {
	for _, b := range brokerPlan {
		if b.name == name {
			return b, nil
		}
	}
	var known []string
	for _, b := range brokerPlan {
		known = append(known, b.name)
	}
	return broker{}, fmt.Errorf("unknown broker '%s': known are %v", name, known)
}
