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

// countWait bounds how long destroy waits for the management API to report
// the counts of queues declared moments ago (it omits them for a few
// seconds), and for queues of a node that is starting to run again.
const countWait = 20 * time.Second

// refusedError is a destroy refused because a queue holds messages or has
// consumers.
type refusedError struct {
	target destroyTarget
	lines  []string
	done   []string
	// deadHolds says that q.dead holds messages: the advice names the
	// dead-letter actions too (deadLetterAdvice).
	deadHolds bool
}

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

// notRunningError is a destroy refused because a queue of the topology is
// not running: RabbitMQ 4.x deletes such a queue even when asked to delete it
// only if empty, and its messages, kept on its node, are lost.
type notRunningError struct {
	target destroyTarget
	down   []broker.Queue
	done   []string
}

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

// nextSteps says what to do after a refused destroy: fix (what makes the
// queues deletable), then run the destroy (or the replacement's apply)
// again; or, to force (what force_destroy does), set force_destroy in the
// way that reaches this destroy and nothing else. The provider cannot tell
// whether this destroy is one of several in the run (a for_each, a whole
// configuration) whose others have already deleted their queues, nor see
// the resource's address, so the way to force names no plain apply, which
// would declare those queues again: force_destroy on this resource alone,
// then apply and destroy each targeted at it. (Terraform shows a destroy's
// error without the resource's address, so the advice names the queue.) After a partial destroy it
// never advises an apply at all: Read would find the deleted queues gone
// and the apply would declare them again.
func nextSteps(t destroyTarget, partial bool, fix, force string) string {
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

// destroyTopology deletes the hold queues of t, then its main queue, then its
// dead-letter queue. Unless force is set, it first checks them all and
// deletes nothing while any is not running, holds a message or has a
// consumer (see check); it checks each queue's state again just before
// deleting it, and each delete is guarded with if-empty and if-unused.
func destroyTopology(ctx context.Context, c *broker.Client, t destroyTarget, force bool) error {
	owned, err := t.list(ctx, c)
	if errors.Is(err, broker.ErrNotFound) {
		return nil // the vhost is gone and its queues with it
	}
	if err != nil {
		return err
	}
	if !force {
		if owned, err = t.check(ctx, c, owned); err != nil {
			return err
		}
	}
	return t.deleteAll(ctx, c, t.withOwnQueues(owned), force)
}

// withOwnQueues adds to owned, in deletion order, the main and dead-letter
// queues that neither the listing nor a look-up found. State says they were
// declared, and a node that answers again after a restart recovers its
// queues one by one: a queue it has not recovered yet is missing from both
// (the resil stage saw a destroy leave the last of 150 queues of a 3.10 node
// behind). Each gets its guarded DELETE all the same, which a recovering
// node answers once the queue is back (a 404 is retried after a restart),
// and which counts as deleted for a queue that is really gone.
func (t destroyTarget) withOwnQueues(owned []broker.Queue) []broker.Queue {
	queues := make(map[string]broker.Queue, len(owned)+2)
	for _, q := range owned {
		queues[q.Name] = q
	}
	for _, name := range []string{t.queue, topology.DeadQueueName(t.queue, t.suffixes)} {
		if _, ok := queues[name]; !ok {
			queues[name] = broker.Queue{Name: name, Vhost: t.vhost}
		}
	}
	return t.owned(queues)
}

// check refuses the destroy while a queue of owned is not running, holds a
// message or has a consumer, and returns the last listing otherwise. Counts
// not reported yet, and queues not running, may be a node that is starting:
// its queues report "down" for a moment, and a listing can leave them out
// (see ListQueuesWithConsumers). Both are waited for, up to t.wait, before
// the destroy is refused.
func (t destroyTarget) check(ctx context.Context, c *broker.Client, owned []broker.Queue) ([]broker.Queue, error) {
	down := notRunning(owned...)
	lines, unknown := busy(owned, true)
	deadline := time.Now().Add(t.wait)
	for (unknown || len(down) > 0) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
		var err error
		if owned, err = t.list(ctx, c); err != nil {
			return nil, err
		}
		down = notRunning(owned...)
		lines, unknown = busy(owned, true)
	}
	if len(down) > 0 {
		return nil, &notRunningError{target: t, down: down}
	}
	if len(lines) > 0 {
		return nil, &refusedError{target: t, lines: lines, deadHolds: t.deadHolds(owned)}
	}
	return owned, nil
}

