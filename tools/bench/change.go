package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The change case (`make bench-change`): q holds n messages of 1 KiB and its max_priority goes from
// changeFrom to changeTo with keep_messages_on_change = true. Measured: the wall time of that
// `terraform apply` and of a no-op apply right after (the CLI's fixed cost). The floor is a bare
// amqp091-go loop making the same moves with the redrive's guarantee (bareRedrive), and the same
// delete and declaration. Runs alternate.

const (
	changeFrom = 5
	changeTo   = 10
	changeTTL  = "24h"
)

const changeTTLMs = 24 * 60 * 60 * 1000

type changeRuns struct {
	apply, noop, loop []float64
}

func runChange(ctx context.Context, o options) (err error) {
	e := env{id: runID()}
	if e.o, err = o.withPaths(); err != nil {
		return err
	}
	e.o.fill, e.o.peer = 0, ""
	done, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer done(&err)
	fmt.Printf("bench %s: change of max_priority %d -> %d keeping %d messages, %d runs, vhost %q, provider %s\n",
		e.id, changeFrom, changeTo, o.change, o.runs, e.vhost, e.o.provider)
	fmt.Printf("machine: %s\n", machineLine(&e))
	loadBefore := loadavg()
	u := amqpURLOf(moverOf(e.client).URL(), o, e.vhost)
	var rs changeRuns
	for r := 1; r <= o.runs; r++ {
		apply, noop, err := e.changeByProvider(ctx, u, r)
		if err != nil {
			return fmt.Errorf("provider run %d: %w", r, err)
		}
		loop, err := e.changeByLoop(ctx, u, r)
		if err != nil {
			return fmt.Errorf("loop run %d: %w", r, err)
		}
		rs.apply, rs.noop, rs.loop = append(rs.apply, apply), append(rs.noop, noop), append(rs.loop, loop)
	}
	fmt.Printf("load average before %s, after %s\n\n", loadBefore, loadavg())
	fmt.Print(changeReport(o.change, rs))
	_ = os.RemoveAll(filepath.Join(e.o.dir, e.id))
	return nil
}

// changeConfig is one queuey_queue named name with max_priority priority, keeping its messages on a
// change.
func changeConfig(name string, priority int) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    queuey = { source = "queuey/queuey" }
  }
}

provider "queuey" {}

