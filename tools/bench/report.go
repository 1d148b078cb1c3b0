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

func report(e env, results map[string][]runResult, loadBefore, loadAfter string) string {
	var w strings.Builder
	n := float64(e.o.n)
	q, fl := results[kindQueuey], results[kindFloor]
	fmt.Fprintf(&w, "N=%d queuey_queue vs N terraform_data (Terraform's floor), -parallelism=%d, median of %d interleaved runs\n",
		e.o.n, e.o.parallelism, len(q))
	fmt.Fprintf(&w, "load average before %s, after %s\n\n", loadBefore, loadAfter)
	fmt.Fprintln(&w, "| phase | queuey s | floor s | queuey/floor | queuey ms/queue | requests/queue | TCP conns | provider peak RSS | provider CPU s | terraform CPU s (queuey / floor) | broker CPU s |")
	fmt.Fprintln(&w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range phases {
		qs := median(collect(q, p, func(r phaseResult) float64 { return r.wall.Seconds() }))
		fs := median(collect(fl, p, func(r phaseResult) float64 { return r.wall.Seconds() }))
		req := median(collect(q, p, func(r phaseResult) float64 { return float64(r.counts.requests()) / n }))
		conns := median(collect(q, p, func(r phaseResult) float64 { return float64(r.counts.conns) }))
		rss := 0.0
		for _, v := range collect(q, p, func(r phaseResult) float64 { return float64(r.provRSSKiB) }) {
			rss = max(rss, v)
		}
		pcpu := median(collect(q, p, func(r phaseResult) float64 { return r.provCPU.Seconds() }))
		tcpu := median(collect(q, p, func(r phaseResult) float64 { return (r.tfCPU - r.provCPU).Seconds() }))
		fcpu := median(collect(fl, p, func(r phaseResult) float64 { return r.tfCPU.Seconds() }))
		bcpu := median(collect(q, p, func(r phaseResult) float64 { return r.brokerCPU.Seconds() }))
		ratio := 0.0
		if fs > 0 {
			ratio = qs / fs
		}
		fmt.Fprintf(&w, "| %s | %.2f | %.2f | %.2f× | %.1f | %.3f | %.0f | %.0f MiB | %.2f | %.2f / %.2f | %.2f |\n",
			p, qs, fs, ratio, 1000*qs/n, req, conns, rss/1024, pcpu, tcpu, fcpu, bcpu)
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
