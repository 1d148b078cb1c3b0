package topology

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
)

// Flags are the declaration flags of a queue.
type Flags struct {
	Durable    bool
	AutoDelete bool
	Exclusive  bool
}

// Declared holds the flags of every queue the backend declares (with no x-queue-type: classic).
var Declared = Flags{Durable: true, AutoDelete: false, Exclusive: false}

const (
	// ClassicType is the queue type the backend relies on (hold queues need classic-queue expiry).
	ClassicType = "classic"
	// ArgQueueType selects a queue's type; the backend never sends it (3.13+ add classic
	// themselves).
	ArgQueueType = "x-queue-type"
)

// ignoredArguments are arguments a broker adds itself, with the value that is no difference.
var ignoredArguments = map[string]string{ArgQueueType: ClassicType}

// Existing is a queue as a broker reports it.
type Existing struct {
	// Type is the queue type ("classic", "quorum", ...); empty when not reported.
	Type       string
	Durable    bool
	AutoDelete bool
	Exclusive  bool
	// Arguments as decoded from JSON: numbers may be float64 or json.Number.
	Arguments map[string]any
}

// Mismatch is one difference from the backend's declaration; "absent" for a side without it.
type Mismatch struct {
	Field  string
	Broker string
	Wanted string
}

func (m Mismatch) String() string {
	what := m.Field
	if m.Field != "type" && m.Field != "durable" && m.Field != "auto_delete" && m.Field != "exclusive" {
		what = "argument " + m.Field
	}
	return fmt.Sprintf("%s: broker has %s, wanted %s", what, m.Broker, m.Wanted)
}

// Mismatches lists, flags first then arguments by key, every way got differs from a declaration of
// want (a classic, durable, not auto-delete, not exclusive queue); none means an application's
// declaration would succeed.
func Mismatches(got Existing, want Arguments) []Mismatch {
	var out []Mismatch
	if got.Type != "" && got.Type != ClassicType {
		out = append(out, Mismatch{Field: "type", Broker: got.Type, Wanted: ClassicType + " (no x-queue-type argument)"})
	}
	flag := func(field string, has, wanted bool) {
		if has != wanted {
			out = append(out, Mismatch{Field: field, Broker: strconv.FormatBool(has), Wanted: strconv.FormatBool(wanted)})
		}
	}
	flag("durable", got.Durable, Declared.Durable)
	flag("auto_delete", got.AutoDelete, Declared.AutoDelete)
	flag("exclusive", got.Exclusive, Declared.Exclusive)
	for _, d := range compareArgs(got.Arguments, want, ignoredArguments) {
		m := Mismatch{Field: d.Key, Broker: "absent", Wanted: "absent"}
		if d.HasActual {
			m.Broker = d.Actual
		}
		if d.HasWanted {
			m.Wanted = d.Wanted
		}
		out = append(out, m)
	}
	return out
}

// ObservedJSON renders what a broker holds for a queue in the canonical form of Arguments.JSON: its
// arguments (no ignored x-queue-type), each differing flag under its own name, and "type" when not
// classic. Without mismatches it equals the wanted table's JSON.
func ObservedJSON(got Existing) string {
	m := make(map[string]any, len(got.Arguments)+4)
	for k, v := range got.Arguments {
		if iv, ok := ignoredArguments[k]; ok {
			if s, isStr := v.(string); isStr && s == iv {
				continue
			}
		}
		if i, ok := asInt(v); ok {
			v = i
		}
		m[k] = v
	}
	if got.Durable != Declared.Durable {
		m["durable"] = got.Durable
	}
	if got.AutoDelete != Declared.AutoDelete {
		m["auto_delete"] = got.AutoDelete
	}
	if got.Exclusive != Declared.Exclusive {
		m["exclusive"] = got.Exclusive
	}
	if _, ok := m[ArgQueueType]; !ok && got.Type != "" && got.Type != ClassicType {
		m["type"] = got.Type
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(k))
		b.WriteByte(':')
		b.WriteString(renderAny(m[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// DestroyOrder returns, of the existing names, those of the logical queue in deletion order: hold
// queues by ascending TTL, the holding queue, queue, then its dead-letter queue. Hold queues go
// first because their messages would dead-letter into a deleted queue; the dead-letter queue last
// because queue dead-letters into it.
func DestroyOrder(queue string, s Suffixes, existing []string) []string {
	type hold struct {
		ttl  int64
		name string
	}
	var holds []hold
	hasMain, hasDead, hasHolding := false, false, false
	dead, holding := DeadQueueName(queue, s), RedeclaringQueueName(queue)
	for _, name := range existing {
		switch name {
		case queue:
			hasMain = true
		case dead:
			hasDead = true
		case holding:
			hasHolding = true
		default:
			if ttl, ok := ParseHoldQueueName(queue, name, s); ok {
				holds = append(holds, hold{ttl, name})
			}
		}
	}
	sort.Slice(holds, func(i, j int) bool { return holds[i].ttl < holds[j].ttl })
	out := make([]string, 0, len(holds)+3)
	for i, h := range holds {
		if i > 0 && holds[i-1].ttl == h.ttl {
			continue // a name given twice
		}
		out = append(out, h.name)
	}
	if hasHolding {
		out = append(out, holding)
	}
	if hasMain {
		out = append(out, queue)
	}
	if hasDead {
		out = append(out, dead)
	}
	return out
}
