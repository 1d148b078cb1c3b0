package provider

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Source states as cyrilgdn/rabbitmq and rfd59/rabbitmq (terraform-plugin-sdk
// v2, schema version 0) write them: settings is a list of one block,
// arguments a map of strings, arguments_json a JSON string ("" when unset),
// id "name@vhost"; rfd59 adds the computed type.
func cyrilgdnState(name, vhost, settings string) string {
	return fmt.Sprintf(`{"id":%q,"name":%q,"settings":[%s],"vhost":%q}`, name+"@"+vhost, name, settings, vhost)
}

func rfd59State(name, vhost, typ, settings string) string {
	return fmt.Sprintf(`{"id":%q,"name":%q,"settings":[%s],"type":%q,"vhost":%q}`, name+"@"+vhost, name, settings, typ, vhost)
}

const (
	cyrilgdnTF   = "registry.terraform.io/cyrilgdn/rabbitmq"
	cyrilgdnTofu = "registry.opentofu.org/cyrilgdn/rabbitmq"
	rfd59TF      = "registry.terraform.io/rfd59/rabbitmq"
	rfd59Tofu    = "registry.opentofu.org/rfd59/rabbitmq"
)

// movedOrders is the state a move of a durable queue "orders" in "/" with a
// 5 s TTL and 10 priorities gives.
var movedOrders = map[string]string{
	"id": "%2F/orders", "name": "orders", "vhost": "/", "message_ttl": "5s", "max_priority": "10", "force_destroy": "false",
	"keep_messages_on_change": "false", "redeclaring_messages": "null",
	"arguments_json": `{"x-max-priority":10,"x-message-ttl":5000}`, "dead_queue": "null", "hold_queue_prefix": "null",
	"hold_queue_pattern": "null", "queues_pattern": "null", "write_pattern": "null",
	"identity.name": "orders", "identity.vhost": "/",
}

// sourceJSONArgs are settings with the TTL and priority of movedOrders in arguments_json.
const sourceJSONArgs = `{"arguments":null,"arguments_json":"{\"x-max-priority\":10,\"x-message-ttl\":5000}","auto_delete":false,"durable":true}`

// moveCases are sources of a move into queuey_queue: the attributes where the target state differs
// from movedOrders (the identity's prefixed "identity."), or each text the error's detail must hold.
var moveCases = []struct {
	name     string
	provider string
	typeName string
	version  int64
	state    string
	want     map[string]string
	errs     []string
}{
	{"arguments_json numbers", cyrilgdnTF, "rabbitmq_queue", 0, cyrilgdnState("orders", "/", sourceJSONArgs), nil, nil},
	{"arguments as the map of strings", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":{"x-max-priority":"10","x-message-ttl":"5000"},"arguments_json":"","auto_delete":false,"durable":true}`), nil, nil},
	{"arguments_json numeric strings, OpenTofu's hostname", cyrilgdnTofu, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":{},"arguments_json":"{\"x-max-priority\":\"10\",\"x-message-ttl\":\"5000\"}","auto_delete":false,"durable":true}`), nil, nil},
	{"OpenTofu before 1.12: the implied local name", "rabbitmq", "rabbitmq_queue", 0, cyrilgdnState("orders", "/", sourceJSONArgs), nil, nil},
	{"rfd59 with the classic type a 3.13 broker adds", rfd59TF, "rabbitmq_queue", 0,
		rfd59State("orders", "/", "classic", `{"arguments":null,"arguments_json":"{\"x-max-priority\":10,\"x-message-ttl\":5000,\"x-queue-type\":\"classic\"}","auto_delete":false,"durable":true}`), nil, nil},
	// cyrilgdn reads the arguments back into the map when all are strings: on 3.13+, the
	// x-queue-type classic the broker adds is one of them.
	{"x-queue-type classic in arguments, as cyrilgdn reads 3.13+ back", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":{"x-max-priority":"10","x-message-ttl":"5000","x-queue-type":"classic"},"arguments_json":"","auto_delete":false,"durable":true}`), nil, nil},
	{"only x-queue-type classic in arguments", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":{"x-queue-type":"classic"},"arguments_json":"","auto_delete":false,"durable":true}`),
		map[string]string{"message_ttl": "null", "max_priority": "null", "arguments_json": "{}"}, nil},
	{"rfd59 under OpenTofu, no arguments, a vhost to escape", rfd59Tofu, "rabbitmq_queue", 0,
		rfd59State("odd name@x", "team/a b", "classic", `{"arguments":null,"arguments_json":null,"auto_delete":false,"durable":true}`),
		map[string]string{"id": "team%2Fa%20b/odd%20name@x", "name": "odd name@x", "vhost": "team/a b",
			"identity.name": "odd name@x", "identity.vhost": "team/a b", "message_ttl": "null",
			"max_priority": "null", "arguments_json": "{}"}, nil},
	{"TTL rendered as Read renders it, another vhost", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "jobs", `{"arguments":{"x-message-ttl":"90000000"},"arguments_json":"","auto_delete":false,"durable":true}`),
		map[string]string{"id": "jobs/orders", "vhost": "jobs", "identity.vhost": "jobs", "message_ttl": "25h",
			"max_priority": "null", "arguments_json": `{"x-message-ttl":90000000}`}, nil},
	{"not durable", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":null,"arguments_json":"","auto_delete":false,"durable":false}`), nil,
		[]string{`Queue "orders" in vhost "/"`, "settings.durable: rabbitmq_queue has false, the backend declares true", "Nothing was moved"}},
	{"auto-delete", rfd59Tofu, "rabbitmq_queue", 0,
		rfd59State("orders", "/", "classic", `{"arguments":null,"arguments_json":"","auto_delete":true,"durable":true}`), nil,
		[]string{"settings.auto_delete: rabbitmq_queue has true, the backend declares false"}},
	{"an argument the backend never declares", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":null,"arguments_json":"{\"x-max-length\":1000,\"x-message-ttl\":5000}","auto_delete":false,"durable":true}`), nil,
		[]string{`settings.arguments_json "x-max-length": rabbitmq_queue has 1000, the backend declares absent`}},
	{"a string argument", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":{"x-dead-letter-exchange":"dlx"},"arguments_json":"","auto_delete":false,"durable":true}`), nil,
		[]string{`settings.arguments "x-dead-letter-exchange": rabbitmq_queue has "dlx", the backend declares absent`}},
	{"values out of range", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":{"x-max-priority":"0","x-message-ttl":"4294967296"},"arguments_json":"","auto_delete":false,"durable":true}`), nil,
		[]string{`"x-max-priority": rabbitmq_queue has 0, the backend declares an integer from 1 to 255`,
			`"x-message-ttl": rabbitmq_queue has 4294967296, the backend declares an integer from 0 to 4294967295`}},
	{"a quorum queue", rfd59TF, "rabbitmq_queue", 0,
		rfd59State("orders", "/", "quorum", `{"arguments":null,"arguments_json":"","auto_delete":false,"durable":true}`), nil,
		[]string{"type: rabbitmq_queue has quorum, the backend declares classic"}},
	{"x-queue-type quorum in arguments", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":{"x-queue-type":"quorum"},"arguments_json":"","auto_delete":false,"durable":true}`), nil,
		[]string{`settings.arguments "x-queue-type": rabbitmq_queue has "quorum", the backend declares absent`}},
	{"a reserved name", cyrilgdnTF, "rabbitmq_queue", 0, cyrilgdnState("amq.orders", "/", sourceJSONArgs), nil,
		[]string{"rabbitmq_queue name", `starts with "amq."`, "nothing was moved"}},
	{"no settings block", cyrilgdnTF, "rabbitmq_queue", 0, `{"id":"orders@/","name":"orders","settings":[],"vhost":"/"}`, nil,
		[]string{"unreadable rabbitmq_queue state: it has 0 settings blocks", "import the queue instead"}},
	{"both arguments and arguments_json", cyrilgdnTF, "rabbitmq_queue", 0,
		cyrilgdnState("orders", "/", `{"arguments":{"x-message-ttl":"5000"},"arguments_json":"{\"x-message-ttl\":5000}","auto_delete":false,"durable":true}`), nil,
		[]string{"both settings.arguments and settings.arguments_json are set"}},
	{"another schema version", cyrilgdnTF, "rabbitmq_queue", 1, cyrilgdnState("orders", "/", sourceJSONArgs), nil,
		[]string{"schema version 1", "import the queue instead"}},
	{"another provider's rabbitmq_queue", "registry.terraform.io/someone/rabbitmq", "rabbitmq_queue", 0, cyrilgdnState("orders", "/", sourceJSONArgs), nil,
		[]string{"does not include support for the given source resource", "someone/rabbitmq"}},
	{"another resource type of the same provider", cyrilgdnTF, "rabbitmq_exchange", 0, cyrilgdnState("orders", "/", sourceJSONArgs), nil,
		[]string{"does not include support for the given source resource", "rabbitmq_exchange"}},
}

