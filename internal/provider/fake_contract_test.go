package provider

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// The contract of the fake management API (internal/brokertest), which every
// unit test believes: each row is a request the provider's client sends
// (internal/broker) and what RabbitMQ answers it, status and shape. These
// rows and those of the fake's AMQP port (amqpRows) run against the fake in
// each version it models (TestFakeContract) and against the acceptance
// tests' broker (TestAccFakeContract), so that the fake cannot answer
// otherwise than a broker does unnoticed.

// Queries the client sends (internal/broker/queues.go): a GET of one queue,
// with its count, and the listings by what they ask.
const (
	qGet        = "disable_stats=true&columns=name,type,durable,auto_delete,exclusive,arguments,state,node"
	qGetCounts  = "disable_stats=true&enable_queue_totals=true&columns=name,state,node,messages"
	qList       = "disable_stats=true&sort=&columns=name,state,node"
	qListCounts = "enable_queue_totals=true&disable_stats=true&sort=&columns=name,state,node,messages"
	qListDecl   = "disable_stats=true&sort=&columns=name,state,node,type,durable,auto_delete,exclusive,arguments"
	qListAll    = "enable_queue_totals=true&disable_stats=true&sort=&columns=name,state,node,type,durable,auto_delete,exclusive,arguments,messages"
)

// contractRow is one request and its answer (see runContract).
type contractRow struct {
	name     string
	declare  string
	messages int
	consumer bool
	method   string
	// path is below /api/; {none} is a vhost that does not exist.
	path string
	body string
	want shape
	// by replaces want on the versions it names.
	by map[brokertest.Version]shape

	// put is sent before the request, each path (below /api/) with its body, and must answer 201.
	put map[string]string
	// run, when set, is what the row does instead of a request (the AMQP rows).
	run func(t *testing.T, e amqpEnv)
}

// shape is what an answer must be: its status, and a body that is empty, an
// object with fields, or a list of length elements (any when -1) each with
// fields.
type shape struct {
	status int
	body   bodyKind
	length int
	// fields is a JSON object of the fields the object or each element must
	// have and their values; the value "<string>", "<number>", "<bool>",
	// "<object>" or "<array>" stands for any value of that kind, and {v},
	// {q} and {user} for the row's vhost, queue and user.
	fields string
	// only: the fields named are all the body has.
	only bool
}

type bodyKind int

const (
	bodyNone bodyKind = iota
	bodyObject
	bodyList
)

// on310 is a row's answers by version: s310 on 3.10, s4x on 4.0 and 4.3.
func on310(s310, s4x shape) map[brokertest.Version]shape {
	return map[brokertest.Version]shape{brokertest.V310: s310, brokertest.V40: s4x, brokertest.V43: s4x}
}

// notFound is every version's 404 of a vhost or queue that does not exist.
var notFound = shape{status: 404, body: bodyObject, only: true,
	fields: `{"error":"Object Not Found","reason":"Not Found"}`}

// refused is a 400 with the reason RabbitMQ gives.
func refused(reason string) shape {
	// The reasons are ASCII, which Go quotes as JSON does.
	return shape{status: 400, body: bodyObject, only: true, fields: fmt.Sprintf(`{"error":"bad_request","reason":%q}`, reason)}
}

const (
	declTTL     = `{"durable":true,"auto_delete":false,"arguments":{"x-message-ttl":1000}}`
	declTTL2000 = `{"durable":true,"auto_delete":false,"arguments":{"x-message-ttl":2000}}`
	declNone    = `{"durable":true,"auto_delete":false,"arguments":{}}`
	// declFlag differs in auto_delete: a durable:false declaration would
	// trip 4.x's deprecation of transient queues before the equivalence.
	declFlag = `{"durable":true,"auto_delete":true,"arguments":{"x-message-ttl":1000}}`
)

