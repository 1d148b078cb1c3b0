package topology

import (
	"fmt"
	"sort"
	"strings"
)

// NamedQueue is a queue of a vhost listing.
type NamedQueue struct {
	Name string
	Existing
}

// Found is a logical queue held exactly as the backend declares it, with its settings.
type Found struct {
	Name         string
	MessageTTLMs *int64
	MaxPriority  *int64
}

// NearMiss is a queue with a dead-letter sibling that is no logical queue, and why.
type NearMiss struct {
	Name   string
	Reason string
}

// String renders a near miss as "odd: x-max-length is not declared by the backend".
func (n NearMiss) String() string { return n.Name + ": " + n.Reason }

// LogicalQueues picks, sorted, the backend's logical queues of a vhost: each q whose dead-letter
// queue exists, both declared as the backend does (q with only a valid x-message-ttl and
// x-max-priority). One that differs is a near miss. Derived queues of a queue found are never
// candidates; match, when set, keeps the names it accepts.
func LogicalQueues(queues []NamedQueue, s Suffixes, match func(string) bool) ([]Found, []NearMiss) {
	byName := make(map[string]Existing, len(queues))
	names := make([]string, 0, len(queues))
	for _, q := range queues {
		if _, dup := byName[q.Name]; !dup {
			names = append(names, q.Name)
		}
		byName[q.Name] = q.Existing
	}
	// A queue sorts before its derived queues (its name is their prefix).
	sort.Strings(names)
	var found []Found
	var near []NearMiss
	listed := map[string]bool{}
	for _, name := range names {
		dead, ok := byName[DeadQueueName(name, s)]
		if !ok || derivedFromAny(name, listed, s) || (match != nil && !match(name)) {
			continue
		}
		f, reason := logicalQueue(name, byName[name], dead, s)
		if reason != "" {
			near = append(near, NearMiss{Name: name, Reason: reason})
			continue
		}
		found = append(found, f)
		listed[name] = true
	}
	return found, near
}

// derivedFromAny reports whether name is the dead-letter or a hold queue of a queue in listed.
func derivedFromAny(name string, listed map[string]bool, s Suffixes) bool {
	if base, ok := strings.CutSuffix(name, s.Dead); ok && listed[base] {
		return true
	}
	digits := len(name)
	for digits > 0 && isDigit(name[digits-1]) {
		digits--
	}
	base, ok := strings.CutSuffix(name[:digits], s.Deferred)
	if !ok || !listed[base] {
		return false
	}
	_, isHold := ParseHoldQueueName(base, name, s)
	return isHold
}

// logicalQueue checks a candidate and its dead-letter queue; the reason is empty when both match.
func logicalQueue(name string, main, dead Existing, s Suffixes) (Found, string) {
	if err := ValidateQueueName(name, s); err != nil {
		return Found{}, err.Error()
	}
	ttl, prio, reason := mainQueueSettings(main)
	if reason != "" {
		return Found{}, reason
	}
	if ms := Mismatches(dead, DeadQueueArgs()); len(ms) > 0 {
		return Found{}, fmt.Sprintf("its dead-letter queue %q: %s", DeadQueueName(name, s), describe(ms[0]))
	}
	return Found{Name: name, MessageTTLMs: ttl, MaxPriority: prio}, ""
}

// mainQueueSettings reads a main queue's TTL and priority, or the first difference.
func mainQueueSettings(got Existing) (ttlMs, maxPriority *int64, reason string) {
	args, ms := MainQueueArgs(got)
	if len(ms) > 0 {
		return nil, nil, describe(ms[0])
	}
	if v, ok := args[ArgMessageTTL]; ok {
		ttl := v.Int64()
		ttlMs = &ttl
	}
	if v, ok := args[ArgMaxPriority]; ok {
		p := v.Int64()
		maxPriority = &p
	}
	return ttlMs, maxPriority, ""
}

// describe words a difference for a listing's warning.
func describe(m Mismatch) string {
	switch {
	case m.Field == "type":
		return fmt.Sprintf("its type is %s; the backend declares classic queues", m.Broker)
	case m.Field == "durable" || m.Field == "auto_delete" || m.Field == "exclusive":
		return fmt.Sprintf("%s is %s; the backend declares %s", m.Field, m.Broker, m.Wanted)
	case m.Wanted == "absent":
		return fmt.Sprintf("%s is not declared by the backend", m.Field)
	case m.Broker == "absent":
		return fmt.Sprintf("%s is missing; the backend declares %s", m.Field, m.Wanted)
	default:
		return fmt.Sprintf("%s is %s; the backend declares %s", m.Field, m.Broker, m.Wanted)
	}
}
