package main

import (
	"fmt"
	"strings"
	"time"
)

// The peer (-peer): cyrilgdn/rabbitmq v1.10.1, the provider users migrate from, measured only when
// given its binary (it is not on the module proxy). It runs the same N logical queues as two
// rabbitmq_queue resources each; the target is queuey at least peerTarget times as fast on apply
// and destroy.

const peerTarget = 2.5

const peerSource = "cyrilgdn/rabbitmq"

// peerConfig declares, for each logical queue named prefix + index, q.dead and q as queuey does,
// through the bench's proxy. Both declare x-queue-type = "classic": RabbitMQ 3.13+ report it on
// every classic queue and the peer compares arguments on every refresh, so without it every plan
// would replace them. The resources do not refer to each other, so Terraform makes all 2N at once.
func (e *env) peerConfig(prefix string) (string, error) {
	ttl, err := time.ParseDuration(e.o.ttl)
	if err != nil || ttl < 0 || ttl%time.Millisecond != 0 {
		return "", fmt.Errorf("rabbitmq_queue: -message-ttl %q is not a whole number of milliseconds in Go's duration syntax", e.o.ttl)
	}
	return fmt.Sprintf(`terraform {
  required_providers {
    rabbitmq = { source = %[1]q }
  }
}

provider "rabbitmq" {
  endpoint = %[2]s
  username = %[3]s
  password = %[4]s
}

resource "rabbitmq_queue" "dead" {
  count = %[5]d
  name  = "%[6]s${count.index}.dead"
  vhost = %[7]s

  settings {
    durable     = true
    auto_delete = false
    arguments   = { "x-queue-type" = "classic" }
  }
}

resource "rabbitmq_queue" "q" {
  count = %[5]d
  name  = "%[6]s${count.index}"
  vhost = %[7]s

  settings {
    durable        = true
    auto_delete    = false
    arguments_json = jsonencode({ "x-queue-type" = "classic", "x-message-ttl" = %[8]d, "x-max-priority" = %[9]d })
  }
}
`, peerSource, hclString(e.apiURL), hclString(e.o.username), hclString(e.o.password),
		e.o.n, prefix, hclString(e.vhost), ttl.Milliseconds(), e.o.priority), nil
}

// peerRefreshNoise says whether a refresh-only plan of the peer reported only its own bookkeeping:
// after Create it keeps settings.arguments null, and its next Read stores {}, which Terraform lists
// as a change outside it.
func peerRefreshNoise(log string) bool {
	_, listed, ok := strings.Cut(log, "Terraform detected the following changes made outside of Terraform")
	if !ok {
		return false
	}
	listed, _, _ = strings.Cut(listed, "This is a refresh-only plan")
	noise := 0
	for _, line := range strings.Split(listed, "\n") {
		f := strings.Join(strings.Fields(line), " ")
		switch {
		case f == "+ arguments = {}":
			noise++
		case f == "~ settings {", strings.HasPrefix(f, `~ resource "rabbitmq_queue" `):
		case strings.HasPrefix(f, "+"), strings.HasPrefix(f, "-"), strings.HasPrefix(f, "~"):
			return false
		}
	}
	return noise > 0
}

// peerReport compares queuey with the peer phase by phase, or says why it could not.
func peerReport(e env, results map[string][]runResult) string {
	if e.o.peer == "" {
		return fmt.Sprintf("\n%s v1.10.1: comparison skipped: no -peer binary given (make bench BENCH_PEER=PATH); "+
			"it is not on this machine's Go module proxy, so only a binary you supply can be measured\n", peerSource)
	}
	var w strings.Builder
	q, p := results[kindQueuey], results[kindPeer]
	n := float64(e.o.n)
	fmt.Fprintf(&w, "\nN=%d logical queues: queuey_queue vs %s (%d rabbitmq_queue: q.dead and q; binary %s), median of %d interleaved runs\n\n",
		e.o.n, peerSource, 2*e.o.n, e.o.peer, len(p))
	fmt.Fprintln(&w, "| phase | rabbitmq_queue s | queuey s | queuey's speed-up (rabbitmq_queue/queuey) | target | requests per logical queue (rabbitmq_queue / queuey) | TCP conns (rabbitmq_queue / queuey) | provider CPU s (rabbitmq_queue / queuey) |")
	fmt.Fprintln(&w, "|---|---:|---:|---:|---|---:|---:|---:|")
	med := func(rs []runResult, phase string, f func(phaseResult) float64) float64 {
		return median(collect(rs, phase, f))
	}
	wall := func(r phaseResult) float64 { return r.wall.Seconds() }
	reqs := func(r phaseResult) float64 { return float64(r.counts.requests()) / n }
	conns := func(r phaseResult) float64 { return float64(r.counts.conns) }
	cpu := func(r phaseResult) float64 { return r.provCPU.Seconds() }
	for _, phase := range phases {
		ps, qs := med(p, phase, wall), med(q, phase, wall)
		target := "—"
		if phase == "apply" || phase == "destroy" {
			target = fmt.Sprintf("≥ %.1f× %s", peerTarget, verdict(qs > 0 && ps/qs >= peerTarget))
		}
		fmt.Fprintf(&w, "| %s | %.2f | %.2f | %s | %s | %.3f / %.3f | %.0f / %.0f | %.2f / %.2f |\n",
			phase, ps, qs, ratio(ps, qs), target, med(p, phase, reqs), med(q, phase, reqs),
			med(p, phase, conns), med(q, phase, conns), med(p, phase, cpu), med(q, phase, cpu))
	}
	return w.String()
}
