package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
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

// attrs evaluates every attribute of body as Terraform would at count.index
// index (with jsonencode), failing on one outside allowed.
func attrs(t *testing.T, body *hclsyntax.Body, where string, index int, allowed ...string) map[string]cty.Value {
	t.Helper()
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(int64(index))})},
		Functions: map[string]function.Function{"jsonencode": stdlib.JSONEncodeFunc},
	}
	out := map[string]cty.Value{}
	for name, a := range body.Attributes {
		if !slices.Contains(allowed, name) {
			t.Errorf("%s: attribute %q is not one of %v", where, name, allowed)
		}
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			t.Fatalf("%s.%s: %s", where, name, diags.Error())
		}
		out[name] = v
	}
	return out
}

// The peer's configuration is what cyrilgdn/rabbitmq v1.10.1 documents: the
// provider rabbitmq (source cyrilgdn/rabbitmq) with endpoint, username and
// password; per logical queue two rabbitmq_queue with name, vhost and one
// settings block (durable = true, auto_delete = false, and at most one of
// arguments and arguments_json); nothing the schema lacks.
func TestPeerConfig(t *testing.T) {
	e := testEnv()
	prefix := e.namePrefix(kindPeer, 2)
	text, err := e.config(kindPeer, prefix)
	if err != nil {
		t.Fatal(err)
	}
	body := parse(t, text)

	providerAttrs := []string{"endpoint", "username", "password", "insecure", "cacert_file", "clientcert_file", "clientkey_file", "proxy"}
	var sawTerraform, sawProvider bool
	queues := map[string]bool{}
	for _, b := range body.Blocks {
		switch {
		case b.Type == "terraform":
			sawTerraform = true
			if len(b.Body.Blocks) != 1 || b.Body.Blocks[0].Type != "required_providers" {
				t.Fatalf("terraform block: want one required_providers block")
			}
			rp := attrs(t, b.Body.Blocks[0].Body, "required_providers", 0, "rabbitmq")
			if got := rp["rabbitmq"].GetAttr("source").AsString(); got != "cyrilgdn/rabbitmq" {
				t.Errorf("required_providers.rabbitmq.source = %q, want cyrilgdn/rabbitmq", got)
			}
		case b.Type == "provider" && reflect.DeepEqual(b.Labels, []string{"rabbitmq"}):
			sawProvider = true
			p := attrs(t, b.Body, "provider", 0, providerAttrs...)
			want := map[string]string{"endpoint": e.apiURL, "username": e.o.username, "password": e.o.password}
			if len(p) != len(want) {
				t.Errorf("provider attributes %v, want %v", p, want)
			}
			for k, v := range want {
				if got, ok := p[k]; !ok || got.AsString() != v {
					t.Errorf("provider.%s = %#v, want %q", k, got, v)
				}
			}
		case b.Type == "resource" && len(b.Labels) == 2 && b.Labels[0] == "rabbitmq_queue":
			queues[b.Labels[1]] = true
			checkPeerQueue(t, e, prefix, b)
		default:
			t.Errorf("unexpected block %s %v", b.Type, b.Labels)
		}
	}
	if !sawTerraform || !sawProvider || !reflect.DeepEqual(queues, map[string]bool{"dead": true, "q": true}) {
		t.Errorf("terraform block %v, provider block %v, rabbitmq_queue resources %v; want both blocks and the resources dead and q",
			sawTerraform, sawProvider, queues)
	}
}

