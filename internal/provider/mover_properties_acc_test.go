package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/mover"
)

// A move keeps every property a message carries, but amqp091-go writes no property set to its
// zero value: a message published with an explicit priority 0 comes back with no priority (which
// a classic queue reads as 0), while priority 3 and the message ids are kept. The
// messages are published and read through the management API, whose answers show a property's
// absence, unlike amqp091-go's zero-valued fields.
func TestAccMove_zeroPriorityComesBackAbsent(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	name := actionTopology(t, "prio0")
	sent := []map[string]any{
		{"message_id": "p0", "priority": 0},
		{"message_id": "p3", "priority": 3},
		{"message_id": "none"},
	}
	for _, props := range sent {
		managementPost(t, "exchanges/%2F/amq.default/publish", map[string]any{
			"properties": props, "routing_key": name + ".dead", "payload": "x", "payload_encoding": "string"}, nil)
	}
	if before := getMessages(t, name+".dead", len(sent), "reject_requeue_true"); before[0]["priority"] == nil {
		t.Fatalf("the broker holds p0 without its priority before the move: %v", before[0])
	}
	moved, err := accMover(t).Move(context.Background(), mover.Move{Vhost: "/", From: name + ".dead", To: name})
	if err != nil || moved != len(sent) {
		t.Fatalf("moved %d of %d: %v", moved, len(sent), err)
	}
	// q is a priority queue: p3 comes out first, so the messages are compared by id.
	got := map[string]string{}
	for _, props := range getMessages(t, name, len(sent), "ack_requeue_false") {
		got[fmt.Sprint(props["message_id"])] = fmt.Sprint(props)
	}
	for id, want := range map[string]string{
		"p0": "map[message_id:p0]", "p3": "map[message_id:p3 priority:3]", "none": "map[message_id:none]",
	} {
		if got[id] != want {
			t.Errorf("message %s came back with properties %s, want %s", id, got[id], want)
		}
	}
}

// getMessages reads n messages of queue through the management API (ackmode as it takes) and
// returns their properties, in order.
func getMessages(t *testing.T, queue string, n int, ackmode string) []map[string]any {
	t.Helper()
	var msgs []struct {
		Properties map[string]any `json:"properties"`
	}
	managementPost(t, "queues/%2F/"+url.PathEscape(queue)+"/get",
		map[string]any{"count": n, "ackmode": ackmode, "encoding": "auto"}, &msgs)
	if len(msgs) != n {
		t.Fatalf("%s holds %d messages, want %d", queue, len(msgs), n)
	}
	out := make([]map[string]any, n)
	for i, m := range msgs {
		delete(m.Properties, "headers") // an empty table on some versions, absent on others
		delete(m.Properties, "delivery_mode")
		out[i] = m.Properties
	}
	return out
}

// managementPost posts body to the test broker's management API below /api/ (contractSend) and
// decodes the answer into out.
func managementPost(t *testing.T, path string, body, out any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	status, answer := contractSend(t, realContract{http: http.DefaultClient}, http.MethodPost, path, string(b))
	if status/100 != 2 {
		t.Fatalf("POST %s: HTTP %d %s", path, status, answer)
	}
	if out != nil && json.Unmarshal(answer, out) != nil {
		t.Fatalf("POST %s: not the JSON asked for: %s", path, answer)
	}
}
