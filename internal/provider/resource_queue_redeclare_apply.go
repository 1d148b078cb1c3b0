package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// redeclareRounds bounds the moves before q's guarded delete; each refusal is a message that came since.
const redeclareRounds = 3

// redeclare declares q again with want's arguments as decideRedeclare says, or refuses
// (*redeclareRefusedError) with nothing changed; q.dead and the hold queues are untouched. It ends
// by moving back what waits in the holding queue.
func redeclare(ctx context.Context, c brokerMover, t ownedQueues, want topology.Queue, force, keep bool) error {
	facts, main, holds, err := readRedeclareFacts(ctx, c.Client, t)
	if err != nil {
		return err
	}
	facts.force, facts.keep = force, keep
	step, why := decideRedeclare(facts)
	if why != refuseNone {
		return &redeclareRefusedError{why: why, vhost: t.vhost, main: main, args: want.Args.JSON(), holds: facts.busyHolds,
			longest: longestTTL(t, holds)}
	}
	switch step {
	case redeclareMoving:
		holding := topology.RedeclaringQueueName(t.queue)
		err = refuseLossyMove(ctx, c.Client, t.vhost, t.queue, t.suffixes, fmt.Sprintf("keeping the messages of %s (a move to %s and back)", t.queue, holding),
			topology.CheckedQueue{Name: holding, Role: topology.RoleHolding, Args: map[string]any{}},
			topology.CheckedQueue{Name: t.queue, Role: topology.RoleMain, Args: want.Args.Map()})
		if err == nil {
			err = moveAside(ctx, c, t, force)
		}
	case redeclareDropping:
		err = ignoreNotFound(c.DeleteQueue(ctx, t.vhost, t.queue, false))
	default:
		err = ignoreNotFound(c.DeleteQueue(ctx, t.vhost, t.queue, true))
		if errors.Is(err, broker.ErrNotEmpty) {
			err = fmt.Errorf("queue %q in vhost %q was not changed: RabbitMQ refused to delete it (%w): a message or a consumer "+
				"came since it was checked. Apply again; set keep_messages_on_change = true to keep its messages", t.queue, t.vhost, err)
		}
	}
	if err != nil {
		return err
	}
	if err := declare(ctx, c, t.vhost, want); err != nil {
		if step == redeclareMoving {
			return &interruptedError{target: t, err: err}
		}
		return err
	}
	return drainHolding(ctx, c, t)
}

// readRedeclareFacts reads q and its hold queues alone; a missing q counts as empty and unused.
func readRedeclareFacts(ctx context.Context, c *broker.Client, t ownedQueues) (redeclareFacts, broker.Queue, []broker.Queue, error) {
	list, err := c.ListQueues(ctx, t.vhost, broker.Checked, broker.Recent)
	listing := list.Queues
	if err != nil {
		return redeclareFacts{}, broker.Queue{}, nil, err
	}
	var names []string
	for _, name := range t.names(listing) {
		if name != topology.DeadQueueName(t.queue, t.suffixes) && name != topology.RedeclaringQueueName(t.queue) {
			names = append(names, name)
		}
	}
	found, err := t.readEach(ctx, c, listing, names)
	if err != nil {
		return redeclareFacts{}, broker.Queue{}, nil, err
	}
	zero := int64(0)
	main := broker.Queue{Name: t.queue, Vhost: t.vhost, Messages: &zero, Consumers: &zero}
	var holds []broker.Queue
	for _, q := range found {
		if q.Name == t.queue {
			main = q
		} else {
			holds = append(holds, q)
		}
	}
	f := redeclareFacts{running: main.Running(), messages: main.Messages}
	if main.Consumers != nil {
		f.consumers = *main.Consumers
	}
	f.busyHolds, _ = busy(holds, true)
	return f, main, holds, nil
}

// longestTTL is the longest TTL, in ms, among the hold queues of t.
func longestTTL(t ownedQueues, holds []broker.Queue) int64 {
	var longest int64
	for _, q := range holds {
		if ttl, ok := topology.ParseHoldQueueName(t.queue, q.Name, t.suffixes); ok && ttl > longest {
			longest = ttl
		}
	}
	return longest
}

