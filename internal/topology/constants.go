package topology

import "time"

// Queue argument keys, spelled exactly as RabbitMQ and the backend spell them.
const (
	// ArgDeadLetterExchange names the exchange a queue dead-letters into.
	ArgDeadLetterExchange = "x-dead-letter-exchange"
	// ArgDeadLetterRoutingKey names the routing key used when dead-lettering.
	ArgDeadLetterRoutingKey = "x-dead-letter-routing-key"
	// ArgExpires makes the broker delete a queue left unused for that many milliseconds.
	ArgExpires = "x-expires"
	// ArgMaxPriority declares how many priority levels a queue supports.
	ArgMaxPriority = "x-max-priority"
	// ArgMessageTTL sets a queue-wide message time-to-live in milliseconds.
	ArgMessageTTL = "x-message-ttl"
)

// Default name suffixes.
const (
	// DefaultDeadSuffix is appended to a queue's name to name its dead-letter queue.
	DefaultDeadSuffix = ".dead"
	// DefaultDeferredSuffix stands between a queue's name and a hold queue's TTL.
	DefaultDeferredSuffix = ".deferred."
)

// Limits.
const (
	// MaxTTLMs is the largest time-to-live RabbitMQ accepts: 2^32-1 ms, about 49.7 days.
	MaxTTLMs int64 = 4294967295
	// MaxDeferralMs is the longest hold this backend accepts: MaxTTLMs/2 rounded
	// down, about 24.8 days, so that a hold queue's x-expires (twice its TTL)
	// always fits in MaxTTLMs.
	MaxDeferralMs int64 = MaxTTLMs / 2
	// MaxQueueNameBytes is RabbitMQ's limit on the length of a queue name.
	MaxQueueNameBytes = 255
	// MaxTTLDigits is the number of decimal digits of the longest hold-queue TTL.
	MaxTTLDigits = 10
	// MinPriority and MaxPriority bound x-max-priority.
	MinPriority int64 = 1
	// MaxPriority is the largest x-max-priority RabbitMQ accepts.
	MaxPriority int64 = 255
	// ReservedPrefix starts every queue name RabbitMQ reserves for itself.
	ReservedPrefix = "amq."
)

// DefaultGranularity is the default retry and deferral granularity.
const DefaultGranularity = time.Second