// queueFields are a queue's declaration as a GET (body bodyObject) or a
// listing of one element (bodyList) with declarations reports it (declared
// with declTTL), by version, with the fields of extra (`,"field":value`).
func queueFields(body bodyKind, state310, state4x, extra string) map[brokertest.Version]shape {
	base := func(state, args string) shape {
		return shape{status: 200, body: body, length: 1, only: true, fields: `{"name":"{q}","type":"classic","durable":true,"auto_delete":false,` +
			`"exclusive":false,"arguments":` + args + `,"state":"` + state + `","node":"<string>"` + extra + `}`}
	}
	return on310(base(state310, `{"x-message-ttl":1000}`), base(state4x, `{"x-message-ttl":1000,"x-queue-type":"classic"}`))
}

// Policies (internal/broker/policies.go): the two listings the provider reads, and the writes the
// acceptance tests make through brokertest.Admin.
const (
	polBody = `{"pattern":"^contract-","apply-to":"queues","definition":{"message-ttl":4294967295,"max-length":3},"priority":5}`
	// polBare leaves out apply-to and priority.
	polBare = `{"pattern":"^contract-","definition":{"expires":8000}}`
)

// policyListed is polBody as a listing of one element reports it.
var policyListed = shape{status: 200, body: bodyList, length: 1, only: true, fields: `{"vhost":"{v}","name":"contract-p",` +
	`"pattern":"^contract-","apply-to":"queues","definition":{"max-length":3,"message-ttl":4294967295},"priority":5}`}

// applyToUnknown is the refusal of an apply-to the version does not know.
func applyToUnknown(value string) map[brokertest.Version]shape {
	return on310(refused("Validation failed\n\napply-to '"+value+"' unrecognised; should be 'queues', 'exchanges' or 'all'\n"),
		refused("Validation failed\n\napply-to '"+value+"' unrecognised; should be one of: 'queues', 'classic_queues',  "+
			"'quorum_queues', 'streams', 'exchanges', or 'all'\n"))
}