func checkPeerQueue(t *testing.T, e *env, prefix string, b *hclsyntax.Block) {
	t.Helper()
	where := "rabbitmq_queue." + b.Labels[1]
	wantName := prefix + "1"
	if b.Labels[1] == "dead" {
		wantName += ".dead"
	}
	a := attrs(t, b.Body, where, 1, "count", "name", "vhost")
	for k, want := range map[string]cty.Value{"count": cty.NumberIntVal(int64(e.o.n)), "name": cty.StringVal(wantName), "vhost": cty.StringVal(e.vhost)} {
		if got, ok := a[k]; !ok || !got.RawEquals(want) {
			t.Errorf("%s.%s at index 1 = %#v, want %#v", where, k, got, want)
		}
	}
	if len(b.Body.Blocks) != 1 || b.Body.Blocks[0].Type != "settings" {
		t.Fatalf("%s: want exactly one settings block", where)
	}
	s := attrs(t, b.Body.Blocks[0].Body, where+".settings", 1, "durable", "auto_delete", "arguments", "arguments_json")
	if s["durable"] != cty.True || s["auto_delete"] != cty.False {
		t.Errorf("%s.settings: durable %#v, auto_delete %#v; want true and false", where, s["durable"], s["auto_delete"])
	}
	args, hasMap := s["arguments"]
	argsJSON, hasJSON := s["arguments_json"]
	if hasMap && hasJSON {
		t.Errorf("%s.settings: arguments and arguments_json conflict", where)
	}
	got := map[string]any{}
	if hasJSON {
		if err := json.Unmarshal([]byte(argsJSON.AsString()), &got); err != nil {
			t.Fatalf("%s.settings.arguments_json: %v", where, err)
		}
	} else if hasMap {
		for k, v := range args.AsValueMap() {
			got[k] = v.AsString()
		}
	}
	want := map[string]any{"x-queue-type": "classic"}
	if b.Labels[1] == "q" {
		want["x-message-ttl"] = float64(86400000)
		want["x-max-priority"] = float64(e.o.priority)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s arguments = %v, want %v", where, got, want)
	}
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
		for _, k := range []string{kindQueuey, kindWrites, kindPeer} {
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

// A refresh-only plan of the peer right after its apply: what v1.10.1
// printed on RabbitMQ 3.10 (shortened to two queues).
const peerRefreshLog = `Warning: Provider development overrides are in effect

The following provider development overrides are set in the CLI
configuration:
 - cyrilgdn/rabbitmq in /work/build/bench/plugin

rabbitmq_queue.q[0]: Refreshing state... [id=bench-x-peer-r1-0@queuey-bench-x]

Note: Objects have changed outside of Terraform

Terraform detected the following changes made outside of Terraform since the
last "terraform apply" which may have affected this plan:

  # rabbitmq_queue.q[0] has changed
  ~ resource "rabbitmq_queue" "q" {
        id    = "bench-x-peer-r1-0@queuey-bench-x"
        name  = "bench-x-peer-r1-0"
        # (1 unchanged attribute hidden)

      ~ settings {
          + arguments      = {}
            # (3 unchanged attributes hidden)
        }
    }

  # rabbitmq_queue.q[1] has changed
  ~ resource "rabbitmq_queue" "q" {
        id    = "bench-x-peer-r1-1@queuey-bench-x"
        name  = "bench-x-peer-r1-1"
        # (1 unchanged attribute hidden)

      ~ settings {
          + arguments      = {}
            # (3 unchanged attributes hidden)
        }
    }


This is a refresh-only plan, so Terraform will not take any actions to undo
these.
`

func TestPeerRefreshNoise(t *testing.T) {
	if !peerRefreshNoise(peerRefreshLog) {
		t.Error("the peer's null-to-{} arguments is not taken for its bookkeeping")
	}
	for name, log := range map[string]string{
		"no change listed": "No changes. Your infrastructure still matches the configuration.",
		"a flag changed": strings.Replace(peerRefreshLog, "+ arguments      = {}",
			"~ durable        = true -> false", 1),
		"a queue gone": strings.Replace(peerRefreshLog, `  ~ resource "rabbitmq_queue" "q" {`,
			`  - resource "rabbitmq_queue" "q" {`, 1),
		"arguments changed": strings.Replace(peerRefreshLog, "+ arguments      = {}",
			`~ arguments_json = jsonencode(...)`, 1),
	} {
		if peerRefreshNoise(log) {
			t.Errorf("%s: taken for the peer's bookkeeping", name)
		}
	}
}
