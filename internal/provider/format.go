package provider

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

func joinLines(lines []string) string { return strings.Join(lines, "\n  - ") }

// sorted returns a sorted copy of names, so an error listing them reads the same on every run.
func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// shortDuration writes d without Go's trailing zero units: 24h, not 24h0m0s.
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

// queueNameDescription describes the logical queue name; suffixes says what the limit follows.
func queueNameDescription(suffixes string) string {
	return fmt.Sprintf("Name of the logical (main) queue, e.g. `orders`: 1 to %d bytes with the default suffixes "+
		"(the limit follows %s, so that every derived name fits RabbitMQ's %d bytes), not starting with `%s`.",
		topology.DefaultSuffixes().MaxNameBytes(), suffixes, topology.MaxQueueNameBytes, topology.ReservedPrefix)
}

// providerSuffixes names the provider's suffix settings, for descriptions.
const providerSuffixes = "the provider's `dead_suffix` and `deferred_suffix`"

// resourceNameDescription describes queuey_queue's name.
func resourceNameDescription() string {
	return fmt.Sprintf("Name of the logical queue `q`: 1 to %d bytes with the default suffixes (%d minus the longest "+
		"derived suffix, a hold queue's with a %d-digit TTL), not starting with `%s`. Changing it replaces the queues.",
		topology.DefaultSuffixes().MaxNameBytes(), topology.MaxQueueNameBytes, topology.MaxTTLDigits, topology.ReservedPrefix)
}

// countText is "1 message", "1204 messages" or "unknown messages": every count a user reads.
func countText(n *int64, noun string) string {
	switch {
	case n == nil:
		return "unknown " + noun + "s"
	case *n == 1:
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", *n, noun)
}
