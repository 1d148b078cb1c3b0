package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// wantedQueues is what a queuey_queue declares.
type wantedQueues struct {
	main topology.Queue
	dead topology.Queue
}

// wanted computes the queues of a plan with the provider's suffixes.
func (r *queueResource) wanted(m queueModel) (wantedQueues, diag.Diagnostics) {
	return r.wantedWith(m, r.data.suffixes)
}

func (r *queueResource) wantedWith(m queueModel, s topology.Suffixes) (wantedQueues, diag.Diagnostics) {
	var diags diag.Diagnostics
	name := m.Name.ValueString()
	var ttl, prio *int64
	if !m.MessageTTL.IsNull() && !m.MessageTTL.IsUnknown() {
		d, err := parseDuration("message_ttl", m.MessageTTL.ValueString(), messageTTLRange())
		if err != nil {
			diags.AddAttributeError(path.Root("message_ttl"), "Invalid Duration", err.Error())
			return wantedQueues{}, diags
		}
		ms, err := topology.MessageTTLMs(d)
		if err != nil {
			diags.AddAttributeError(path.Root("message_ttl"), "Invalid Message TTL", err.Error())
			return wantedQueues{}, diags
		}
		ttl = &ms
	}
	if !m.MaxPriority.IsNull() && !m.MaxPriority.IsUnknown() {
		p := m.MaxPriority.ValueInt64()
		prio = &p
	}
	args, err := topology.QueueArgs(ttl, prio)
	if err != nil {
		diags.AddAttributeError(path.Root("max_priority"), "Invalid Queue Arguments", err.Error())
		return wantedQueues{}, diags
	}
	return wantedQueues{
		main: topology.Queue{Name: name, Args: args},
		dead: topology.Queue{Name: topology.DeadQueueName(name, s), Args: topology.DeadQueueArgs()},
	}, diags
}

// suffixesFor returns the suffixes a queue in state was created with (read
// back from its dead_queue and hold_queue_prefix), falling back to the
// provider's for what state does not tell (after an import).
func (r *queueResource) suffixesFor(m queueModel) topology.Suffixes {
	s := r.data.suffixes
	name := m.Name.ValueString()
	if v := m.DeadQueue.ValueString(); !m.DeadQueue.IsNull() && strings.HasPrefix(v, name) && len(v) > len(name) {
		s.Dead = v[len(name):]
	}
	if v := m.HoldQueuePrefix.ValueString(); !m.HoldQueuePrefix.IsNull() && strings.HasPrefix(v, name) && len(v) > len(name) {
		s.Deferred = v[len(name):]
	}
	return s
}

// setDerived fills in the computed names and patterns.
func setDerived(m *queueModel, name, vhost string, s topology.Suffixes) {
	m.ID = types.StringValue(queueID(vhost, name))
	m.HoldQueuePrefix = types.StringValue(topology.HoldQueuePrefix(name, s))
	m.HoldQueuePattern = types.StringValue(topology.HoldQueuePattern(name, s))
	m.QueuesPattern = types.StringValue(topology.QueuesPattern(name, s))
	m.WritePattern = types.StringValue(topology.WritePattern(name, s))
}

// ignoredArgs are arguments newer brokers add by themselves to a queue
// declared without them; they are not a difference.
var ignoredArgs = map[string]string{"x-queue-type": "classic"}

// describeMismatch lists how an existing queue differs from what the backend
// declares: a classic, durable, not auto-delete, not exclusive queue with
// exactly the wanted arguments.
func describeMismatch(got broker.Queue, want topology.Queue) []string {
	var out []string
	add := func(what, has, wanted string) {
		out = append(out, fmt.Sprintf("queue %q: %s: broker has %s, wanted %s", want.Name, what, has, wanted))
	}
	if got.Type != "" && got.Type != "classic" {
		add("type", got.Type, "classic (no x-queue-type argument)")
	}
	if !got.Durable {
		add("durable", "false", "true")
	}
	if got.AutoDelete {
		add("auto_delete", "true", "false")
	}
	if got.Exclusive {
		add("exclusive", "true", "false")
	}
	for _, d := range topology.Compare(got.Arguments, want.Args, ignoredArgs) {
		out = append(out, fmt.Sprintf("queue %q: %s", want.Name, d.String()))
	}
	return out
}

func joinLines(lines []string) string { return strings.Join(lines, "\n  - ") }

