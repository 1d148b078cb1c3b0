package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// benchEnv is an invocation as setup leaves it, without a broker.
var benchEnv = env{
	o: options{n: 3, ttl: "24h", priority: 10, username: "bench",
		password: `p"w\d ${x} %{y} $x`},
	id:     "0101t0000abcdef",
	vhost:  "queuey-bench-0101t0000abcdef",
	apiURL: "http://127.0.0.1:43210",
}

// atCountOne evaluates a generated configuration as Terraform would at count.index 1 (with
// jsonencode).
var atCountOne = &hcl.EvalContext{
	Variables: map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(1)})},
	Functions: map[string]function.Function{"jsonencode": stdlib.JSONEncodeFunc},
}

// readConfig evaluates a generated configuration in atCountOne: each attribute as the value its
// JSON reads back as, each block as a map under its type and labels joined by spaces. A repeated
// block fails, so the map says all the text holds.
func readConfig(t *testing.T, text string) map[string]any {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(text), "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("the configuration does not parse: %s\n%s", diags.Error(), text)
	}
	return readBody(t, f.Body.(*hclsyntax.Body)) //nolint:forcetypeassert // ParseConfig's
}

// readBody is readConfig's map of one body.
func readBody(t *testing.T, body *hclsyntax.Body) map[string]any {
	out := map[string]any{}
	for name, a := range body.Attributes {
		v, diags := a.Expr.Value(atCountOne)
		js, err := ctyjson.SimpleJSONValue{Value: v}.MarshalJSON()
		var got any
		if diags.HasErrors() || err != nil || json.Unmarshal(js, &got) != nil {
			t.Fatalf("%s: %s %v", name, diags.Error(), err)
		}
		out[name] = got
	}
	for _, b := range body.Blocks {
		key := strings.Join(append([]string{b.Type}, b.Labels...), " ")
		if _, repeated := out[key]; repeated {
			t.Errorf("more than one block %s", key)
		}
		out[key] = readBody(t, b.Body)
	}
	return out
}

// obj is a JSON object, as readConfig gives blocks and object values.
type obj = map[string]any

// The peer's configuration is what cyrilgdn/rabbitmq v1.10.1 documents: the
// provider rabbitmq (source cyrilgdn/rabbitmq) with endpoint, username and
// password; per logical queue two rabbitmq_queue with name, vhost and one
// settings block (durable = true, auto_delete = false, and one of arguments
// and arguments_json); nothing else.
func TestPeerConfig(t *testing.T) {
	e := benchEnv
	prefix := e.namePrefix(kindPeer, 2)
	text, err := e.config(kindPeer, prefix)
	if err != nil {
		t.Fatal(err)
	}
	want := obj{
		"terraform":         obj{"required_providers": obj{"rabbitmq": obj{"source": "cyrilgdn/rabbitmq"}}},
		"provider rabbitmq": obj{"endpoint": e.apiURL, "username": e.o.username, "password": e.o.password},
		"resource rabbitmq_queue dead": obj{"count": 3.0, "name": prefix + "1.dead", "vhost": e.vhost,
			"settings": obj{"durable": true, "auto_delete": false, "arguments": obj{"x-queue-type": "classic"}}},
		"resource rabbitmq_queue q": obj{"count": 3.0, "name": prefix + "1", "vhost": e.vhost,
			"settings": obj{"durable": true, "auto_delete": false,
				"arguments_json": `{"x-max-priority":10,"x-message-ttl":86400000,"x-queue-type":"classic"}`}},
	}
	if got := readConfig(t, text); !reflect.DeepEqual(got, want) {
		t.Errorf("the peer's configuration reads\n%v\nwant\n%v", got, want)
	}
}

// noop_writes runs in queuey's vhost, given in the configuration, and is
// served by queuey/noop; queuey's own configuration is left as it was (its
// vhost comes from RABBITMQ_VHOST).
func TestWritesConfig(t *testing.T) {
	e := benchEnv
	prefix := e.namePrefix(kindWrites, 1)
	text, err := e.config(kindWrites, prefix)
	if err != nil {
		t.Fatal(err)
	}
	want := obj{
		"terraform":     obj{"required_providers": obj{"noop": obj{"source": "queuey/noop"}}},
		"provider noop": obj{},
		"resource noop_writes q": obj{"count": 3.0, "name": prefix + "1", "vhost": e.vhost,
			"message_ttl": "24h", "max_priority": 10.0},
	}
	if got := readConfig(t, text); !reflect.DeepEqual(got, want) {
		t.Errorf("noop_writes' configuration reads\n%v\nwant\n%v", got, want)
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
	e := benchEnv
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
		if got := readConfig(t, fmt.Sprintf("x = %s\n", hclString(s)))["x"]; got != s {
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
