package main

import (
	"reflect"
	"strings"
	"testing"
)

// The change case's configuration is one queuey_queue with the name given
// (read back as written, whatever it holds), message_ttl, the max_priority
// given and keep_messages_on_change = true; nothing else.
func TestChangeConfig(t *testing.T) {
	name := `bench-x-r1-q"${x}`
	want := obj{
		"terraform":       obj{"required_providers": obj{"queuey": obj{"source": "queuey/queuey"}}},
		"provider queuey": obj{},
		"resource queuey_queue q": obj{"name": name, "message_ttl": changeTTL, "max_priority": 7.0,
			"keep_messages_on_change": true},
	}
	if got := readConfig(t, changeConfig(name, 7)); !reflect.DeepEqual(got, want) {
		t.Errorf("the change's configuration reads\n%v\nwant\n%v", got, want)
	}
}

// The report takes the median of each, the net time run by run (not the
// difference of the medians), and holds the ratio to the target at its
// bound: exactly 0.8x is met.
func TestChangeReport(t *testing.T) {
	out := changeReport(1000, changeRuns{
		apply: []float64{4, 2, 3},
		noop:  []float64{1, 1.5, 0.5},
		loop:  []float64{2, 2, 2},
	})
	for _, want := range []string{
		"| terraform apply of the change (queuey_queue) | 3.00 | 333 |",
		"| no-op terraform apply of the same configuration (the CLI's fixed cost) | 1.00 | — |",
		"| net: the change's apply less the no-op apply, run by run | 2.50 | 400 |",
		"| 2.00 | 500 |",
		"| ratio raw (the target: >= 0.8x the loop) | 0.67x | NOT met |",
		"| ratio net of the no-op apply | 0.80x | met |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
