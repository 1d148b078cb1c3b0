package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// memPrivate is a private state for unit tests.
type memPrivate map[string][]byte

func (m memPrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return m[key], nil
}

func (m memPrivate) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	m[key] = value
	if len(value) == 0 { // as the framework's private state: an empty value removes the key
		delete(m, key)
	}
	return nil
}

func replaceModel(ttl string, force bool) queueModel {
	return queueModel{Name: types.StringValue("orders"), Vhost: types.StringValue("/"), MessageTTL: types.StringValue(ttl),
		MaxPriority: types.Int64Null(), ArgumentsJSON: jsontypes.NewNormalizedValue(`{"ttl":"` + ttl + `"}`), DeadQueue: types.StringValue("orders.dead"),
		HoldQueuePrefix: types.StringValue("orders.deferred."), ForceDestroy: types.BoolValue(force)}
}

// A replacement's note reaches the destroy of the replaced state only: it
// carries the planned force_destroy, and tells the destroy it is half of a
// replacement; in the replacement's own state it counts for nothing.
func TestDestroyIntent(t *testing.T) {
	ctx := context.Background()
	old := replaceModel("5s", false)
	for _, tc := range []struct {
		name                string
		note                func(memPrivate)
		state               queueModel
		wantForce, wantRepl bool
	}{
		{"plain destroy", func(memPrivate) {}, old, false, false},
		{"plain destroy with force_destroy", func(memPrivate) {}, replaceModel("5s", true), true, false},
		{"replacement planning force_destroy", func(p memPrivate) { noteReplacement(ctx, p, old, true, true) }, old, true, true},
		{"replacement without force_destroy", func(p memPrivate) { noteReplacement(ctx, p, old, true, false) }, old, false, true},
		{"the note in the new queue's state", func(p memPrivate) { noteReplacement(ctx, p, old, true, false) }, replaceModel("10s", false), false, false},
		{"an update removes the note", func(p memPrivate) {
			noteReplacement(ctx, p, old, true, true)
			noteReplacement(ctx, p, old, false, true)
		}, old, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := memPrivate{}
			tc.note(p)
			force, repl := destroyIntent(ctx, p, tc.state)
			if force != tc.wantForce || repl != tc.wantRepl {
				t.Errorf("force %v, replacing %v; want %v, %v", force, repl, tc.wantForce, tc.wantRepl)
			}
		})
	}
}

// A refusal's advice fits the destroy: a replacement's says to set
// force_destroy in the same apply; a whole destroy's forces this resource
// alone, apply and destroy both targeted at it (a plain apply would declare
// again what other resources of the run deleted); a partial destroy's never
// says apply.
func TestRefusalAdvice(t *testing.T) {
	lines := []string{"orders: 1 message, 0 consumers"}
	for _, tc := range []struct {
		name    string
		err     error
		want    []string
		notWant []string
	}{
		{"destroy", &refusedError{target: ownedQueues{vhost: "/", queue: "orders"}, lines: lines},
			[]string{`Nothing of queue "orders" was deleted`, "run destroy again. Or,", `force_destroy = true on the resource of queue "orders" only`,
				"terraform apply -target=ADDRESS", "terraform destroy -target=ADDRESS"}, []string{"force_destroy = true, apply"}},
		{"partial destroy", &refusedError{target: ownedQueues{vhost: "/", queue: "orders"}, lines: lines, done: []string{"orders.deferred.5000"}},
			[]string{"Deleted orders.deferred.5000", "run destroy again: it deletes only what is left", "Do not apply before it"},
			[]string{"Nothing", "force_destroy = true", "-target"}},
		{"replacement", &refusedError{target: ownedQueues{vhost: "/", queue: "orders", replacing: true}, lines: lines},
			[]string{"first half of replacing the queue", "force_destroy = true in the same apply as the change"},
			[]string{"run destroy again"}},
		{"not running", &notRunningError{target: ownedQueues{vhost: "/", queue: "orders"}},
			[]string{`Nothing of queue "orders" was deleted`, "run destroy again. Or,", "terraform destroy -target=ADDRESS"},
			[]string{"it deletes only what is left"}},
		{"not running, partial destroy", &notRunningError{target: ownedQueues{vhost: "/", queue: "orders"}, done: []string{"orders.deferred.5000"}},
			[]string{"Deleted orders.deferred.5000; then found", "run destroy again: it deletes only what is left", "Do not apply before it"},
			[]string{"Nothing", "force_destroy = true", "-target"}},
		{"replacement, partial", &notRunningError{target: ownedQueues{vhost: "/", queue: "orders", replacing: true}, done: []string{"orders.deferred.5000"}},
			[]string{"Deleted orders.deferred.5000", "first half of replacing", "in the same apply"}, []string{"run destroy again"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := tc.err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("%q has %q", msg, w)
				}
			}
		})
	}
}

// A rename forces replacement through name only: the read-only names that
// follow it are not marked; a change of suffixes alone marks them.
func TestReplacementPaths_derivedNames(t *testing.T) {
	old := replaceModel("5s", false)
	renamed := old
	renamed.Name = types.StringValue("invoices")
	renamed.DeadQueue = types.StringValue("invoices.dead")
	renamed.HoldQueuePrefix = types.StringValue("invoices.deferred.")
	if got := replacementPaths(old, renamed); fmt.Sprint(got) != fmt.Sprint(path.Paths{path.Root("name")}) {
		t.Errorf("rename: %v, want name only", got)
	}
	resuffixed := old
	resuffixed.DeadQueue = types.StringValue("orders.dlq")
	if got := replacementPaths(old, resuffixed); fmt.Sprint(got) != fmt.Sprint(path.Paths{path.Root("dead_queue")}) {
		t.Errorf("new dead_suffix: %v, want dead_queue", got)
	}
}

// A change of message_ttl, max_priority or of the arguments table (drift)
// replaces nothing: the update declares q again. name and vhost still do.
func TestReplacementPaths_argumentsChangeInPlace(t *testing.T) {
	old := replaceModel("5s", false)
	changed := replaceModel("10s", false)
	changed.MaxPriority = types.Int64Value(10)
	if got := replacementPaths(old, changed); len(got) != 0 {
		t.Errorf("a new TTL and priority: %v, want no replacement", got)
	}
	drifted := old
	drifted.ArgumentsJSON = jsontypes.NewNormalizedValue(`{"auto_delete":true}`)
	if got := replacementPaths(drifted, old); len(got) != 0 {
		t.Errorf("drift: %v, want no replacement", got)
	}
	moved := changed
	moved.Vhost = types.StringValue("other")
	if got := replacementPaths(old, moved); fmt.Sprint(got) != fmt.Sprint(path.Paths{path.Root("vhost")}) {
		t.Errorf("a new vhost with a new TTL: %v, want vhost", got)
	}
}
