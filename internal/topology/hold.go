package topology

// HoldQueue is a hold queue with its TTL and expiry.
type HoldQueue struct {
	Queue
	TTLMs     int64
	ExpiresMs int64
}

// HoldForTTL returns the hold queue of queue whose TTL is ttlMs.
func HoldForTTL(queue string, ttlMs int64, s Suffixes) (HoldQueue, error) {
	args, err := HoldQueueArgs(queue, ttlMs)
	if err != nil {
		return HoldQueue{}, err
	}
	return HoldQueue{
		Queue:     Queue{Name: HoldQueueName(queue, ttlMs, s), Args: args},
		TTLMs:     ttlMs,
		ExpiresMs: 2 * ttlMs,
	}, nil
}
