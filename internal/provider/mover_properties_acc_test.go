package provider

import (
	"encoding/json"
	"fmt"
	"maps"
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
	for _, props := range []string{`{"message_id": "p0", "priority": 0}`, `{"message_id": "p3", "priority": 3}`, `{"message_id": "none"}`} {
		body := fmt.Sprintf(`{"properties": %s, "routing_key": %q, "payload": "x", "payload_encoding": "string"}`, props, name+".dead")
		if status, answer := contractSend(t, realContract{http: http.DefaultClient}, http.MethodPost, "exchanges/%2F/amq.default/publish", body); status/100 != 2 {
			t.Fatalf("publishing %s: HTTP %d %s", props, status, answer)
		}
	}
	if before := getMessages(t, name+".dead", "reject_requeue_true"); before["p0"] != "map[message_id:p0 priority:0]" {
		t.Fatalf("the broker holds p0 without its priority before the move: %v", before)
	}
	moved, err := accMover(t).Move(t.Context(), mover.Move{Vhost: "/", From: name + ".dead", To: name})
	if err != nil || moved != 3 {
		t.Fatalf("moved %d of 3: %v", moved, err)
	}
	want := map[string]string{"p0": "map[message_id:p0]", "p3": "map[message_id:p3 priority:3]", "none": "map[message_id:none]"}
	if got := getMessages(t, name, "ack_requeue_false"); !maps.Equal(got, want) {
		t.Errorf("the messages came back with properties %v, want %v", got, want)
	}
}

// getMessages reads the 3 messages of queue through the management API (ackmode as it takes) and
// returns their properties by message id, as fmt prints them: headers (an empty table on some
// versions, absent on others) and delivery mode aside.
func getMessages(t *testing.T, queue, ackmode string) map[string]string {
	t.Helper()
	var msgs []struct{ Properties map[string]any } // "properties", matched regardless of case
	path := "queues/%2F/" + url.PathEscape(queue) + "/get"
	status, answer := contractSend(t, realContract{http: http.DefaultClient}, http.MethodPost, path, `{"count": 3, "ackmode": "`+ackmode+`", "encoding": "auto"}`)
	if status/100 != 2 || json.Unmarshal(answer, &msgs) != nil || len(msgs) != 3 {
		t.Fatalf("POST %s: HTTP %d %s; want 3 messages", path, status, answer)
	}
	got := map[string]string{}
	for _, m := range msgs {
		maps.DeleteFunc(m.Properties, func(k string, _ any) bool { return k == "headers" || k == "delivery_mode" })
		got[fmt.Sprint(m.Properties["message_id"])] = fmt.Sprint(m.Properties)
	}
	return got
}
