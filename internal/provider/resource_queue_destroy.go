package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// countWait bounds the wait for counts not reported yet and for a starting node's queues.
const countWait = 20 * time.Second

// refusedError is a destroy refused because a queue holds messages or has consumers.
type refusedError struct {
	target ownedQueues
	lines  []string
	done   []string
	// deadHolds says that q.dead holds messages, so the advice names the dead-letter actions.
	deadHolds bool
}

func (e *refusedError) summary() string { return "Queue Not Empty: Destroy Refused" }

func (e *refusedError) Error() string {
	var b strings.Builder
	if len(e.done) == 0 {
		fmt.Fprintf(&b, "Nothing of queue %q was deleted: ", e.target.queue)
	} else {
		fmt.Fprintf(&b, "Deleted %s; then RabbitMQ refused to delete the rest: ", strings.Join(e.done, ", "))
	}
	fmt.Fprintf(&b, "these queues in vhost %q hold messages or have consumers, and deleting them would lose messages "+
		"(a message waiting in a hold queue would dead-letter into a deleted queue and vanish):\n  - %s\n",
		e.target.vhost, joinLines(e.lines))
	b.WriteString(nextSteps(e.target, len(e.done) > 0, "Drain them (let consumers finish, or move the messages)",
		"delete them with their messages"))
	if e.deadHolds {
		b.WriteString(deadLetterAdvice(e.target, slices.Contains(e.done, e.target.queue)))
	}
	return b.String()
}

// notRunningError is a destroy refused because a queue is not running (4.x would lose it).
type notRunningError struct {
	target ownedQueues
	down   []broker.Queue
	done   []string
}

func (e *notRunningError) summary() string { return "Queue Not Running: Destroy Refused" }

func (e *notRunningError) Error() string {
	var b strings.Builder
	if len(e.done) == 0 {
		fmt.Fprintf(&b, "Nothing of queue %q was deleted: ", e.target.queue)
	} else {
		fmt.Fprintf(&b, "Deleted %s; then found that ", strings.Join(e.done, ", "))
	}
	fmt.Fprintf(&b, "these queues in vhost %q are not running, most likely because the cluster node that hosts them is down or restarting:\n  - %s\n"+
		"Their message counts cannot be known, and RabbitMQ may delete such a queue even when asked to delete it only if empty, "+
		"losing the messages kept on that node. ", e.target.vhost, joinLines(notRunningLines(e.down)))
	b.WriteString(nextSteps(e.target, len(e.done) > 0, bringBackHint, "delete them without these checks"))
	return b.String()
}

// nextSteps says what to do after a refused destroy: fix, then run it again; or, to force, set
// force_destroy on this resource alone and apply and destroy targeted at it. The provider cannot
// see the resource's address nor whether other destroys of the run already deleted their queues, so
// it never advises a plain apply, which would declare those queues again (nor any apply after a
// partial destroy).
func nextSteps(t ownedQueues, partial bool, fix, force string) string {
	switch {
	case t.replacing:
		return replacementAdvice(fix, force)
	case partial:
		return fix + ", then run destroy again: it deletes only what is left. Do not apply before it, since apply would declare " +
			"the queues deleted above again."
	}
	return fix + ", then run destroy again. Or, to " + force + " and touch nothing else: set force_destroy = true on " +
		"the resource of queue " + strconv.Quote(t.queue) + " only (in a for_each, for its key only: force_destroy = " +
		"each.key == \"b\"), run terraform apply -target=ADDRESS (it changes force_destroy in place and declares nothing), " +
		"then terraform destroy -target=ADDRESS, ADDRESS being that resource's address as terraform state list shows it, " +
		"quoted for the shell: -target='queuey_queue.x[\"b\"]'. An apply without -target would declare again every queue " +
		"this run has already destroyed."
}

