package brokertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
)

// declare creates a queue, accepts an equivalent declaration and refuses any other, as RabbitMQ.
func (s *Server) declare(w http.ResponseWriter, r *http.Request, qs map[string]*Queue, vhost, name string) {
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
	if _, typed := body.Arguments["x-queue-type"]; !typed && s.is4x() {
		body.Arguments["x-queue-type"] = "classic"
	}
	if q, exists := qs[name]; exists {
		if diff := inequivalent(q, body.Durable, body.AutoDelete, body.Arguments); diff != "" {
			ErrorBody(w, http.StatusBadRequest, "bad_request",
				"inequivalent arg '"+diff+"' for queue '"+name+"' in vhost '"+vhost+"': "+
					difference(q, diff, body.Durable, body.AutoDelete, body.Arguments))
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	qs[name] = &Queue{Name: name, Type: "classic", Durable: body.Durable, AutoDelete: body.AutoDelete,
		Arguments: body.Arguments, Messages: Count(0)}
	w.WriteHeader(http.StatusCreated)
}

// inequivalent returns the first flag or argument a declaration differs from q in ("" for none).
func inequivalent(q *Queue, durable, autoDelete bool, arguments map[string]any) string {
	switch {
	case q.Durable != durable:
		return "durable"
	case q.AutoDelete != autoDelete:
		return "auto_delete"
	}
	keys := make([]string, 0, len(arguments)+len(q.Arguments))
	for k := range arguments {
		keys = append(keys, k)
	}
	for k := range q.Arguments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "x-queue-type" && isClassic(q.Arguments[k]) && isClassic(arguments[k]) {
			continue
		}
		a, _ := json.Marshal(q.Arguments[k])
		b, _ := json.Marshal(arguments[k])
		if string(a) != string(b) {
			return k
		}
	}
	return ""
}

// isClassic reports whether an x-queue-type makes a classic queue: "classic" or none.
func isClassic(queueType any) bool { return queueType == nil || queueType == "classic" }

// difference words the difference in key as RabbitMQ does.
func difference(q *Queue, key string, durable, autoDelete bool, arguments map[string]any) string {
	switch key {
	case "durable":
		return fmt.Sprintf("received '%v' but current is '%v'", durable, q.Durable)
	case "auto_delete":
		return fmt.Sprintf("received '%v' but current is '%v'", autoDelete, q.AutoDelete)
	}
	got, hasGot := arguments[key]
	cur, hasCur := q.Arguments[key]
	if hasGot && hasCur {
		return fmt.Sprintf("received '%v' but current is '%v'", got, cur)
	}
	return "received " + typedValue(got, hasGot) + " but current is " + typedValue(cur, hasCur)
}

// typedValue is an argument as RabbitMQ names one that only one side has.
func typedValue(v any, present bool) string {
	if !present {
		return "none"
	}
	t := "longstr"
	switch v.(type) {
	case json.Number, int, int64:
		t = "long"
	case bool:
		t = "bool"
	}
	return fmt.Sprintf("the value '%v' of type '%s'", v, t)
}
