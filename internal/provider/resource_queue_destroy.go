package provider

import (
	"context"
	"errors"
	"fmt"
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
	vhost string
	lines []string
	done  []string
}

func (e *refusedError) Error() string {
	var b strings.Builder
	if len(e.done) == 0 {
		fmt.Fprintf(&b, "Nothing was deleted: these queues in vhost %q hold messages or have consumers, and deleting them would lose messages "+
			"(a message waiting in a hold queue would dead-letter into a deleted queue and vanish):\n  - %s\n",
			e.vhost, joinLines(e.lines))
	} else {
		fmt.Fprintf(&b, "Deleted %s; then RabbitMQ refused to delete the rest in vhost %q:\n  - %s\n",
			strings.Join(e.done, ", "), e.vhost, joinLines(e.lines))
	}
	b.WriteString("Drain them (let consumers finish, or move the messages), then run destroy again; or set force_destroy = true, " +
		"apply, and destroy to delete them with their messages.")
	return b.String()
}

// notRunningError is a destroy refused because a queue of the topology is
// not running: RabbitMQ 4.x deletes such a queue even when asked to delete it
// only if empty, and its messages, kept on its node, are lost.
type notRunningError struct {
	vhost string
	down  []broker.Queue
	done  []string
}

func (e *notRunningError) Error() string {
	var b strings.Builder
	if len(e.done) == 0 {
		b.WriteString("Nothing was deleted: ")
	} else {
		fmt.Fprintf(&b, "Deleted %s; then found that ", strings.Join(e.done, ", "))
	}
	fmt.Fprintf(&b, "these queues in vhost %q are not running, most likely because the cluster node that hosts them is down or restarting:\n  - %s\n"+
		"Their message counts cannot be known, and RabbitMQ may delete such a queue even when asked to delete it only if empty, "+
		"losing the messages kept on that node. %s, then run destroy again; or set force_destroy = true, apply, and destroy to "+
		"delete them without these checks.", e.vhost, joinLines(notRunningLines(e.down)), bringBackHint)
	return b.String()
}

// destroyTopology deletes the hold queues of t, then its main queue, then its
// dead-letter queue. Unless force is set, it first checks them all and
// deletes nothing while any is not running, holds a message or has a
// consumer; it checks each queue's state again just before deleting it, and
// each delete is guarded with if-empty and if-unused.
func destroyTopology(ctx context.Context, c *broker.Client, t destroyTarget, force bool) error {
	owned, err := t.list(ctx, c)
	if errors.Is(err, broker.ErrNotFound) {
		return nil // the vhost is gone and its queues with it
	}
	if err != nil {
		return err
	}
	if !force {
		// Counts not reported yet, and queues not running, may be a node
		// that is starting: its queues report "down" for a moment, and a
		// listing can leave them out (see ListQueuesWithConsumers). Both are
		// waited for, up to t.wait, before the destroy is refused.
		down := notRunning(owned...)
		lines, unknown := busy(owned, true)
		deadline := time.Now().Add(t.wait)
		for (unknown || len(down) > 0) && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
			if owned, err = t.list(ctx, c); err != nil {
				return err
			}
			down = notRunning(owned...)
			lines, unknown = busy(owned, true)
		}
		if len(down) > 0 {
			return &notRunningError{vhost: t.vhost, down: down}
		}
		if len(lines) > 0 {
			return &refusedError{vhost: t.vhost, lines: lines}
		}
	}
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
				return &notRunningError{vhost: t.vhost, down: []broker.Queue{now}, done: done}
			}
		}
		err := c.DeleteQueue(ctx, t.vhost, q.Name, !force)
		if errors.Is(err, broker.ErrNotFound) {
			// Gone since the check (a hold queue expired, say): deleted. The
			// listing above succeeded, so the user can see the vhost.
			err = nil
		}
		if errors.Is(err, broker.ErrNotEmpty) {
			return &refusedError{vhost: t.vhost, done: done, lines: []string{q.Name + ": " + err.Error()}}
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

// destroyTarget names the logical queue a queuey_queue owns, with the
// suffixes it was created with.
type destroyTarget struct {
	vhost    string
	queue    string
	suffixes topology.Suffixes
	// wait bounds how long the checks before a destroy wait for unknown
	// counts and queues not running (countWait; none in unit tests).
	wait time.Duration
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
			lines = append(lines, fmt.Sprintf("%s: %s messages, %s consumers (not reported by the management API yet)",
				q.Name, countText(q.Messages), countText(q.Consumers)))
			continue
		}
		if *q.Messages > 0 || *q.Consumers > 0 {
			lines = append(lines, fmt.Sprintf("%s: %d messages, %d consumers", q.Name, *q.Messages, *q.Consumers))
		}
	}
	return lines, unknown
}

func countText(n *int64) string {
	if n == nil {
		return "unknown"
	}
	return fmt.Sprint(*n)
}
