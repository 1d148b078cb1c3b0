package topology

import "time"

// Queue argument keys, spelled as RabbitMQ and the backend spell them.
const (
	ArgDeadLetterExchange   = "x-dead-letter-exchange"
	ArgDeadLetterRoutingKey = "x-dead-letter-routing-key"
	ArgExpires              = "x-expires"
	ArgMaxPriority          = "x-max-priority"
	ArgMessageTTL           = "x-message-ttl"
)

// Default name suffixes: q.dead, and q.deferred.{ttl_ms}.
const (
	DefaultDeadSuffix     = ".dead"
	DefaultDeferredSuffix = ".deferred."
)

// Limits.
const (
	// MaxTTLMs is the largest time-to-live RabbitMQ accepts: 2^32-1 ms, about 49.7 days.
	MaxTTLMs int64 = 4294967295
	// MaxDeferralMs is the longest hold: half of MaxTTLMs (about 24.8 days), so that x-expires
	// (twice the TTL) fits.
	MaxDeferralMs int64 = MaxTTLMs / 2
	// MaxQueueNameBytes is RabbitMQ's limit on the length of a queue name.
	MaxQueueNameBytes = 255
	// MaxTTLDigits is the number of digits of the longest hold queue TTL.
	MaxTTLDigits = 10
	// MinPriority and MaxPriority bound x-max-priority.
	MinPriority int64 = 1
	MaxPriority int64 = 255
	// ReservedPrefix starts the queue names RabbitMQ reserves.
	ReservedPrefix = "amq."
)

// DefaultGranularity is the default retry and deferral granularity.
const DefaultGranularity = time.Second