// destroyTopology deletes the hold queues of t, then q, then q.dead. Unless force is set, it
// deletes nothing while any is not running, holds a message or has a consumer (see confirmDeletable), checks
// each state again just before its delete, and guards each delete with if-empty and if-unused. The
// hold queues are found in a listing of the vhost, the one read whose cost grows with it: one begun
// recently enough (broker.Client.CountsAsRecent), or the plan's (t.noted), so that many destroys list a
// crowded vhost about once.
func destroyTopology(ctx context.Context, c *broker.Client, t ownedQueues, force bool) error {
	listing := t.noted
	if listing == nil {
		list, err := c.ListQueues(ctx, t.vhost, broker.Checked, broker.Recent)
		listing = list.Queues
		if errors.Is(err, broker.ErrNotFound) {
			return nil // the vhost is gone and its queues with it
		}
		if err != nil {
			return err
		}
	}
	names := t.names(listing)
	if force {
		queues := make([]broker.Queue, 0, len(names))
		for _, name := range names {
			queues = append(queues, broker.Queue{Name: name, Vhost: t.vhost})
		}
		return t.deleteAll(ctx, c, queues, true)
	}
	owned, err := t.confirmDeletable(ctx, c, listing, names)
	if errors.Is(err, broker.ErrNotFound) {
		return nil // the vhost is gone since the listing, and its queues with it
	}
	if err != nil {
		return err
	}
	return t.deleteAll(ctx, c, t.withNamed(owned, names), false)
}

// names returns t's listed hold and holding queues, then q and q.dead, in deletion order.
func (t ownedQueues) names(listing map[string]broker.Queue) []string {
	names := []string{t.queue, topology.DeadQueueName(t.queue, t.suffixes)}
	if _, ok := listing[topology.RedeclaringQueueName(t.queue)]; ok {
		names = append(names, topology.RedeclaringQueueName(t.queue))
	}
	prefix := topology.HoldQueuePrefix(t.queue, t.suffixes)
	for name := range listing {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name) // DestroyOrder keeps only hold queues of t
		}
	}
	return topology.DestroyOrder(t.queue, t.suffixes, names)
}

// withNamed adds to owned, in deletion order, the queues of names the checks did not find: a node
// recovering after a restart reports its queues one by one, and a hold queue not back yet may
// return with messages that would dead-letter into a deleted q. Each gets its guarded DELETE all
// the same: retried while the node recovers, and a 404 counts as deleted.
func (t ownedQueues) withNamed(owned []broker.Queue, names []string) []broker.Queue {
	queues := make(map[string]broker.Queue, len(owned)+len(names))
	for _, name := range names {
		queues[name] = broker.Queue{Name: name, Vhost: t.vhost}
	}
	for _, q := range owned {
		queues[q.Name] = q
	}
	return t.owned(queues)
}

