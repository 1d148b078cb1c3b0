package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// testEnv is an invocation as setup leaves it, without a broker.
func testEnv() *env {
	return &env{
		o: options{n: 3, ttl: "24h", priority: 10, username: "bench",
			password: `p"w\d ${x} %{y} $x`},
		id:     "0101t0000abcdef",
		vhost:  "queuey-bench-0101t0000abcdef",
		apiURL: "http://127.0.0.1:43210",
	}
}

// parse reads a generated configuration as Terraform would.
func parse(t *testing.T, text string) *hclsyntax.Body {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(text), "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("the configuration does not parse: %s\n%s", diags.Error(), text)
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		t.Fatalf("body is %T", f.Body)
	}
	return body
}

// evalCtx has what the generated expressions use: count.index and jsonencode.
func evalCtx(index int) *hcl.EvalContext {
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(int64(index))})},
		Functions: map[string]function.Function{"jsonencode": stdlib.JSONEncodeFunc},
	}
}

// attrs evaluates every attribute of body, failing on one outside allowed.
func attrs(t *testing.T, body *hclsyntax.Body, where string, index int, allowed ...string) map[string]cty.Value {
	t.Helper()
	out := map[string]cty.Value{}
	for name, a := range body.Attributes {
		if !contains(allowed, name) {
			t.Errorf("%s: attribute %q is not one of %v", where, name, allowed)
		}
		v, diags := a.Expr.Value(evalCtx(index))
		if diags.HasErrors() {
			t.Fatalf("%s.%s: %s", where, name, diags.Error())
		}
		out[name] = v
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// noop_writes runs in queuey's vhost, given in the configuration; queuey's
// own configuration is left as it was (its vhost comes from RABBITMQ_VHOST).
func TestWritesConfig(t *testing.T) {
	e := testEnv()
	text, err := e.config(kindWrites, e.namePrefix(kindWrites, 1))
	if err != nil {
		t.Fatal(err)
	}
	body := parse(t, text)
	var found bool
	for _, b := range body.Blocks {
		if b.Type == "resource" && reflect.DeepEqual(b.Labels, []string{"noop_writes", "q"}) {
			found = true
			a := attrs(t, b.Body, "noop_writes.q", 0, "count", "name", "vhost", "message_ttl", "max_priority")
			if got := a["vhost"]; got == cty.NilVal || got.AsString() != e.vhost {
				t.Errorf("noop_writes.q.vhost = %#v, want %q", got, e.vhost)
			}
		}
	}
	if !found {
		t.Fatalf("no resource noop_writes.q in\n%s", text)
	}
	if !strings.Contains(text, `noop = { source = "queuey/noop" }`) {
		t.Errorf("noop_writes is not served by queuey/noop:\n%s", text)
	}
	queuey, err := e.config(kindQueuey, e.namePrefix(kindQueuey, 1))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(queuey, "vhost") {
		t.Errorf("queuey_queue's configuration names a vhost:\n%s", queuey)
	}
}

// The kinds that share a vhost never take each other's queues for their own.
func TestNamePrefixesApart(t *testing.T) {
	e := testEnv()
	var prefixes []string
	for r := 1; r <= 12; r++ {
		for _, k := range []string{kindQueuey, kindWrites} {
			prefixes = append(prefixes, e.namePrefix(k, r))
		}
	}
	for i, a := range prefixes {
		for j, b := range prefixes {
			if i != j && strings.HasPrefix(b, a) {
				t.Errorf("prefix %q starts %q", a, b)
			}
		}
	}
}

func TestHCLString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uo\te`, "${var.x}", "%{if}", "$$", "a\nb\tc\x01", "100%", "ünï"} {
		body := parse(t, fmt.Sprintf("x = %s\n", hclString(s)))
		if got := attrs(t, body, "x", 0, "x")["x"].AsString(); got != s {
			t.Errorf("hclString(%q) reads back as %q", s, got)
		}
	}
}
