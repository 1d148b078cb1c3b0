package main

import (
	"strings"
	"testing"
)

const sampleLog = `=== RUN   TestAccQueue_basic
==> fault proxy drops the connection: retried, 1 request lost, PASS
--- PASS: TestAccQueue_basic (3.00s)
--- SKIP: TestAccQueue_identity (0.00s)
--- FAIL: TestAccQueue_move (1.00s)
    --- SKIP: TestAccQueue_move/sub (0.00s)
    ==> fault indented lines are test output, not fault lines
==> fault broker restarts: rode through, PASS
--- PASS: TestAccQueue_list (2.00s)
`

func TestParseLog(t *testing.T) {
	o := parseLog(sampleLog)
	if o.passed != 2 || o.failed != 1 || strings.Join(o.skipped, " ") != "TestAccQueue_identity TestAccQueue_move/sub" {
		t.Errorf("parseLog = %+v", o)
	}
	want := "==> fault proxy drops the connection: retried, 1 request lost, PASS|==> fault broker restarts: rode through, PASS"
	if got := strings.Join(o.faults, "|"); got != want {
		t.Errorf("faults = %q, want %q", got, want)
	}
}

func TestJudge(t *testing.T) {
	run := stageRun{label: "terraform 1.11.4 × RabbitMQ 3.10.25", log: "build/acc-x.log", seconds: 97}
	for _, tc := range []struct {
		name     string
		o        outcome
		code     int
		expected string
		accRun   bool
		want     string
		details  int
	}{
		{"clean", outcome{passed: 40}, 0, "", false, "40 passed, 0 failed, 0 skipped (97s, build/acc-x.log)", 0},
		{"expected skips", outcome{passed: 40, skipped: []string{"A", "B"}}, 0, "A B", false,
			"40 passed, 0 failed, 2 skipped, all for features the CLI lacks (97s, build/acc-x.log)", 0},
		{"an unexpected skip", outcome{passed: 40, skipped: []string{"A", "B"}}, 0, "A", false,
			"40 passed, 0 failed, 2 skipped, 1 of them unexpected (97s, build/acc-x.log) FAIL", 1},
		{"a failure", outcome{passed: 39, failed: 1, failLines: []string{"--- FAIL: T (1s)"}}, 1, "", false,
			"39 passed, 1 failed, 0 skipped (97s, build/acc-x.log) FAIL", 1},
		{"the binary fails alone", outcome{passed: 3}, 2, "", false, "3 passed, 0 failed, 0 skipped (97s, build/acc-x.log) FAIL", 0},
		{"nothing ran", outcome{}, 0, "", false, "0 passed, 0 failed, 0 skipped (97s, build/acc-x.log) FAIL", 0},
		{"ACC_RUN picked only skipped tests", outcome{skipped: []string{"A"}}, 0, "A", true,
			"0 passed, 0 failed, 1 skipped, all for features the CLI lacks, no test of ACC_RUN runs on this CLI (97s, build/acc-x.log)", 0},
	} {
		r := run
		r.exitCode, r.accRun, r.expected = tc.code, tc.accRun, map[string]bool{}
		for _, e := range strings.Fields(tc.expected) {
			r.expected[e] = true
		}
		rep := judge(tc.o, r)
		if want := "==> acceptance terraform 1.11.4 × RabbitMQ 3.10.25: " + tc.want; rep.summary != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, rep.summary, want)
		}
		if rep.pass == strings.HasSuffix(tc.want, " FAIL") || len(rep.details) != tc.details {
			t.Errorf("%s: pass %v, details %q", tc.name, rep.pass, rep.details)
		}
	}
}

// The fault lines follow the summary line at once, before the failures.
func TestReportLines(t *testing.T) {
	rep := judge(parseLog(sampleLog), stageRun{label: "l", log: "x.log", exitCode: 1, expected: map[string]bool{"TestAccQueue_identity": true}})
	lines := rep.lines()
	want := []string{"==> acceptance l:", "==> fault proxy", "==> fault broker", "      --- FAIL: TestAccQueue_move", "      --- SKIP: TestAccQueue_move/sub (unexpected"}
	if len(lines) != len(want) {
		t.Fatalf("lines = %q", lines)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d = %q, want it to start %q", i, lines[i], want[i])
		}
	}
}

func TestDeprecations(t *testing.T) {
	log := "x Deprecated features: `transient_nonexcl_queues` y\n" +
		"Deprecated features: `management_metrics_collection`\n" +
		"Deprecated features: `global_qos`\nDeprecated features: `transient_nonexcl_queues`\n"
	got := strings.Join(deprecations(log), "|")
	want := "            1 Deprecated features: `global_qos`|            2 Deprecated features: `transient_nonexcl_queues`"
	if got != want {
		t.Errorf("deprecations =\n%q, want\n%q", got, want)
	}
	if d := deprecations("Deprecated features: `management_metrics_collection`"); len(d) != 0 {
		t.Errorf("the management plugin's own warning counts: %q", d)
	}
}
