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

// targets are the ceilings on queuey's time over a floor's, at N=300 and N=1000: apply and destroy
// against noop_writes, plan against noop_queue; refresh has none.
var targets = map[string]struct {
	floor string
	max   float64
}{
	"apply":   {kindWrites, 1.0},
	"plan":    {kindNoop, 1.0},
	"destroy": {kindWrites, 1.1},
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT met"
}

func report(e env, results map[string][]runResult, loadBefore, loadAfter string) string {
	var w strings.Builder
	reportHeader(&w, e, len(results[kindQueuey]), loadBefore, loadAfter)
	fmt.Fprintln(&w)
	fmt.Fprintln(&w, "| phase | queuey s | noop_writes s | noop s | terraform_data s | queuey/noop_writes | queuey/noop | target | queuey/terraform_data | queuey ms/queue | requests/queue (queuey / noop_writes) | TCP conns (queuey / noop_writes) | provider peak RSS (queuey) | provider CPU s (queuey / noop_writes / noop) | terraform CPU s (queuey / noop_writes / noop / terraform_data) | broker CPU s (queuey / noop_writes) |")
	fmt.Fprintln(&w, "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range phases {
		w.WriteString(phaseRow(e, results, p))
	}
	fmt.Fprintln(&w)
	requestsReport(&w, results)
	return w.String()
}

// reportHeader writes what the table compares, over how many runs, and under what load.
func reportHeader(w *strings.Builder, e env, runs int, loadBefore, loadAfter string) {
	fmt.Fprintf(w, "N=%d: queuey_queue vs noop_writes (the do-nothing plugin sending only the broker writes no correct provider can skip: "+
		"the floor for apply and destroy) vs noop_queue (a do-nothing provider on the same framework: the plugin floor, plan's) "+
		"vs terraform_data (Terraform's floor), -parallelism=%d, median of %d interleaved runs\n",
		e.o.n, e.o.parallelism, runs)
	fmt.Fprintf(w, "load average before %s, after %s\n", loadBefore, loadAfter)
	if e.o.n != 300 && e.o.n != 1000 {
		fmt.Fprintf(w, "the targets are set at N=300 and N=1000; at N=%d the verdicts are only indicative\n", e.o.n)
	}
}

// medianWall is the median wall time of phase p over rs, in seconds.
func medianWall(rs []runResult, p string) float64 {
	return median(collect(rs, p, func(r phaseResult) float64 { return r.wall.Seconds() }))
}

// medianCPU is the median over rs of the CPU time f picks from phase p, in seconds.
func medianCPU(rs []runResult, p string, f func(phaseResult) time.Duration) float64 {
	return median(collect(rs, p, func(r phaseResult) float64 { return f(r).Seconds() }))
}

// phaseRow is the table's row of phase p: queuey's times against the floors', its target's
// verdict, and the requests, connections, memory and CPU behind them.
func phaseRow(e env, results map[string][]runResult, p string) string {
	n := float64(e.o.n)
	q, wr, no, fl := results[kindQueuey], results[kindWrites], results[kindNoop], results[kindFloor]
	perQueue := func(rs []runResult) float64 {
		return median(collect(rs, p, func(r phaseResult) float64 { return float64(r.counts.requests()) / n }))
	}
	conns := func(rs []runResult) float64 {
		return median(collect(rs, p, func(r phaseResult) float64 { return float64(r.counts.conns) }))
	}
	qs, ws, ns, fs := medianWall(q, p), medianWall(wr, p), medianWall(no, p), medianWall(fl, p)
	rss := 0.0
	for _, v := range collect(q, p, func(r phaseResult) float64 { return float64(r.provRSSKiB) }) {
		rss = max(rss, v)
	}
	provCPU := func(r phaseResult) time.Duration { return r.provCPU }
	tfOnly := func(r phaseResult) time.Duration { return r.tfCPU - r.provCPU }
	brokerCPU := func(r phaseResult) time.Duration { return r.brokerCPU }
	target := "—"
	if t, ok := targets[p]; ok {
		floor := medianWall(results[t.floor], p)
		target = fmt.Sprintf("≤ %.1f× %s: %s", t.max, t.floor, verdict(floor > 0 && qs/floor <= t.max))
	}
	return fmt.Sprintf("| %s | %.2f | %.2f | %.2f | %.2f | %s | %s | %s | %s | %.1f | %.3f / %.3f | %.0f / %.0f | %.0f MiB | %.2f / %.2f / %.2f | %.2f / %.2f / %.2f / %.2f | %.2f / %.2f |\n",
		p, qs, ws, ns, fs, ratio(qs, ws), ratio(qs, ns), target, ratio(qs, fs), 1000*qs/n,
		perQueue(q), perQueue(wr), conns(q), conns(wr), rss/1024,
		medianCPU(q, p, provCPU), medianCPU(wr, p, provCPU), medianCPU(no, p, provCPU),
		medianCPU(q, p, tfOnly), medianCPU(wr, p, tfOnly), medianCPU(no, p, tfOnly), medianCPU(fl, p, tfOnly),
		medianCPU(q, p, brokerCPU), medianCPU(wr, p, brokerCPU))
}

// requestsReport writes the management API requests of each kind that talks to the broker, phase
// by phase, with the provider processes each phase started.
func requestsReport(w *strings.Builder, results map[string][]runResult) {
	fmt.Fprintln(w, "management API requests per run (mean over runs; time = until the answer was read whole, through the proxy):")
	for _, kind := range []string{kindQueuey, kindWrites, kindPeer} {
		rs := results[kind]
		if len(rs) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s:\n", kind)
		for _, p := range phases {
			procs := median(collect(rs, p, func(r phaseResult) float64 { return float64(r.provProcs) }))
			fmt.Fprintf(w, "    %-8s %s; provider processes %.0f\n", p, requestKinds(rs, p), procs)
		}
	}
}

// requestKinds renders the requests of phase by kind, with mean time and size over runs.
func requestKinds(rs []runResult, phase string) string {
	sum := map[string]kindStats{}
	for _, r := range rs {
		for k, v := range r.phases[phase].counts.kinds {
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
		runs := float64(len(rs))
		parts = append(parts, fmt.Sprintf("%s ×%.0f (%.1f ms, %.0f KiB each)", k, float64(s.count)/runs,
			float64(s.total)/float64(s.count)/float64(time.Millisecond), float64(s.bytes)/float64(s.count)/1024))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}
