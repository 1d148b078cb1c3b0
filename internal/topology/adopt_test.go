package topology

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestMainQueueArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  Existing
		args string
		out  []string
	}{
		{"no arguments", Existing{Durable: true}, `{}`, nil},
		{"ttl and priority", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": json.Number("5000"), "x-max-priority": float64(10)}},
			`{"x-max-priority":10,"x-message-ttl":5000}`, nil},
		{"ttl zero and the largest", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": json.Number("4294967295")}},
			`{"x-message-ttl":4294967295}`, nil},
		{"classic type argument ignored", Existing{Type: "classic", Durable: true, Arguments: map[string]any{"x-queue-type": "classic", "x-message-ttl": int64(0)}},
			`{"x-message-ttl":0}`, nil},
		{"flags", Existing{Durable: false, AutoDelete: true}, `{}`,
			[]string{"durable: broker has false, wanted true", "auto_delete: broker has true, wanted false"}},
		{"another argument", Existing{Durable: true, Arguments: map[string]any{"x-max-length": json.Number("1000"), "x-message-ttl": json.Number("5000")}}, `{"x-message-ttl":5000}`,
			[]string{"argument x-max-length: broker has 1000, wanted absent"}},
		{"quorum", Existing{Durable: true, Arguments: map[string]any{"x-queue-type": "quorum"}}, `{}`,
			[]string{`argument x-queue-type: broker has "quorum", wanted absent`}},
		{"out of range", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": json.Number("4294967296"), "x-max-priority": json.Number("0")}}, `{}`,
			[]string{"argument x-max-priority: broker has 0, wanted an integer from 1 to 255", "argument x-message-ttl: broker has 4294967296, wanted an integer from 0 to 4294967295"}},
		{"not integers", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": "5s", "x-max-priority": 1.5}}, `{}`,
			[]string{"argument x-max-priority: broker has 1.5, wanted an integer from 1 to 255", `argument x-message-ttl: broker has "5s", wanted an integer from 0 to 4294967295`}},
		{"negative ttl, priority past 255", Existing{Durable: true, Arguments: map[string]any{"x-message-ttl": json.Number("-1"), "x-max-priority": json.Number("256")}}, `{}`,
			[]string{"argument x-max-priority: broker has 256, wanted an integer from 1 to 255", "argument x-message-ttl: broker has -1, wanted an integer from 0 to 4294967295"}},
	}
	for _, tt := range tests {
		args, mismatches := MainQueueArgs(tt.got)
		var out []string
		for _, m := range mismatches {
			out = append(out, m.String())
		}
		if strings.Join(out, "|") != strings.Join(tt.out, "|") {
			t.Errorf("%s: mismatches = %q, want %q", tt.name, out, tt.out)
		}
		if got := args.JSON(); got != tt.args {
			t.Errorf("%s: arguments = %s, want %s", tt.name, got, tt.args)
		}
	}
}

// FuzzMainQueueArgs: a queue read back without mismatches is exactly what a
// declaration of the arguments read back gives (Mismatches finds nothing),
// and with mismatches Mismatches against those arguments finds some too.
func FuzzMainQueueArgs(f *testing.F) {
	f.Add("x-message-ttl", int64(5000), "x-max-priority", int64(10), true, false, "")
	f.Add("x-max-length", int64(1000), "x-queue-type", int64(0), true, false, "classic")
	f.Fuzz(func(t *testing.T, k1 string, v1 int64, k2 string, v2 int64, durable, autoDelete bool, typ string) {
		got := Existing{Type: typ, Durable: durable, AutoDelete: autoDelete, Arguments: map[string]any{k1: json.Number(fmt.Sprint(v1))}}
		if k2 != k1 {
			got.Arguments[k2] = v2
		}
		args, mismatches := MainQueueArgs(got)
		again := Mismatches(got, args)
		if len(mismatches) == 0 && len(again) > 0 {
			t.Fatalf("MainQueueArgs(%+v) = %s without mismatches, but a declaration of it differs: %v", got, args.JSON(), again)
		}
		if len(mismatches) > 0 && len(again) == 0 {
			t.Fatalf("MainQueueArgs(%+v) reports %v, but a declaration of %s matches", got, mismatches, args.JSON())
		}
	})
}
