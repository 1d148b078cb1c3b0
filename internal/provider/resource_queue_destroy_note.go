package provider

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// A terraform destroy plans in one provider process and destroys in another, and each listing of a
// crowded vhost costs the broker time. So the plan's warning notes what its listing found of the
// topology, and when it began, in the plan's private state, which Terraform hands to Delete. The
// destroy takes it when a listing begun then could answer it in its own process
// (broker.Client.CountsAsRecent) and the plan ran on the same machine; otherwise it lists the vhost
// itself.

// listingKey is the private state key of the note.
const listingKey = "listing"

// listingNote is what the plan's listing had of one queue's topology.
type listingNote struct {
	// Of is the vhost and name of the queue planned for destroy.
	Of string `json:"of"`
	// Host is the machine whose clock Began is read from.
	Host string `json:"host"`
	// Began is when the listing's request began.
	Began time.Time `json:"began"`
	// Queues holds each listed queue of the topology with its message count (null: not reported).
	Queues map[string]*int64 `json:"queues"`
}

func (t ownedQueues) noteOf() string { return t.vhost + "\x00" + t.queue }

// noteListing notes in private what listing has of t's queues; a nil listing removes the note.
func noteListing(ctx context.Context, private privateKeys, t ownedQueues, listing map[string]broker.Queue, began time.Time) diag.Diagnostics {
	if listing == nil {
		return private.SetKey(ctx, listingKey, nil)
	}
	host, err := os.Hostname()
	if err != nil {
		return nil // no note: the destroy lists
	}
	note := listingNote{Of: t.noteOf(), Host: host, Began: began, Queues: map[string]*int64{}}
	for _, name := range t.names(listing) {
		if q, ok := listing[name]; ok {
			note.Queues[name] = q.Messages
		}
	}
	b, err := json.Marshal(note)
	if err != nil {
		return nil // cannot happen (strings, a time, numbers); no note
	}
	return private.SetKey(ctx, listingKey, b)
}

// notedListing returns the plan's noted listing of t's queues when the destroy may take it: recent
// is the destroy's client's CountsAsRecent, whether a listing begun then could answer it.
func notedListing(ctx context.Context, private privateKeys, t ownedQueues, recent func(began time.Time) bool) (map[string]broker.Queue, bool) {
	b, diags := private.GetKey(ctx, listingKey)
	var note listingNote
	if diags.HasError() || len(b) == 0 || json.Unmarshal(b, &note) != nil || note.Of != t.noteOf() {
		return nil, false
	}
	if host, err := os.Hostname(); err != nil || note.Host != host || !recent(note.Began) {
		return nil, false
	}
	listing := make(map[string]broker.Queue, len(note.Queues))
	for name, n := range note.Queues {
		listing[name] = broker.Queue{Name: name, Vhost: t.vhost, Messages: n}
	}
	return listing, true
}
