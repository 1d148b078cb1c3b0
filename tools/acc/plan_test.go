package main

import (
	"slices"
	"testing"
)

// No two nodes, and no node and the machine's broker, share a port, and
// every node belongs to exactly one broker.
func TestPortPlan(t *testing.T) {
	owner := map[int]string{}
	for _, p := range machinePorts {
		owner[p] = "the machine's broker"
	}
	names := map[string]int{}
	for _, n := range nodePlan {
		if n.series != "3.10" && n.series != "4.0" && n.series != "4.3" {
			t.Errorf("node %s: series %s is none of 3.10, 4.0, 4.3", n.name, n.series)
		}
		for _, p := range []int{n.amqp, n.mgmt(), n.dist()} {
			if o, taken := owner[p]; taken {
				t.Errorf("port %d: node %s and %s", p, n.name, o)
			}
			owner[p] = n.name
		}
		names[n.name] = 0
	}
	for _, b := range brokerPlan {
		if (b.kind == system) != (len(b.nodes) == 0) || (b.kind != resil && len(b.nodes) > 1) {
			t.Errorf("broker %s: nodes %q do not fit its kind", b.name, b.nodes)
		}
		for _, n := range b.nodes {
			if _, ok := names[n]; !ok {
				t.Errorf("broker %s: node %s is not in the port plan", b.name, n)
			}
			names[n]++
		}
	}
	for n, uses := range names {
		if uses != 1 {
			t.Errorf("node %s belongs to %d brokers, want 1", n, uses)
		}
	}
}

func TestStartArgs(t *testing.T) {
	n, err := nodeNamed("rabbit40")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"start", "rabbit40", "--version", "4.0", "--amqp-port", "5674", "--mgmt-port", "15674", "--dist-port", "25674"}
	if got := n.startArgs(); !slices.Equal(got, want) {
		t.Errorf("startArgs = %q, want %q", got, want)
	}
	if _, err := brokerNamed("5.0"); err == nil {
		t.Error("brokerNamed(5.0) found a broker")
	}
}
