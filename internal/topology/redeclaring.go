package topology

import "fmt"

// RedeclaringSuffix names the queue holding q's messages while q is declared again.
const RedeclaringSuffix = ".redeclaring"

// RedeclaringQueueName returns queue's holding queue, e.g. orders.redeclaring.
func RedeclaringQueueName(queue string) string { return queue + RedeclaringSuffix }

// RedeclaringQueue returns queue's holding queue as declared: no arguments.
func RedeclaringQueue(queue string) Queue {
	return Queue{Name: RedeclaringQueueName(queue), Args: Arguments{}}
}

// ValidateRedeclaringName checks that queue's holding queue name fits RabbitMQ's limit.
func ValidateRedeclaringName(queue string) error {
	if n := len(RedeclaringQueueName(queue)); n > MaxQueueNameBytes {
		return fmt.Errorf("queue name %q is %d bytes, so its holding queue (the name followed by %q) would be %d bytes, past "+
			"RabbitMQ's %d-byte limit", queue, len(queue), RedeclaringSuffix, n, MaxQueueNameBytes)
	}
	return nil
}
