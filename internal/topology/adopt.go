package topology

import (
	"fmt"
	"sort"
)

// Range texts of the main queue's arguments, a Mismatch's Wanted side for a bad value.
var (
	messageTTLWanted  = fmt.Sprintf("an integer from 0 to %d", MaxTTLMs)
	maxPriorityWanted = fmt.Sprintf("an integer from %d to %d", MinPriority, MaxPriority)
)

// MainQueueArgs reads back, from a queue declared by something else, the main-queue arguments the
// backend would declare (x-message-ttl 0 to MaxTTLMs, x-max-priority 1 to 255, integers), and every
// way the queue differs, in the order of Mismatches. The Arguments mean something only without
// mismatches.
func MainQueueArgs(got Existing) (Arguments, []Mismatch) {
	out := Mismatches(Existing{Type: got.Type, Durable: got.Durable, AutoDelete: got.AutoDelete, Exclusive: got.Exclusive}, Arguments{})
	args := Arguments{}
	for _, k := range sortedKeys(got.Arguments) {
		v := got.Arguments[k]
		switch k {
		case ArgMessageTTL:
			n, ok := asInt(v)
			if !ok || n < 0 || n > MaxTTLMs {
				out = append(out, Mismatch{Field: k, Broker: renderAny(v), Wanted: messageTTLWanted})
				continue
			}
			args[k] = Int(n)
		case ArgMaxPriority:
			n, ok := asInt(v)
			if !ok || ValidateMaxPriority(n) != nil {
				out = append(out, Mismatch{Field: k, Broker: renderAny(v), Wanted: maxPriorityWanted})
				continue
			}
			args[k] = Int(n)
		default:
			if iv, ok := ignoredArguments[k]; ok {
				if s, isStr := v.(string); isStr && s == iv {
					continue
				}
			}
			out = append(out, Mismatch{Field: k, Broker: renderAny(v), Wanted: "absent"})
		}
	}
	return args, out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