// deleteAll deletes owned in order; unless force is set, each after a last
// look at its state, and each guarded with if-empty and if-unused.
func (t destroyTarget) deleteAll(ctx context.Context, c *broker.Client, owned []broker.Queue, force bool) error {
	var done []string
	for _, q := range owned {
		if !force {
			// The state again, just before the delete: a node may have gone
			// down since the checks.
			// A queue this GET does not find is still sent its guarded
			// DELETE: a broker that is recovering its queues after a restart
			// may not report one yet, and the DELETE of a queue that is
			// really gone answers 404, which counts as deleted.
			now, found, err := confirmQueue(ctx, c, nil, t.vhost, q.Name)
			if err != nil {
				return deletedThen(done, err)
			}
			if found && !now.Running() {
				return &notRunningError{target: t, down: []broker.Queue{now}, done: done}
			}
		}
		err := c.DeleteQueue(ctx, t.vhost, q.Name, !force)
		if errors.Is(err, broker.ErrNotFound) {
			// Gone since the check (a hold queue expired, say): deleted. The
			// listing above succeeded, so the user can see the vhost.
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
		return fmt.Errorf("deleted %s, then: %w", strings.Join(done, ", "), err)
	}
	return err
}

// list returns the queues of t that exist, in deletion order, with their
// counts, states and nodes. A main or dead-letter queue that the listing
// lacks is looked up alone (a listing answered while a node restarts can
// leave queues out); it then has no counts yet.
func (t destroyTarget) list(ctx context.Context, c *broker.Client) ([]broker.Queue, error) {
	queues, err := c.ListQueuesWithConsumers(ctx, t.vhost)
	if err != nil {
		return nil, err
	}
	var extra map[string]broker.Queue
	for _, name := range []string{t.queue, topology.DeadQueueName(t.queue, t.suffixes)} {
		if _, ok := queues[name]; ok {
			continue
		}
		q, found, err := confirmQueue(ctx, c, nil, t.vhost, name)
		if err != nil {
			return nil, err
		}
		if found {
			if extra == nil {
				extra = make(map[string]broker.Queue, len(queues)+2)
				for k, v := range queues {
					extra[k] = v // the listing is shared: never modify it
				}
			}
			extra[name] = q
		}
	}
	if extra != nil {
		queues = extra
	}
	return t.owned(queues), nil
}

// deadHolds reports whether the dead-letter queue of t, among queues, holds
// messages.
func (t destroyTarget) deadHolds(queues []broker.Queue) bool {
	dead := topology.DeadQueueName(t.queue, t.suffixes)
	for _, q := range queues {
		if q.Name == dead && q.Messages != nil && *q.Messages > 0 {
			return true
		}
	}
	return false
}

// destroyTarget names the logical queue a queuey_queue owns, with the
// suffixes it was created with.
type destroyTarget struct {
	vhost    string
	queue    string
	suffixes topology.Suffixes
	// wait bounds how long the checks before a destroy wait for unknown
	// counts and queues not running (countWait; none in unit tests).
	wait time.Duration
	// replacing says that the destroy is the first half of a replacement
	// (see destroyIntent), for the advice of a refusal.
	replacing bool
}

func (r *queueResource) targetOf(m queueModel) destroyTarget {
	return destroyTarget{vhost: m.Vhost.ValueString(), queue: m.Name.ValueString(), suffixes: r.suffixesFor(m), wait: countWait}
}

// owned returns the queues of t that exist, in deletion order (see
// topology.DestroyOrder).
func (t destroyTarget) owned(queues map[string]broker.Queue) []broker.Queue {
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

// busy describes each queue that holds a message or has a consumer, and, with
// withUnknown, each whose counts the broker has not reported yet.
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

// countText is "1 message", "2 messages" or "unknown messages".
func countText(n *int64, noun string) string {
	switch {
	case n == nil:
		return "unknown " + noun + "s"
	case *n == 1:
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", *n, noun)
}
