package provider

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// A terraform destroy plans in one provider process and destroys in another.
// The plan's warning (warnIfBusy) lists the vhost, and the destroy's checks
// would list it again; in a vhost crowded with other queues each listing
// costs the broker time in proportion to all of them. So the plan writes what
// its listing found of the queue's topology, and when the listing began, into
// the plan's private state, which Terraform and OpenTofu hand to Delete with
// the plan (req.Private). The destroy takes it instead of a listing of its
// own when a listing begun then could answer it in its own process
// (broker.Client.Recent: at most Timing.CheckAge old, nothing written since
// but queue deletes) and the plan ran on the same machine, as in a terraform
// destroy -auto-approve whose destroys begin within CheckAge of its plan's
// listing. Otherwise (a saved plan applied more than CheckAge later or on
// another machine, a destroy that begins later in a long run, an apply that
// declared or purged first, a plan whose listing failed) the destroy lists
// the vhost itself, as before.

// listingKey is the private state key of the note.
const listingKey = "listing"

// listingNote is what the plan's listing had of one queue's topology.
type listingNote struct {
	// Of is the vhost and name of the queue planned for destroy.
	Of string `json:"of"`
	// Host is the name of the machine whose clock Began is read from: a
	// plan made on another machine (a CI plan job, a remote run) is not
	// taken, since a clock behind that machine's would make its listing
	// look younger than it is.
	Host string `json:"host"`
	// Began is when the listing's request began.
	Began time.Time `json:"began"`
	// Queues holds each queue of the topology that the listing has, by
	// name, with its message count (null: not reported).
	Queues map[string]*int64 `json:"queues"`
}

func (t destroyTarget) noteOf() string { return t.vhost + "\x00" + t.queue }

// noteListing writes into private what listing, whose request began at
// began, has of the queues of t; a nil listing removes an earlier note.
func noteListing(ctx context.Context, private privateKeys, t destroyTarget, listing map[string]broker.Queue, began time.Time) diag.Diagnostics {
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

// notedListing returns the listing of t's queues that the plan noted in
// private, when c may take it for a destroy's checks (see above).
func notedListing(ctx context.Context, private privateKeys, t destroyTarget, c *broker.Client) (map[string]broker.Queue, bool) {
	b, diags := private.GetKey(ctx, listingKey)
	var note listingNote
	if diags.HasError() || len(b) == 0 || json.Unmarshal(b, &note) != nil || note.Of != t.noteOf() {
		return nil, false
	}
	if host, err := os.Hostname(); err != nil || note.Host != host || !c.CountsAsRecent(note.Began) {
		return nil, false
	}
	listing := make(map[string]broker.Queue, len(note.Queues))
	for name, n := range note.Queues {
		listing[name] = broker.Queue{Name: name, Vhost: t.vhost, Messages: n}
	}
	return listing, true
}
