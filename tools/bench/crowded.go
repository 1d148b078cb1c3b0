package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// The crowded case (-fill): the same N queuey_queue resources in a second vhost that also holds
// `fill` unrelated queues, interleaved with the empty vhost's runs. A workspace's cost follows the
// workspace, not the vhost: the ceilings are in crowdedTarget.
const kindCrowded = "queuey_queue@crowded"

// crowdedTarget is the ceiling on the crowded vhost's time over the empty one's: 1.2 up to 5,000
// unrelated queues, 1.3 beyond (20,000 on RabbitMQ 3.13.1 and later).
func crowdedTarget(fill int) float64 {
	if fill > 5000 {
		return 1.3
	}
	return 1.2
}

// isQueuey says whether kind runs terraform-provider-queuey.
func isQueuey(kind string) bool { return kind == kindQueuey || kind == kindCrowded }

// resourceType is the Terraform resource type of kind.
func resourceType(kind string) string {
	if kind == kindCrowded {
		return kindQueuey
	}
	return kind
}

// vhostOf is the vhost that kind's resources live in.
func (e *env) vhostOf(kind string) string {
	if kind == kindCrowded {
		return e.crowded
	}
	return e.vhost
}

// setupCrowded makes the crowded vhost and fills it with e.o.fill unrelated queues, ten at a time.
func (e *env) setupCrowded(ctx context.Context) error {
	e.crowded = "queuey-bench-" + e.id + "-crowded"
	if err := e.admin.PutVhost(ctx, e.crowded, ""); err != nil {
		return fmt.Errorf("creating vhost %q: %w", e.crowded, err)
	}
	if err := e.admin.SetPermissions(ctx, e.crowded, e.o.username, brokertest.Permissions{Configure: ".*", Write: ".*", Read: ".*"}); err != nil {
		return fmt.Errorf("permissions on vhost %q: %w", e.crowded, err)
	}
	start := time.Now()
	names := make(chan string)
	errs := make(chan error, 10)
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				if err := e.client.DeclareQueue(ctx, e.crowded, name, map[string]any{}); err != nil {
					errs <- fmt.Errorf("filling vhost %q: declaring %q: %w", e.crowded, name, err)
					return
				}
			}
		}()
	}
	func() {
		defer close(names)
		for i := range e.o.fill {
			select {
			case names <- fmt.Sprintf("unrelated-%05d", i):
			case err := <-errs:
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("crowded vhost %q: %d unrelated queues declared in %.1fs\n", e.crowded, e.o.fill, time.Since(start).Seconds())
	return nil
}

// crowdedReport compares queuey in the crowded vhost with the empty one, phase by phase, with the
// requests each sent.
func crowdedReport(e env, results map[string][]runResult) string {
	var w strings.Builder
	empty, crowded := results[kindQueuey], results[kindCrowded]
	if len(crowded) == 0 {
		return ""
	}
	target := crowdedTarget(e.o.fill)
	fmt.Fprintf(&w, "\nN=%d queuey_queue in an empty vhost vs a vhost with %d unrelated queues, median of %d interleaved runs\n\n",
		e.o.n, e.o.fill, len(crowded))
	fmt.Fprintln(&w, "| phase | empty s | crowded s | crowded/empty | target | requests (empty → crowded) | KiB received (empty → crowded) | broker CPU s (empty / crowded) |")
	fmt.Fprintln(&w, "|---|---:|---:|---:|---|---:|---:|---:|")
	for _, p := range phases {
		wall := func(rs []runResult) float64 {
			return median(collect(rs, p, func(r phaseResult) float64 { return r.wall.Seconds() }))
		}
		reqs := func(rs []runResult) float64 {
			return median(collect(rs, p, func(r phaseResult) float64 { return float64(r.counts.requests()) }))
		}
		kib := func(rs []runResult) float64 {
			return median(collect(rs, p, func(r phaseResult) float64 { return float64(r.counts.bytes()) / 1024 }))
		}
		cpu := func(rs []runResult) float64 {
			return median(collect(rs, p, func(r phaseResult) float64 { return r.brokerCPU.Seconds() }))
		}
		es, cs := wall(empty), wall(crowded)
		verdict := "—"
		if p != "refresh" {
			verdict = fmt.Sprintf("≤ %.1f× met", target)
			if es <= 0 || cs/es > target {
				verdict = fmt.Sprintf("≤ %.1f× NOT met", target)
			}
		}
		fmt.Fprintf(&w, "| %s | %.2f | %.2f | %s | %s | %.0f → %.0f | %.0f → %.0f | %.2f / %.2f |\n",
			p, es, cs, ratio(cs, es), verdict, reqs(empty), reqs(crowded), kib(empty), kib(crowded), cpu(empty), cpu(crowded))
	}
	fmt.Fprintln(&w)
	fmt.Fprintln(&w, "requests per phase in the crowded vhost (mean over runs):")
	for _, p := range phases {
		fmt.Fprintf(&w, "  %-8s %s\n", p, meanKinds(crowded, p))
	}
	return w.String()
}

// meanKinds renders the requests of phase by kind, averaged over runs.
func meanKinds(rs []runResult, phase string) string {
	sum := map[string]int{}
	for _, r := range rs {
		for k, v := range r.phases[phase].counts.kinds {
			sum[k] += v.count
		}
	}
	keys := make([]string, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%.0f", k, float64(sum[k])/float64(len(rs))))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