var contractRows = []contractRow{
	{name: "vhost", method: "GET", path: "vhosts/{v}", by: on310(
		shape{status: 200, body: bodyObject, fields: `{"name":"{v}","default_queue_type":"undefined","metadata":"<object>"}`},
		shape{status: 200, body: bodyObject, fields: `{"name":"{v}","default_queue_type":"classic","metadata":{"description":"","tags":[],"default_queue_type":"classic"}}`})},
	{name: "vhost missing", method: "GET", path: "vhosts/{none}", want: notFound},
	{name: "vhosts listing", method: "GET", path: "vhosts?columns=name,default_queue_type,metadata", by: on310(
		shape{status: 200, body: bodyList, length: -1, only: true, fields: `{"name":"<string>","default_queue_type":"<string>","metadata":"<object>"}`},
		// 4.x answers every field, whatever the columns.
		shape{status: 200, body: bodyList, length: -1, fields: `{"name":"<string>","default_queue_type":"<string>","metadata":"<object>","tracing":"<bool>"}`})},
	{name: "node default queue type", method: "GET", path: "overview?columns=default_queue_type", by: on310(
		shape{status: 200, body: bodyList, length: 0},
		shape{status: 200, body: bodyObject, only: true, fields: `{"default_queue_type":"classic"}`})},
	{name: "broker version", method: "GET", path: "overview?columns=rabbitmq_version",
		want: shape{status: 200, body: bodyObject, only: true, fields: `{"rabbitmq_version":"<string>"}`}},
	{name: "whoami", method: "GET", path: "whoami", by: on310(
		shape{status: 200, body: bodyObject, only: true, fields: `{"name":"{user}","tags":"<array>"}`},
		shape{status: 200, body: bodyObject, only: true, fields: `{"name":"{user}","tags":"<array>","is_internal_user":"<bool>"}`})},
	{name: "nodes", method: "GET", path: "nodes?columns=name,running",
		want: shape{status: 200, body: bodyList, length: 1, only: true, fields: `{"name":"<string>","running":true}`}},
	{name: "not the management API, escaped slash", method: "GET", path: "api/vhosts/%2F", want: shape{status: 400}},
	{name: "not the management API", method: "GET", path: "api/vhosts/{v}", want: notFound},

	{name: "declare", method: "PUT", path: "queues/{v}/{q}", body: declTTL, want: shape{status: 201}},
	{name: "declare again", declare: declTTL, method: "PUT", path: "queues/{v}/{q}", body: declTTL, want: shape{status: 204}},
	{name: "declare x-queue-type classic again", declare: declNone, method: "PUT", path: "queues/{v}/{q}",
		body: `{"durable":true,"auto_delete":false,"arguments":{"x-queue-type":"classic"}}`, want: shape{status: 204}},
	{name: "declare without an argument", declare: declTTL, method: "PUT", path: "queues/{v}/{q}", body: declNone,
		want: refused("inequivalent arg 'x-message-ttl' for queue '{q}' in vhost '{v}': received none but current is the value '1000' of type 'long'")},
	{name: "declare another value", declare: declTTL, method: "PUT", path: "queues/{v}/{q}", body: declTTL2000,
		want: refused("inequivalent arg 'x-message-ttl' for queue '{q}' in vhost '{v}': received '2000' but current is '1000'")},
	{name: "declare another flag", declare: declTTL, method: "PUT", path: "queues/{v}/{q}", body: declFlag,
		want: refused("inequivalent arg 'auto_delete' for queue '{q}' in vhost '{v}': received 'true' but current is 'false'")},
	{name: "declare in a missing vhost", method: "PUT", path: "queues/{none}/{q}", body: declTTL,
		want: shape{status: 404, body: bodyObject, only: true, fields: `{"error":"not_found","reason":"vhost_not_found"}`}},

	{name: "get declaration", declare: declTTL, messages: 1, method: "GET", path: "queues/{v}/{q}?" + qGet,
		by: queueFields(bodyObject, "live", "running", "")},
	{name: "get counts", declare: declTTL, messages: 1, method: "GET", path: "queues/{v}/{q}?" + qGetCounts, by: on310(
		shape{status: 200, body: bodyObject, only: true, fields: `{"name":"{q}","state":"live","node":"<string>"}`},
		shape{status: 200, body: bodyObject, only: true, fields: `{"name":"{q}","state":"running","node":"<string>","messages":1}`})},
	{name: "get missing queue", method: "GET", path: "queues/{v}/{q}?" + qGet, want: notFound},
	{name: "get queue of a missing vhost", method: "GET", path: "queues/{none}/{q}?" + qGet, want: notFound},

	{name: "list names", declare: declTTL, messages: 1, method: "GET", path: "queues/{v}?" + qList, by: on310(
		shape{status: 200, body: bodyList, length: 1, only: true, fields: `{"name":"{q}","state":"live","node":"<string>"}`},
		shape{status: 200, body: bodyList, length: 1, only: true, fields: `{"name":"{q}","state":"running","node":"<string>"}`})},
	{name: "list counts", declare: declTTL, messages: 1, method: "GET", path: "queues/{v}?" + qListCounts,
		want: shape{status: 200, body: bodyList, length: 1, only: true, fields: `{"name":"{q}","state":"running","node":"<string>","messages":1}`}},
	{name: "list declarations", declare: declTTL, messages: 1, method: "GET", path: "queues/{v}?" + qListDecl,
		by: queueFields(bodyList, "live", "running", "")},
	{name: "list declarations and counts", declare: declTTL, messages: 1, method: "GET", path: "queues/{v}?" + qListAll,
		by: queueFields(bodyList, "running", "running", `,"messages":1`)},
	{name: "list an empty vhost", method: "GET", path: "queues/{v}?" + qListCounts, want: shape{status: 200, body: bodyList, length: 0}},
	{name: "list a missing vhost", method: "GET", path: "queues/{none}?" + qListCounts, want: notFound},

	{name: "consumers", declare: declTTL, consumer: true, method: "GET", path: "consumers/{v}?columns=queue.name",
		want: shape{status: 200, body: bodyList, length: 1, only: true, fields: `{"queue":{"name":"{q}"}}`}},
	{name: "no consumers", declare: declTTL, method: "GET", path: "consumers/{v}?columns=queue.name", want: shape{status: 200, body: bodyList, length: 0}},
	{name: "consumers of a missing vhost", method: "GET", path: "consumers/{none}?columns=queue.name", want: notFound},

	{name: "guarded delete of a queue with a message", declare: declTTL, messages: 1, method: "DELETE",
		path: "queues/{v}/{q}?if-empty=true&if-unused=true", want: refused("queue '{q}' in vhost '{v}' not empty")},
	{name: "guarded delete of a queue with a consumer", declare: declTTL, consumer: true, method: "DELETE",
		path: "queues/{v}/{q}?if-empty=true&if-unused=true", want: refused("queue '{q}' in vhost '{v}' in use")},
	{name: "guarded delete of an empty unused queue", declare: declTTL, method: "DELETE",
		path: "queues/{v}/{q}?if-empty=true&if-unused=true", want: shape{status: 204}},
	{name: "guarded delete of a missing queue", method: "DELETE", path: "queues/{v}/{q}?if-empty=true&if-unused=true", want: notFound},
	{name: "delete of a queue with a message", declare: declTTL, messages: 1, method: "DELETE", path: "queues/{v}/{q}",
		want: shape{status: 204}},

	{name: "policies", put: map[string]string{"policies/{v}/contract-p": polBody}, method: "GET", path: "policies/{v}", want: policyListed},
	{name: "operator policies", put: map[string]string{"operator-policies/{v}/contract-p": polBody}, method: "GET",
		path: "operator-policies/{v}", want: policyListed},
	{name: "policy put without apply-to and priority", put: map[string]string{"policies/{v}/contract-p": polBare}, method: "GET",
		path: "policies/{v}/contract-p", want: shape{status: 200, body: bodyObject, only: true, fields: `{"vhost":"{v}",` +
			`"name":"contract-p","pattern":"^contract-","apply-to":"all","definition":{"expires":8000},"priority":0}`}},
	{name: "policies of an empty vhost", method: "GET", path: "policies/{v}", want: shape{status: 200, body: bodyList, length: 0}},
	{name: "operator policies of an empty vhost", method: "GET", path: "operator-policies/{v}", want: shape{status: 200, body: bodyList, length: 0}},
	{name: "policies of a missing vhost", method: "GET", path: "policies/{none}", want: notFound},
	{name: "operator policies of a missing vhost", method: "GET", path: "operator-policies/{none}", want: notFound},

	{name: "put a policy", method: "PUT", path: "policies/{v}/contract-p", body: polBody, want: shape{status: 201}},
	{name: "put a policy again", put: map[string]string{"policies/{v}/contract-p": polBody}, method: "PUT",
		path: "policies/{v}/contract-p", body: polBare, want: shape{status: 204}},
	{name: "put an operator policy again", put: map[string]string{"operator-policies/{v}/contract-p": polBody}, method: "PUT",
		path: "operator-policies/{v}/contract-p", body: polBare, want: shape{status: 204}},
	// 4.0 answers a PUT of an operator policy in a missing vhost with a 500 and no body: no row.
	{name: "put a policy in a missing vhost", method: "PUT", path: "policies/{none}/contract-p", body: polBody,
		want: shape{status: 404, body: bodyObject, only: true, fields: `{"error":"not_found","reason":"vhost_not_found"}`}},
	{name: "put a policy for classic queues", method: "PUT", path: "policies/{v}/contract-p",
		body: `{"pattern":"^contract-","apply-to":"classic_queues","definition":{"expires":8000}}`,
		by:   on310(applyToUnknown("classic_queues")[brokertest.V310], shape{status: 201})},
	{name: "put a policy with an empty apply-to", method: "PUT", path: "policies/{v}/contract-p",
		body: `{"pattern":"^contract-","apply-to":"","definition":{"expires":8000}}`, by: applyToUnknown("")},
	{name: "delete a policy", put: map[string]string{"policies/{v}/contract-p": polBody}, method: "DELETE",
		path: "policies/{v}/contract-p", want: shape{status: 204}},
	{name: "delete an operator policy", put: map[string]string{"operator-policies/{v}/contract-p": polBody}, method: "DELETE",
		path: "operator-policies/{v}/contract-p", want: shape{status: 204}},
	{name: "delete a missing policy", method: "DELETE", path: "policies/{v}/contract-p", want: notFound},
	{name: "delete a missing operator policy", method: "DELETE", path: "operator-policies/{v}/contract-p", want: notFound},
}