// confirmDeletable reads each queue of names and the vhost's consumers (see readEach), and refuses while one is
// not running, holds a message or has a consumer; otherwise it returns those found, in deletion
// order. Unknown counts and queues not running (a starting node) are waited for up to t.wait, with
// a new listing after each wait.
func (t ownedQueues) confirmDeletable(ctx context.Context, c *broker.Client, listing map[string]broker.Queue, names []string) ([]broker.Queue, error) {
	deadline := time.Now().Add(t.wait)
	for {
		owned, err := t.readEach(ctx, c, listing, names)
		if err != nil {
			return nil, err
		}
		down := notRunning(owned...)
		lines, unknown := busy(owned, true)
		if (!unknown && len(down) == 0) || !time.Now().Before(deadline) {
			switch {
			case len(down) > 0:
				return nil, &notRunningError{target: t, down: down}
			case len(lines) > 0:
				return nil, &refusedError{target: t, lines: lines, deadHolds: t.deadHolds(owned)}
			}
			return owned, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
		list, err := c.ListQueues(ctx, t.vhost, broker.Checked, broker.Live)
		if err != nil {
			return nil, err
		}
		listing = list.Queues
		names = t.names(listing)
	}
}

// readEach reads each queue of names alone, at the same time as the vhost's consumers, and returns
// those that exist, in deletion order. The message count is the queue's own answer on RabbitMQ 4.x;
// 3.10 reports live counts only in a listing, so there it is the listing's, unknown for a queue the
// listing lacks. The guarded DELETE refuses a busy queue at the moment it deletes on every version.
func (t ownedQueues) readEach(ctx context.Context, c *broker.Client, listing map[string]broker.Queue, names []string) ([]broker.Queue, error) {
	type counts struct {
		byQueue map[string]broker.Queue
		err     error
	}
	cch := make(chan counts, 1)
	go func() {
		n, err := c.ListQueues(ctx, t.vhost, broker.Consumers, broker.Live)
		cch <- counts{n.Queues, err}
	}()
	found, err := lookUpQueues(ctx, names, func(ctx context.Context, name string) (broker.Queue, error) {
		return c.GetQueue(ctx, t.vhost, name, broker.Counted)
	})
	cs := <-cch
	if err == nil {
		err = cs.err
	}
	if err != nil {
		return nil, err
	}
	for name, q := range found {
		if q.Messages == nil {
			q.Messages = listing[name].Messages
		}
		var n int64
		if c := cs.byQueue[name].Consumers; c != nil {
			n = *c
		}
		q.Consumers = &n
		found[name] = q
	}
	return t.owned(found), nil
}

// deleteAll deletes owned in order, guarded; unless force, each after a look at its state.
func (t ownedQueues) deleteAll(ctx context.Context, c *broker.Client, owned []broker.Queue, force bool) error {
	var done []string
	for _, q := range owned {
		if !force {
			// The state again, just before the delete: a node may have gone down since the checks.
			// A queue not found still gets its guarded DELETE: a recovering broker may not report
			// it yet, and a 404 counts as deleted.
			now, found, err := confirmQueue(ctx, c, t.vhost, q.Name)
			if err != nil {
				return deletedThen(done, err)
			}
			if found && !now.Running() {
				return &notRunningError{target: t, down: []broker.Queue{now}, done: done}
			}
		}
		err := c.DeleteQueue(ctx, t.vhost, q.Name, !force)
		if errors.Is(err, broker.ErrNotFound) {
			// Gone since the check (a hold queue expired): deleted.
			err = nil
		}
		if errors.Is(err, broker.ErrNotEmpty) {
			return &refusedError{target: t, done: done, lines: []string{q.Name + ": " + err.Error()},
				deadHolds: q.Name == topology.DeadQueueName(t.queue, t.suffixes)}
		}
		if err != nil {
			return deletedThen(done, err)
		}
		done = append(done, q.Name)
	}
	return nil
}

// deletedThen adds to err the queues deleted before it.
func deletedThen(done []string, err error) error {
	if len(done) > 0 {
		return &deletedThenError{done: done, err: err}
	}
	return err
}

// deletedThenError is a destroy that failed after deleting some of its queues.
type deletedThenError struct {
	done []string
	err  error
}

func (e *deletedThenError) Error() string {
	return "deleted " + strings.Join(e.done, ", ") + ", then: " + errorText(e.err)
}

func (e *deletedThenError) Unwrap() error { return e.err }

func (e *deletedThenError) causeWorded() {}

// deadHolds reports whether q.dead, among queues, holds messages.
func (t ownedQueues) deadHolds(queues []broker.Queue) bool {
	dead := topology.DeadQueueName(t.queue, t.suffixes)
	for _, q := range queues {
		if q.Name == dead && q.Messages != nil && *q.Messages > 0 {
			return true
		}
	}
	return false
}

// ownedQueues names the queues of one logical queue a queuey_queue owns (q, q.dead, its hold and holding
// queues), with its suffixes: what a destroy deletes and a re-declaration checks.
type ownedQueues struct {
	vhost    string
	queue    string
	suffixes topology.Suffixes
	// wait bounds the wait for unknown counts and queues not running (countWait).
	wait time.Duration
	// replacing says that the destroy is the first half of a replacement, for the advice.
	replacing bool
	// noted is the plan's listing of t's queues (notedListing); nil: the destroy lists.
	noted map[string]broker.Queue
}

// ownedQueuesOf is what a state (or plan) owns; fallback is the provider's suffixes (suffixesFor).
func ownedQueuesOf(m queueModel, fallback topology.Suffixes) ownedQueues {
	return ownedQueues{vhost: m.Vhost.ValueString(), queue: m.Name.ValueString(), suffixes: suffixesFor(m, fallback), wait: countWait}
}

// owned returns the queues of t that exist, in deletion order.
func (t ownedQueues) owned(queues map[string]broker.Queue) []broker.Queue {
	names := make([]string, 0, len(queues))
	for name := range queues {
		names = append(names, name)
	}
	order := topology.DestroyOrder(t.queue, t.suffixes, names)
	out := make([]broker.Queue, 0, len(order))
	for _, name := range order {
		out = append(out, queues[name])
	}
	return out
}

// busy describes each busy queue and, withUnknown, each whose counts are not reported.
func busy(queues []broker.Queue, withUnknown bool) (lines []string, unknown bool) {
	for _, q := range queues {
		if q.Messages == nil || q.Consumers == nil {
			unknown = true
			if !withUnknown {
				continue
			}
			lines = append(lines, fmt.Sprintf("%s: %s, %s (not reported by the management API yet)",
				q.Name, countText(q.Messages, "message"), countText(q.Consumers, "consumer")))
			continue
		}
		if *q.Messages > 0 || *q.Consumers > 0 {
			lines = append(lines, fmt.Sprintf("%s: %s, %s", q.Name, countText(q.Messages, "message"), countText(q.Consumers, "consumer")))
		}
	}
	return lines, unknown
}

// deadLetterAdvice is what a refusal over the messages of q.dead says besides force_destroy: the
// two actions, their blocks naming the vhost. When q is already deleted (mainGone), only the purge
// is offered: a redrive would need q declared again.
func deadLetterAdvice(t ownedQueues, mainGone bool) string {
	dead := topology.DeadQueueName(t.queue, t.suffixes)
	name := actionLabel(t.queue)
	block := func(typ string) string {
		return fmt.Sprintf("  action %q %q {\n    config {\n      queue = %q\n      vhost = %q\n    }\n  }\n", typ, name, t.queue, t.vhost)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nWith Terraform 1.14 or later, the provider's actions handle %s from Terraform. ", dead)
	if mainGone {
		fmt.Fprintf(&b, "This destroy has deleted %s already, so its messages cannot be moved back (that would need %s "+
			"declared again); to throw them away, declare\n%s", t.queue, t.queue, block("queuey_purge_dead_letters"))
	} else {
		fmt.Fprintf(&b, "To keep its messages, move them back to %s:\n%sthen run `terraform apply "+
			"-invoke=action.queuey_redrive_dead_letters.%s`. To throw them away, declare\n%s", t.queue,
			block("queuey_redrive_dead_letters"), name, block("queuey_purge_dead_letters"))
	}
	fmt.Fprintf(&b, "and invoke it (`terraform apply -invoke=action.queuey_purge_dead_letters.%s`), then run destroy again", name)
	if !mainGone {
		fmt.Fprintf(&b, "; or, with Terraform 1.16 or later, let the destroy purge them first by adding to this queuey_queue:\n"+
			"  lifecycle {\n    action_trigger {\n      events  = [before_destroy]\n      actions = [action.queuey_purge_dead_letters.%s]\n"+
			"    }\n  }\n(a before_destroy trigger also fires when the queue is replaced)", name)
	}
	b.WriteString(".")
	return b.String()
}

// actionLabel is a Terraform block label made of a queue name.
func actionLabel(queue string) string {
	var b strings.Builder
	for i, r := range queue {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', i > 0 && (r >= '0' && r <= '9' || r == '-'):
			b.WriteRune(r)
		default:
			b.WriteRune('_')
		}
	}
	return b.String()
}
