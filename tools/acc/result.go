package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// outcome is what a stage's go test -v log says.
type outcome struct {
	passed, failed int
	skipped        []string // every test skipped, subtests too
	failLines      []string // the top-level --- FAIL lines
	faults         []string // the lines the fault tests print, "==> fault ..."
}

func parseLog(log string) outcome {
	var o outcome
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.HasPrefix(line, "--- PASS: "):
			o.passed++
		case strings.HasPrefix(line, "--- FAIL: "):
			o.failed++
			o.failLines = append(o.failLines, line)
		case strings.HasPrefix(strings.TrimLeft(line, " "), "--- SKIP: "):
			if f := strings.Fields(line); len(f) >= 3 {
				o.skipped = append(o.skipped, f[2])
			}
		case strings.HasPrefix(line, "==> fault "):
			o.faults = append(o.faults, line)
		}
	}
	return o
}

// report is a stage's result as printed: its summary line, then the fault
// lines, then the failures and unexpected skips.
type report struct {
	summary string
	faults  []string
	details []string
	pass    bool
}

// lines are the report as printed: the summary line, the fault lines right
// after it, then the details.
func (r report) lines() []string {
	return append(append([]string{r.summary}, r.faults...), r.details...)
}

// stageRun is what the runner knows of a stage besides its log.
type stageRun struct {
	label    string          // "terraform 1.11.4 × RabbitMQ 3.10.25"
	log      string          // its path, as printed
	seconds  int             // its wall time
	exitCode int             // the test binary's
	expected map[string]bool // the skips needsCLI recorded
	accRun   bool            // ACC_RUN picked the tests (and the stage has a broker)
}

// judge applies the rule of a stage: it passes when the test binary exits 0,
// no test fails and every skip was recorded as expected; it must run a test
// unless ACC_RUN picked only tests of features its CLI lacks.
func judge(o outcome, r stageRun) report {
	var unexpected []string
	for _, t := range o.skipped {
		if !r.expected[t] {
			unexpected = append(unexpected, t)
		}
	}
	note := ""
	if len(o.skipped) > 0 {
		note = ", all for features the CLI lacks"
		if len(unexpected) > 0 {
			note = fmt.Sprintf(", %d of them unexpected", len(unexpected))
		}
	}
	pass := r.exitCode == 0 && o.failed == 0 && len(unexpected) == 0
	if pass && o.passed == 0 {
		if r.accRun {
			note += ", no test of ACC_RUN runs on this CLI"
		} else {
			pass = false
		}
	}
	rep := report{pass: pass, faults: o.faults}
	rep.summary = fmt.Sprintf("==> acceptance %s: %d passed, %d failed, %d skipped%s (%ds, %s)",
		r.label, o.passed, o.failed, len(o.skipped), note, r.seconds, r.log)
	if !pass {
		rep.summary += " FAIL"
	}
	for _, l := range o.failLines {
		rep.details = append(rep.details, "      "+l)
	}
	for _, t := range unexpected {
		rep.details = append(rep.details, fmt.Sprintf("      --- SKIP: %s (unexpected: not for a feature its CLI lacks; see %s)", t, r.log))
	}
	return rep
}

var deprecatedRE = regexp.MustCompile("Deprecated features: `[a-z_]*`")

// deprecations counts the deprecated features a 4.x node's log warns about,
// as "      N Deprecated features: `name`" sorted by name. The management
// plugin warns about management_metrics_collection at boot whatever the
// tests do, so that one does not count.
func deprecations(log string) []string {
	count := map[string]int{}
	for _, m := range deprecatedRE.FindAllString(log, -1) {
		if !strings.Contains(m, "management_metrics_collection") {
			count[m]++
		}
	}
	var out []string
	for m, n := range count {
		out = append(out, fmt.Sprintf("      %7d %s", n, m))
	}
	sort.Slice(out, func(i, j int) bool { return out[i][14:] < out[j][14:] })
	return out
}
