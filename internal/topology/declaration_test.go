package topology

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMismatches(t *testing.T) {
	t.Parallel()
	ttl := Arguments{ArgMessageTTL: Int(5000)}
	declared := Existing{Type: "classic", Durable: true, Arguments: map[string]any{"x-message-ttl": json.Number("5000")}}
	tests := []struct {
		name string
		got  Existing
		want Arguments
		out  []string
	}{
		{"same", declared, ttl, nil},
		{"type not reported", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": float64(5000)}}, ttl, nil},
		{"broker-added classic type ignored", Existing{Type: "classic", Durable: true, Arguments: map[string]any{"x-queue-type": "classic"}}, Arguments{}, nil},
		{"quorum", Existing{Type: "quorum", Durable: true, Arguments: map[string]any{"x-queue-type": "quorum"}}, Arguments{},
			[]string{"type: broker has quorum, wanted classic (no x-queue-type argument)", `argument x-queue-type: broker has "quorum", wanted absent`}},
		{"flags", Existing{Durable: false, AutoDelete: true, Exclusive: true, Arguments: map[string]any{}}, Arguments{},
			[]string{"durable: broker has false, wanted true", "auto_delete: broker has true, wanted false", "exclusive: broker has true, wanted false"}},
		{"argument differs, extra, missing", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": json.Number("7000"), "x-max-length": json.Number("10")}},
			Arguments{ArgMessageTTL: Int(5000), ArgMaxPriority: Int(3)},
			[]string{"argument x-max-length: broker has 10, wanted absent", "argument x-max-priority: broker has absent, wanted 3", "argument x-message-ttl: broker has 7000, wanted 5000"}},
		{"string is not an integer", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": "5000"}}, ttl,
			[]string{`argument x-message-ttl: broker has "5000", wanted 5000`}},
	}
	for _, tt := range tests {
		var out []string
		for _, m := range Mismatches(tt.got, tt.want) {
			out = append(out, m.String())
		}
		if strings.Join(out, "|") != strings.Join(tt.out, "|") {
			t.Errorf("%s: Mismatches = %q, want %q", tt.name, out, tt.out)
		}
	}
}

func TestObservedJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  Existing
		want string
	}{
		{"declared as wanted", Existing{Type: "classic", Durable: true, Arguments: map[string]any{"x-queue-type": "classic", "x-message-ttl": json.Number("5000")}}, `{"x-message-ttl":5000}`},
		{"empty", Existing{Durable: true}, `{}`},
		{"flags that differ", Existing{Durable: false, AutoDelete: true, Arguments: map[string]any{"x-message-ttl": float64(5000)}}, `{"auto_delete":true,"durable":false,"x-message-ttl":5000}`},
		{"exclusive", Existing{Durable: true, Exclusive: true}, `{"exclusive":true}`},
		{"quorum by argument", Existing{Type: "quorum", Durable: true, Arguments: map[string]any{"x-queue-type": "quorum"}}, `{"x-queue-type":"quorum"}`},
		{"quorum by vhost default", Existing{Type: "quorum", Durable: true}, `{"type":"quorum"}`},
		{"string value kept a string", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": "5000", "x-dead-letter-exchange": "<&>"}}, `{"x-dead-letter-exchange":"<&>","x-message-ttl":"5000"}`},
		{"fraction kept", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": 1.5}}, `{"x-message-ttl":1.5}`},
	}
	for _, tt := range tests {
		if got := ObservedJSON(tt.got); got != tt.want {
			t.Errorf("%s: ObservedJSON = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestDestroyOrder(t *testing.T) {
	t.Parallel()
	existing := []string{"orders", "orders.dead", "orders.deferred.600000", "orders.deferred.30000", "orders.deferred.",
		"orders.deferred.05", "orders.deferred.5000.bak", "orders2", "orders2.deferred.1000", "orders.deadish", "orders.deferred.30000", "orders.redeclaring", "orders2.redeclaring",
		"orders.redeclaring.x"}
	got := strings.Join(DestroyOrder("orders", DefaultSuffixes(), existing), " ")
	if want := "orders.deferred.30000 orders.deferred.600000 orders.redeclaring orders orders.dead"; got != want {
		t.Errorf("DestroyOrder = %s, want %s", got, want)
	}
	custom := Suffixes{Dead: "-dlq", Deferred: "-wait-"}
	got = strings.Join(DestroyOrder("jobs", custom, []string{"jobs-dlq", "jobs-wait-61000", "jobs.dead", "jobs.deferred.1000"}), " ")
	if want := "jobs-wait-61000 jobs-dlq"; got != want {
		t.Errorf("DestroyOrder with custom suffixes = %s, want %s", got, want)
	}
	if got := DestroyOrder("orders", DefaultSuffixes(), nil); len(got) != 0 {
		t.Errorf("DestroyOrder of nothing = %v", got)
	}
}

func TestValidateQueueNameForm(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"orders":                 "",
		"":                       "must not be empty",
		"amq.orders":             `starts with "amq."`,
		strings.Repeat("a", 300): "", // the length limit depends on the suffixes
	} {
		err := ValidateQueueNameForm(name)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("ValidateQueueNameForm(%.20q) = %v, want %q", name, err, want)
		}
	}
}