// Each source state is moved through the provider's protocol server, as the CLIs move it. tftypes
// prints a value Type<"value"> or Type<null>, of which the value is kept (a string as itself, a
// number or a bool as tftypes prints it), and null as "null".
func TestMoveStateFromRabbitMQQueue(t *testing.T) {
	t.Parallel()
	srv := providerserver.NewProtocol6(New("test")())()
	schemas, err := srv.GetProviderSchema(t.Context(), &tfprotov6.GetProviderSchemaRequest{})
	ids, idErr := srv.GetResourceIdentitySchemas(t.Context(), &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err = errors.Join(err, idErr); err != nil {
		t.Fatal(err)
	}
	typs := []tftypes.Type{schemas.ResourceSchemas["queuey_queue"].ValueType(), ids.IdentitySchemas["queuey_queue"].ValueType()}
	for _, tt := range moveCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := srv.MoveResourceState(t.Context(), &tfprotov6.MoveResourceStateRequest{SourceProviderAddress: tt.provider,
				SourceTypeName: tt.typeName, SourceSchemaVersion: tt.version, SourceState: &tfprotov6.RawState{JSON: []byte(tt.state)}, TargetTypeName: "queuey_queue"})
			if err != nil {
				t.Fatal(err)
			}
			diags := ""
			for _, d := range resp.Diagnostics {
				diags += fmt.Sprintf("%v: %s: %s\n", d.Severity, d.Summary, d.Detail)
			}
			var got map[string]string
			if resp.TargetState != nil {
				if resp.TargetIdentity == nil {
					t.Fatal("the move returned no identity")
				}
				got = map[string]string{}
				for i, v := range []*tfprotov6.DynamicValue{resp.TargetState, resp.TargetIdentity.IdentityData} {
					prefix := "" // the state's attributes as they are, the identity's prefixed
					if i == 1 {
						prefix = "identity."
					}
					var obj map[string]tftypes.Value
					val, err := v.Unmarshal(typs[i])
					if err = errors.Join(err, val.As(&obj)); err != nil {
						t.Fatal(err)
					}
					for k, a := range obj {
						s := strings.TrimSuffix(strings.TrimPrefix(a.String(), a.Type().String()+"<"), ">")
						got[prefix+k] = strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
					}
				}
			}
			if tt.errs != nil {
				if got != nil {
					t.Fatalf("moved state %v, want an error", got)
				}
				for _, want := range tt.errs {
					if !strings.Contains(diags, want) {
						t.Errorf("error lacks %q:\n%s", want, diags)
					}
				}
				return
			}
			if diags != "" {
				t.Fatalf("unexpected diagnostics:\n%s", diags)
			}
			want := maps.Clone(movedOrders)
			maps.Copy(want, tt.want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("moved state:\n got %v\nwant %v", got, want)
			}
		})
	}
}