// contractBroker is the broker the rows run on: the fake (TestFakeContract) or
// a real one (TestAccFakeContract).
type contractBroker struct {
	v          brokertest.Version // whose answers the rows expect
	endpoint   string             // the management API
	user, pass string
	http       *http.Client
	// amqpURL is the AMQP URL of a vhost, logging in as user (on a real broker: the URL of
	// RABBITMQ_AMQP_URL, or the test user at 127.0.0.1:5672; it must log in as the endpoint's user).
	amqpURL func(vhost string) string
	// addVhost makes the vhost name, of defaultQueueType ("" for the broker's
	// own), for one row, gone at the end of it: createVhost on a real broker.
	addVhost func(t *testing.T, name, defaultQueueType string)
	// consumed returns once the management API lists the consumer just
	// opened on queue.
	consumed func(t *testing.T, vhost, queue string)
	// refuseRead makes the user one who may configure and write in vhost
	// but not read queue (consume, purge).
	refuseRead func(t *testing.T, vhost, queue string)
}

// runContract runs the rows of both contracts on b. Each row runs in a vhost
// of its own ({v}), where its queue ({q}) is declared (or the row's paths
// put), then given messages (message 0, message 1, ..., persistent,
// confirmed) and a consumer over AMQP; then the row's request is sent, or its
// run called with an AMQP connection open.
func runContract(t *testing.T, b contractBroker) {
	for _, row := range slices.Concat(contractRows, amqpRows) {
		t.Run(row.name, func(t *testing.T) {
			e := amqpEnv{b: b, vhost: uniqueName("contract"), queue: "contract-q"}
			e.url = b.amqpURL(e.vhost)
			b.addVhost(t, e.vhost, "")
			inPath := strings.NewReplacer("{v}", url.PathEscape(e.vhost), "{q}", url.PathEscape(e.queue), "{none}", "tfacc-contract-none")
			if row.declare != "" { // no row has both
				row.put = map[string]string{"queues/{v}/{q}": row.declare}
			}
			for path, body := range row.put {
				if status, answer := contractSend(t, b, "PUT", inPath.Replace(path), body); status != 201 {
					t.Fatalf("PUT %s: HTTP %d %s", path, status, answer)
				}
			}
			e.conn = orFatal(amqp.DialConfig(e.url, amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)}))(t)
			t.Cleanup(func() { _ = e.conn.Close() })
			publish(t, orFatal(e.conn.Channel())(t), e.queue, row.messages)
			if row.consumer {
				e.consume(t, orFatal(e.conn.Channel())(t))
				b.consumed(t, e.vhost, e.queue)
			}
			if row.run != nil {
				row.run(t, e)
				return
			}
			status, body := contractSend(t, b, row.method, inPath.Replace(row.path), row.body)
			if err := cmp.Or(row.by[b.v], row.want).check(status, body, strings.NewReplacer("{v}", e.vhost, "{q}", e.queue, "{user}", b.user)); err != nil {
				t.Errorf("RabbitMQ %s: %s %s: %v\nanswer: HTTP %d %s", b.v, row.method, row.path, err, status, body)
			}
		})
	}
}

