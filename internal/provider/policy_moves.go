package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// A move never carries messages into loss: before the move aside of a re-declaration (into
// {q}.redeclaring, and back into q) and before a redrive (into q), the destinations' policies are
// checked, and the move is refused, moving nothing, when one would expire, drop or delete what it
// carries. policy_check does not enter into it: the plan's check may be off, or stale.

// lossyMoveError is a move refused because a policy on a destination would lose moved messages.
type lossyMoveError struct {
	// what names the move, e.g. "the redrive of orders.dead into orders".
	what     string
	findings policyFindings
}

func (e *lossyMoveError) summary() string { return "Move Refused: A Policy Would Lose Messages" }

func (e *lossyMoveError) Error() string {
	f := e.findings
	var b strings.Builder
	fmt.Fprintf(&b, "Nothing was moved: %s would carry messages into a queue whose policy expires, drops or deletes them.", e.what)
	for _, g := range f.groups() {
		b.WriteString("\n\n")
		b.WriteString(f.detail(g))
	}
	b.WriteString("\n\nFix the policy, then run this again.")
	return b.String()
}

// refuseLossyMove checks the policies of dests, queues of queue in vhost, and returns a
// *lossyMoveError when one would lose what the move carries. A policy read that fails refuses the
// move too: nothing moves on a guess.
func refuseLossyMove(ctx context.Context, c *broker.Client, vhost, queue string, s topology.Suffixes, what string, dests ...topology.CheckedQueue) error {
	pols, err := c.Policies(ctx, vhost)
	if err != nil {
		return fmt.Errorf("nothing was moved: %s needs the policies of vhost %q, to be sure that none would expire or drop "+
			"the messages it moves, and reading them failed: %w", what, vhost, err)
	}
	f := findPolicyEffects(brokerVersion(ctx, c), pols, dests)
	f.vhost, f.queue, f.suffixes = vhost, queue, s
	var losses []topology.Effect
	for _, q := range dests {
		l, err := topology.MoveLosses(q, f.applied[q.Name])
		if err != nil {
			return fmt.Errorf("nothing was moved: %s cannot tell whether a policy of vhost %q would lose its messages: %w",
				what, vhost, err)
		}
		losses = append(losses, l...)
	}
	if len(losses) == 0 {
		return nil
	}
	f.effects = losses
	return &lossyMoveError{what: what, findings: f}
}