resource "queuey_queue" "q" {
  name                    = %s
  message_ttl             = %q
  max_priority            = %d
  keep_messages_on_change = true
}
`, hclString(name), changeTTL, priority)
}

// changeByProvider applies q at changeFrom, fills it, and times the apply at changeTo and a no-op
// apply (seconds).
func (e *env) changeByProvider(ctx context.Context, u string, r int) (apply, noop float64, err error) {
	prefix := e.namePrefix(kindQueuey, r)
	q := prefix + "q"
	dir := filepath.Join(e.o.dir, e.id, fmt.Sprintf("change-r%d", r))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	var walls []float64
	for i, priority := range []int{changeFrom, changeTo, changeTo} {
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(changeConfig(q, priority)), 0o644); err != nil {
			return 0, 0, err
		}
		pr, err := e.phase(ctx, dir, kindQueuey, "apply")
		if err != nil {
			return 0, 0, err
		}
		walls = append(walls, pr.wall.Seconds())
		if i == 0 {
			if err := fillQueue(ctx, u, q, e.o.change); err != nil {
				return 0, 0, err
			}
		}
		if i == 1 {
			logRun(r, "provider", e.o.change, pr.wall)
			if err := e.checkChanged(ctx, u, q); err != nil {
				return 0, 0, err
			}
		}
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "apply.log")); !strings.Contains(string(log), "No changes.") {
		return 0, 0, fmt.Errorf("the apply after the change was not a no-op; see %s", filepath.Join(dir, "apply.log"))
	}
	fmt.Fprintf(os.Stderr, "  run %d no-op apply of the same configuration: %s\n", r, time.Duration(walls[2]*float64(time.Second)).Round(time.Millisecond))
	_, err = e.deleteLeftovers(ctx, e.vhost, prefix)
	return walls[1], walls[2], err
}

// fillQueue publishes n messages of mixed priorities, each with an id, to q.
func fillQueue(ctx context.Context, u, q string, n int) error {
	conn, ch, err := dialChannel(u)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	return publish(ctx, ch, q, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Priority: uint8(i % (changeFrom + 1))}
	})
}

// checkChanged fails unless q holds e.o.change messages at x-max-priority changeTo and its holding
// queue is gone.
func (e *env) checkChanged(ctx context.Context, u, q string) error {
	got, err := e.client.GetQueue(ctx, e.vhost, q, broker.Declared)
	if err != nil {
		return err
	}
	if p, _ := topology.AsInt(got.Arguments[topology.ArgMaxPriority]); p != changeTo {
		return fmt.Errorf("after the change %s has %s %v, want %d", q, topology.ArgMaxPriority, got.Arguments[topology.ArgMaxPriority], changeTo)
	}
	holding := topology.RedeclaringQueueName(q)
	if _, err := e.client.GetQueue(ctx, e.vhost, holding, broker.Declared); !errors.Is(err, broker.ErrNotFound) {
		return fmt.Errorf("after the change %s is still there (%v)", holding, err)
	}
	conn, ch, err := dialChannel(u)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		return err
	}
	if st.Messages != e.o.change {
		return fmt.Errorf("after the change %s holds %d messages, want %d", q, st.Messages, e.o.change)
	}
	return nil
}

// changeArgs are q's arguments at max_priority priority, as the provider declares them.
func changeArgs(priority int) amqp.Table {
	return amqp.Table{topology.ArgMessageTTL: int64(changeTTLMs), topology.ArgMaxPriority: int64(priority)}
}

// changeByLoop declares and fills q at changeFrom and times the floor: messages moved aside, q
// deleted (guarded) and declared at changeTo, messages moved back, holding queue deleted (seconds).
func (e *env) changeByLoop(ctx context.Context, u string, r int) (float64, error) {
	q := fmt.Sprintf("bench-%s-loop-r%d-q", e.id, r)
	holding := topology.RedeclaringQueueName(q)
	conn, ch, err := dialChannel(u)
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	if _, err := ch.QueueDeclare(q, true, false, false, false, changeArgs(changeFrom)); err != nil {
		return 0, err
	}
	if err := fillQueue(ctx, u, q, e.o.change); err != nil {
		return 0, err
	}
	start := time.Now()
	moved, err := loopChange(ctx, ch, u, q, holding)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if moved != 2*e.o.change {
		return 0, fmt.Errorf("moved %d messages, want %d each way", moved, e.o.change)
	}
	logRun(r, "loop", e.o.change, took)
	if err := e.checkChanged(ctx, u, q); err != nil {
		return 0, err
	}
	_, err = ch.QueueDelete(q, false, false, false)
	return took.Seconds(), err
}

// loopChange is the timed part of the floor; it returns the messages moved, both ways.
func loopChange(ctx context.Context, ch *amqp.Channel, u, q, holding string) (int, error) {
	if _, err := ch.QueueDeclare(holding, true, false, false, false, nil); err != nil {
		return 0, err
	}
	aside, err := bareRedrive(ctx, u, q, holding)
	if err != nil {
		return aside, err
	}
	if _, err := ch.QueueDelete(q, true, true, false); err != nil {
		return aside, err
	}
	if _, err := ch.QueueDeclare(q, true, false, false, false, changeArgs(changeTo)); err != nil {
		return aside, err
	}
	back, err := bareRedrive(ctx, u, holding, q)
	if err != nil {
		return aside + back, err
	}
	_, err = ch.QueueDelete(holding, true, true, false)
	return aside + back, err
}

// changeReport is the change case's table: medians of the change's apply, the no-op apply and the
// loop, the apply's rate raw and net of the no-op, and its ratio to the loop's.
func changeReport(n int, rs changeRuns) string {
	net := make([]float64, len(rs.apply))
	for i := range rs.apply {
		net[i] = rs.apply[i] - rs.noop[i]
	}
	apply, noop, netS, loop := median(rs.apply), median(rs.noop), median(net), median(rs.loop)
	rate := func(s float64) float64 {
		if s <= 0 {
			return 0
		}
		return float64(n) / s
	}
	var w strings.Builder
	fmt.Fprintf(&w, "change of max_priority %d -> %d keeping %d messages of %d B (keep_messages_on_change = true; median of %d alternating runs, window %d):\n",
		changeFrom, changeTo, n, redriveBody, len(rs.apply), mover.Window)
	fmt.Fprintf(&w, "| mover | s | messages/s |\n|---|---:|---:|\n")
	fmt.Fprintf(&w, "| terraform apply of the change (queuey_queue) | %.2f | %.0f |\n", apply, rate(apply))
	fmt.Fprintf(&w, "| no-op terraform apply of the same configuration (the CLI's fixed cost) | %.2f | — |\n", noop)
	fmt.Fprintf(&w, "| net: the change's apply less the no-op apply, run by run | %.2f | %.0f |\n", netS, rate(netS))
	fmt.Fprintf(&w, "| bare amqp091-go loop: two moves, same guarantee, same delete and declare (floor) | %.2f | %.0f |\n", loop, rate(loop))
	raw, netRatio := rate(apply)/rate(loop), rate(netS)/rate(loop)
	fmt.Fprintf(&w, "| ratio raw (the target: >= %.1fx the loop) | %.2fx | %s |\n", changeTarget, raw, verdict(raw >= changeTarget))
	fmt.Fprintf(&w, "| ratio net of the no-op apply | %.2fx | %s |\n", netRatio, verdict(netRatio >= changeTarget))
	return w.String()
}

// changeTarget is the least messages/s of the change's apply, as a share of the loop's.
const changeTarget = 0.8