// moveAside declares the holding queue, moves q's messages there and deletes q, guarded: a refusal
// is a message that came since, so the move is made again, at most redeclareRounds times; force
// overrides the last refusal.
func moveAside(ctx context.Context, c brokerMover, t ownedQueues, force bool) error {
	if err := topology.ValidateRedeclaringName(t.queue); err != nil {
		return fmt.Errorf("queue %q in vhost %q was not changed: %w. Keeping its messages needs that queue; drain %q first, "+
			"or set force_destroy = true and keep_messages_on_change = false to delete them with it", t.queue, t.vhost, err, t.queue)
	}
	holding := topology.RedeclaringQueue(t.queue)
	if err := declare(ctx, c, t.vhost, holding); err != nil {
		return fmt.Errorf("queue %q was not changed: %w", t.queue, err)
	}
	for round := 1; ; round++ {
		if _, err := c.Move(ctx, mover.Move{Vhost: t.vhost, From: t.queue, To: holding.Name}); err != nil {
			return &interruptedError{target: t, err: withNextStep(err)}
		}
		err := ignoreNotFound(c.DeleteQueue(ctx, t.vhost, t.queue, true))
		switch afterMove(err, round, force) {
		case moveDone:
			return nil
		case moveAgain:
			continue
		case moveForce:
			return ignoreNotFound(c.DeleteQueue(ctx, t.vhost, t.queue, false))
		case moveFailed:
			return &interruptedError{target: t, err: err}
		}
		return &interruptedError{target: t, err: fmt.Errorf("queue %q in vhost %q kept its old arguments: after its messages "+
			"were moved to %s %d times, RabbitMQ still refused to delete it (%w), so something keeps publishing to it or "+
			"consuming from it. Stop the application", t.queue, t.vhost, holding.Name, redeclareRounds, err)}
	}
}

// moveNext is what a move does once the queue it emptied answered its guarded delete.
type moveNext int

const (
	// moveDone: deleted, or already gone.
	moveDone moveNext = iota
	// moveFailed: an error other than a refusal; stop with it.
	moveFailed
	// moveAgain: refused (a message or consumer came since the move); move again.
	moveAgain
	// moveForce: refused after the last move, with force_destroy: delete it unguarded.
	moveForce
	// moveGiveUp: refused after the last move; stop, the messages moved wait in the holding queue.
	moveGiveUp
)

// afterMove decides from the guarded delete's error after move round whether to stop or move again.
func afterMove(err error, round int, force bool) moveNext {
	switch {
	case err == nil:
		return moveDone
	case !errors.Is(err, broker.ErrNotEmpty):
		return moveFailed
	case round < redeclareRounds:
		return moveAgain
	case force:
		return moveForce
	}
	return moveGiveUp
}

// brokerMover is the management API client with the message mover beside it.
type brokerMover struct {
	*broker.Client
	*mover.Mover
}

// drainHolding moves what waits in t's holding queue back to q and deletes it, if it exists.
func drainHolding(ctx context.Context, c brokerMover, t ownedQueues) error {
	name := topology.RedeclaringQueueName(t.queue)
	if _, found, err := confirmQueue(ctx, c.Client, t.vhost, name); err != nil || !found {
		return err
	}
	return moveBack(ctx, c, t)
}

// moveBack moves t's holding queue back to q and deletes it, guarded, at most redeclareRounds
// times.
func moveBack(ctx context.Context, c brokerMover, t ownedQueues) error {
	name := topology.RedeclaringQueueName(t.queue)
	for round := 1; ; round++ {
		if _, err := c.Move(ctx, mover.Move{Vhost: t.vhost, From: name, To: t.queue}); err != nil {
			return &interruptedError{target: t, err: withNextStep(err)}
		}
		err := ignoreNotFound(c.DeleteQueue(ctx, t.vhost, name, true))
		if afterMove(err, round, false) != moveAgain {
			return err
		}
	}
}

// interruptedError is a change stopped after moving messages aside: the next apply finishes it.
type interruptedError struct {
	target ownedQueues
	err    error
}

func (e *interruptedError) Error() string {
	t := e.target
	holding := topology.RedeclaringQueueName(t.queue)
	return fmt.Sprintf("%s. Nothing is lost: the messages not moved back wait in %s (a refresh shows them in "+
		"redeclaring_messages), and the next terraform apply declares %s with the new arguments if it is missing or still "+
		"has the old ones, moves them back to %s and deletes %s. Fix the cause above, then run terraform apply again",
		strings.TrimSuffix(brokerDetail(e.err), "."), holding, t.queue, t.queue, holding)
}

// causeWorded: the text says what to do about the failure it wraps.
func (e *interruptedError) causeWorded() {}

func (e *interruptedError) Unwrap() error { return e.err }

// beforeCause: where the messages wait is said before what stopped the change.
func (e *interruptedError) beforeCause() {}

func (e *interruptedError) summary() string {
	return "Change Interrupted: Messages Wait In " + topology.RedeclaringQueueName(e.target.queue)
}

// ignoreNotFound counts a queue that is gone as deleted.
func ignoreNotFound(err error) error {
	if errors.Is(err, broker.ErrNotFound) {
		return nil
	}
	return err
}