// contractSend sends one request below /api/ and returns the status and body.
// A broker without an endpoint is the acceptance tests' (as managementPost
// gives it), with their user.
func contractSend(t *testing.T, b contractBroker, method, path, body string) (int, []byte) {
	t.Helper()
	endpoint := strings.TrimRight(cmp.Or(b.endpoint, os.Getenv(EnvEndpoint)), "/")
	req := orFatal(http.NewRequestWithContext(t.Context(), method, endpoint+"/api/"+path, strings.NewReader(body)))(t)
	req.SetBasicAuth(cmp.Or(b.user, testUser()), cmp.Or(b.pass, testPassword()))
	req.Header.Set("Content-Type", "application/json")
	resp := orFatal(b.http.Do(req))(t)
	defer func() { _ = resp.Body.Close() }()
	return resp.StatusCode, orFatal(io.ReadAll(resp.Body))(t)
}

// check compares an answer with s: the status, then the body's kind and
// length, then the fields of the object, or of each element of the list,
// with s.fields, the answer's value of a field s.fields gives as a kind
// ("<string>", ...) read as its kind. A field s.fields does not name is a
// difference when s.only. An object is read as a list of one element.
func (s shape) check(status int, body []byte, names *strings.Replacer) error {
	var v any
	err := json.Unmarshal(body, &v)
	items, isList := v.([]any)
	switch {
	case status != s.status:
		return fmt.Errorf("status %d, want %d", status, s.status)
	case s.body == bodyNone && len(bytes.TrimSpace(body)) != 0:
		return errors.New("a body, want none")
	case s.body == bodyNone:
		return nil
	case err != nil:
		return fmt.Errorf("body is not JSON: %v", err)
	case s.body == bodyObject:
		items = []any{v}
	case !isList:
		return errors.New("body is not a list")
	case s.length >= 0 && len(items) != s.length:
		return fmt.Errorf("%d elements, want %d", len(items), s.length)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(names.Replace(cmp.Or(s.fields, "{}"))), &want); err != nil {
		return fmt.Errorf("the row's fields are no JSON object: %v", err)
	}
	wants := make([]any, len(items))
	for i, item := range items {
		wants[i] = want
		m, _ := item.(map[string]any) // an element that is no object differs from want as it is
		for k, g := range m {
			if kind, _ := want[k].(string); strings.HasPrefix(kind, "<") {
				m[k] = jsonKinds[fmt.Sprintf("%T", g)]
			} else if _, named := want[k]; !named && !s.only {
				delete(m, k)
			}
		}
	}
	if diff := gocmp.Diff(wants, items); diff != "" {
		return fmt.Errorf("elements differ (-want +got):\n%s", diff)
	}
	return nil
}

