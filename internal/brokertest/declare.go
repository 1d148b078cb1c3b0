package brokertest

import (
	"encoding/json"
	"net/http"
)

// declare answers the declaration of the queue name of vhost, whose queues
// are qs: it creates the queue, accepts an equivalent declaration of one that
// exists, and refuses any other as RabbitMQ does.
func declare(w http.ResponseWriter, r *http.Request, qs map[string]*Queue, vhost, name string) {
	var body struct {
		Durable    bool           `json:"durable"`
		AutoDelete bool           `json:"auto_delete"`
		Arguments  map[string]any `json:"arguments"`
	}
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		ErrorBody(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if body.Arguments == nil {
		body.Arguments = map[string]any{}
	}
	if q, exists := qs[name]; exists {
		a, _ := json.Marshal(q.Arguments)
		b, _ := json.Marshal(body.Arguments)
		if string(a) != string(b) || q.Durable != body.Durable || q.AutoDelete != body.AutoDelete {
			ErrorBody(w, http.StatusBadRequest, "bad_request",
				"PRECONDITION_FAILED - inequivalent arg for queue '"+name+"' in vhost '"+vhost+"'")
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	qs[name] = &Queue{Name: name, Type: "classic", Durable: body.Durable, AutoDelete: body.AutoDelete,
		Arguments: body.Arguments, Messages: Count(0)}
	w.WriteHeader(http.StatusCreated)
}
