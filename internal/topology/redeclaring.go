package topology

import "fmt"

// RedeclaringSuffix is appended to a queue's name to name the holding queue
// that keeps its messages while it is declared again with new arguments.
const RedeclaringSuffix = ".redeclaring"

// RedeclaringQueueName returns the name of queue's holding queue, e.g.
// orders.redeclaring. It is never a hold queue (its name ends in no TTL) and
// none of the permission patterns covers it.
func RedeclaringQueueName(queue string) string { return queue + RedeclaringSuffix }

// RedeclaringQueue returns queue's holding queue as it is declared: no
// arguments, like the dead-letter queue (durable, not auto-delete, not
// exclusive, as every queue of the backend).
func RedeclaringQueue(queue string) Queue {
	return Queue{Name: RedeclaringQueueName(queue), Args: Arguments{}}
}

// ValidateRedeclaringName checks that queue's holding queue name fits
// RabbitMQ's limit. The name-length rule of the suffixes does not cover it, so
// a queue near the limit set by short custom suffixes can exist but not be
// declared again keeping its messages.
func ValidateRedeclaringName(queue string) error {
	if n := len(RedeclaringQueueName(queue)); n > MaxQueueNameBytes {
		return fmt.Errorf("queue name %q is %d bytes, so its holding queue (the name followed by %q) would be %d bytes, past "+
			"RabbitMQ's %d-byte limit", queue, len(queue), RedeclaringSuffix, n, MaxQueueNameBytes)
	}
	return nil
}