// jsonKinds names the JSON type of a decoded value by its Go type, as
// shape.fields does.
var jsonKinds = map[string]string{"string": "<string>", "float64": "<number>", "bool": "<bool>",
	"map[string]interface {}": "<object>", "[]interface {}": "<array>", "<nil>": "<null>"}

// TestFakeContract runs the contract on the fake, with its AMQP port, in each
// version it models, and as most unit tests use it: without AnswerAs, when it
// answers as DefaultVersion.
func TestFakeContract(t *testing.T) {
	for _, v := range append(slices.Clone(brokertest.Versions), "") {
		t.Run(cmp.Or(string(v), "default"), func(t *testing.T) {
			s := brokertest.New(t)
			if v != "" {
				s.AnswerAs(v)
			}
			a := s.ServeAMQP(t)
			a.Login("u", "p")
			runContract(t, contractBroker{v: cmp.Or(v, brokertest.DefaultVersion), endpoint: s.URL, user: "u", pass: "p", http: s.Client(),
				amqpURL: func(vhost string) string { return "amqp://u:p@" + a.Addr() + "/" + url.PathEscape(vhost) },
				addVhost: func(t *testing.T, name, defaultQueueType string) {
					s.AddVhost(name, defaultQueueType)
					t.Cleanup(func() { s.RemoveVhost(name) })
				},
				// The fake's AMQP consumers are not the management API's: the queue counts one.
				consumed: func(_ *testing.T, vhost, queue string) {
					q, _ := s.Queue(vhost, queue)
					q.Consumers++
					s.PutQueue(vhost, q)
				},
				refuseRead: func(_ *testing.T, vhost, queue string) { a.Refuse(vhost, queue) },
			})
		})
	}
}
