package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

func machineLine(e *env) string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), Terraform %s, RabbitMQ %s, %s, load %s",
		runtime.NumCPU(), model, e.tfVersion, e.brokerVer, runtime.Version(), loadavg())
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

func collect(rs []runResult, phase string, f func(phaseResult) float64) []float64 {
	out := make([]float64, 0, len(rs))
	for _, r := range rs {
		out = append(out, f(r.phases[phase]))
	}
	return out
}

// targets are the project's ceilings on queuey's time over the plugin floor's
// (.github/CONTRIBUTING.md, "Benchmarks").
var targets = map[string]float64{"apply": 1.5, "plan": 1.25, "destroy": 1.5}

func report(e env, results map[string][]runResult, loadBefore, loadAfter string) string {
	var w strings.Builder
	n := float64(e.o.n)
	q, no, fl := results[kindQueuey], results[kindNoop], results[kindFloor]
	wall := func(rs []runResult, p string) float64 {
		return median(collect(rs, p, func(r phaseResult) float64 { return r.wall.Seconds() }))
	}
	cpu := func(rs []runResult, p string, f func(phaseResult) time.Duration) float64 {
		return median(collect(rs, p, func(r phaseResult) float64 { return f(r).Seconds() }))
	}
	fmt.Fprintf(&w, "N=%d: queuey_queue vs noop_queue (a do-nothing provider on the same framework: the plugin floor) "+
		"vs terraform_data (Terraform's floor), -parallelism=%d, median of %d interleaved runs\n",
		e.o.n, e.o.parallelism, len(q))
	fmt.Fprintf(&w, "load average before %s, after %s\n\n", loadBefore, loadAfter)
	fmt.Fprintln(&w, "| phase | queuey s | noop s | terraform_data s | queuey/noop | target | queuey/terraform_data | queuey ms/queue | requests/queue | TCP conns | provider peak RSS | provider CPU s (queuey / noop) | terraform CPU s (queuey / noop / terraform_data) | broker CPU s |")
	fmt.Fprintln(&w, "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range phases {
		qs, ns, fs := wall(q, p), wall(no, p), wall(fl, p)
		req := median(collect(q, p, func(r phaseResult) float64 { return float64(r.counts.requests()) / n }))
		conns := median(collect(q, p, func(r phaseResult) float64 { return float64(r.counts.conns) }))
		rss := 0.0
		for _, v := range collect(q, p, func(r phaseResult) float64 { return float64(r.provRSSKiB) }) {
			rss = max(rss, v)
		}
		provCPU := func(r phaseResult) time.Duration { return r.provCPU }
		tfOnly := func(r phaseResult) time.Duration { return r.tfCPU - r.provCPU }
		target := "—"
		if t, ok := targets[p]; ok {
			verdict := "met"
			if ns <= 0 || qs/ns > t {
				verdict = "NOT met"
			}
			target = fmt.Sprintf("≤ %.2f× %s", t, verdict)
		}
		fmt.Fprintf(&w, "| %s | %.2f | %.2f | %.2f | %s | %s | %s | %.1f | %.3f | %.0f | %.0f MiB | %.2f / %.2f | %.2f / %.2f / %.2f | %.2f |\n",
			p, qs, ns, fs, ratio(qs, ns), target, ratio(qs, fs), 1000*qs/n, req, conns, rss/1024,
			cpu(q, p, provCPU), cpu(no, p, provCPU), cpu(q, p, tfOnly), cpu(no, p, tfOnly), cpu(fl, p, tfOnly),
			cpu(q, p, func(r phaseResult) time.Duration { return r.brokerCPU }))
	}
	fmt.Fprintln(&w)
	fmt.Fprintln(&w, "management API requests per run (mean over runs; time = until the answer was read whole, through the proxy):")
	for _, p := range phases {
		sum := map[string]kindStats{}
		for _, r := range q {
			for k, v := range r.phases[p].counts.kinds {
				s := sum[k]
				s.count += v.count
				s.total += v.total
				s.bytes += v.bytes
				sum[k] = s
			}
		}
		var parts []string
		for _, k := range sortedKinds(sum) {
			s := sum[k]
			runs := float64(len(q))
			parts = append(parts, fmt.Sprintf("%s ×%.0f (%.1f ms, %.0f KiB each)", k, float64(s.count)/runs,
				float64(s.total)/float64(s.count)/float64(time.Millisecond), float64(s.bytes)/float64(s.count)/1024))
		}
		if len(parts) == 0 {
			parts = []string{"none"}
		}
		procs := median(collect(q, p, func(r phaseResult) float64 { return float64(r.provProcs) }))
		fmt.Fprintf(&w, "  %-8s %s; provider processes %.0f\n", p, strings.Join(parts, ", "), procs)
	}
	return w.String()
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}