// checkVhost verifies that the vhost exists and makes classic queues.
func checkVhost(ctx context.Context, c *broker.Client, vhost string) error {
	v, err := c.GetVhost(ctx, vhost)
	if errors.Is(err, broker.ErrNotFound) {
		return fmt.Errorf("vhost %q does not exist at %s (or the user has no permissions in it). Create it first "+
			"(for example `rabbitmqctl add_vhost %q`) or set `vhost` to an existing one", vhost, c.Endpoint(), vhost)
	}
	if err != nil {
		return err
	}
	if !v.IsClassic() {
		setting := "its default_queue_type"
		if node, err := c.NodeDefaultQueueType(ctx); v.FromNode || (err == nil && node == v.DefaultQueueType) {
			setting = "its default_queue_type, which a vhost that sets none takes from the node's default_queue_type in rabbitmq.conf"
		}
		return fmt.Errorf("vhost %q makes %s queues by default (%s), but the queuey backend declares its queues "+
			"without x-queue-type and its hold queues rely on classic-queue expiry (x-expires, x-message-ttl dead-lettering). "+
			"Use a vhost whose default queue type is classic (`rabbitmqctl add_vhost NAME --default-queue-type classic`, "+
			"or `rabbitmqctl update_vhost_metadata %s --default-queue-type classic`)", vhost, v.DefaultQueueType, setting, vhost)
	}
	return nil
}

// lookUpQueues reads the named queues of vhost, at the same time, each with a
// GET of that queue alone (whose cost to the broker does not grow with the
// vhost), and returns those that exist.
func lookUpQueues(ctx context.Context, c *broker.Client, vhost string, names ...string) (map[string]broker.Queue, error) {
	type answer struct {
		q   broker.Queue
		err error
	}
	answers := make([]chan answer, len(names))
	for i, name := range names {
		answers[i] = make(chan answer, 1)
		go func() {
			q, err := c.GetQueueDeclaration(ctx, vhost, name)
			answers[i] <- answer{q, err}
		}()
	}
	out := map[string]broker.Queue{}
	var firstErr error
	for i, name := range names {
		a := <-answers[i]
		switch {
		case a.err == nil:
			out[name] = a.q
		case errors.Is(a.err, broker.ErrNotFound):
		case firstErr == nil:
			firstErr = a.err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func declareErrorDetail(err error, q topology.Queue) string {
	if errors.Is(err, broker.ErrArgumentsConflict) {
		return fmt.Sprintf("RabbitMQ refused to declare %q with arguments %s: a queue of that name now exists with different "+
			"arguments (it was probably declared by someone else since it was checked). %v", q.Name, q.Args.JSON(), err)
	}
	return err.Error()
}

// intArg returns an integer argument of a queue as reported by the broker.
func intArg(args map[string]any, key string) (int64, bool) {
	v, ok := args[key]
	if !ok {
		return 0, false
	}
	return topology.AsInt(v)
}

// sameDurationMs reports whether a duration value equals ms milliseconds.
func sameDurationMs(v types.String, ms int64) bool {
	if v.IsNull() || v.IsUnknown() {
		return false
	}
	d, err := time.ParseDuration(v.ValueString())
	return err == nil && d == time.Duration(ms)*time.Millisecond
}

func renderArgs(args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Sprintf("%v", args)
	}
	return string(b)
}

// privateDrift is the private-state key under which Read leaves the
// differences found between the broker and the wanted queue.
const privateDrift = "drift"

func encodeDrift(lines []string) []byte {
	b, _ := json.Marshal(lines)
	return b
}

func decodeDrift(b []byte) []string {
	var lines []string
	if len(b) > 0 {
		_ = json.Unmarshal(b, &lines)
	}
	return lines
}

// destroyTarget names the queues a queuey_queue owns.
type destroyTarget struct {
	vhost      string
	main       string
	dead       string
	holdPrefix string
}

func (r *queueResource) targetOf(m queueModel) destroyTarget {
	s := r.suffixesFor(m)
	name := m.Name.ValueString()
	return destroyTarget{
		vhost:      m.Vhost.ValueString(),
		main:       name,
		dead:       topology.DeadQueueName(name, s),
		holdPrefix: topology.HoldQueuePrefix(name, s),
	}
}

// owned returns, in deletion order, the queues of t that exist: the hold
// queues by ascending TTL, then the main queue, then the dead-letter queue.
func (t destroyTarget) owned(queues map[string]broker.Queue) []broker.Queue {
	type hold struct {
		ttl int64
		q   broker.Queue
	}
	var holds []hold
	for name, q := range queues {
		if ttl, ok := topology.ParseHoldQueueNameWithPrefix(t.holdPrefix, name); ok {
			holds = append(holds, hold{ttl, q})
		}
	}
	sort.Slice(holds, func(i, j int) bool { return holds[i].ttl < holds[j].ttl })
	out := make([]broker.Queue, 0, len(holds)+2)
	for _, h := range holds {
		out = append(out, h.q)
	}
	for _, name := range []string{t.main, t.dead} {
		if q, ok := queues[name]; ok {
			out = append(out, q)
		}
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

// shortDuration writes d as Go does, without the zero units Go leaves at the
// end: 24h rather than 24h0m0s, 1m rather than 1m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// brokerErrorSummary picks a diagnostic summary for a failed broker call:
// what went wrong with the connection or credentials when that is the cause,
// else fallback.
func brokerErrorSummary(err error, fallback string) string {
	switch {
	case errors.Is(err, broker.ErrUnreachable):
		return "Management API Unreachable"
	case errors.Is(err, broker.ErrUnauthorized):
		return "Not Authorized By The Management API"
	}
	return fallback
}
