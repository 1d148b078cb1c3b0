// Package topology computes the RabbitMQ queue topology of the queuey job-queue
// backend: the names of a logical queue's broker queues and the exact
// declaration arguments of each.
//
// For a logical queue q the backend keeps three kinds of broker queue:
//
//   - q, the main work queue, declared with x-message-ttl and x-max-priority
//     only when those are configured;
//   - q.dead, the dead-letter queue, declared with no arguments;
//   - q.deferred.{ttl_ms}, one hold queue per distinct delay. A message waits
//     there for the queue-wide TTL and is then dead-lettered back to q through
//     the default exchange. The hold queue deletes itself once it has been idle
//     for twice its TTL.
//
// Every wait gets a queue of its own length because a classic queue only
// expires the message at its head: mixing delays in one queue would let a
// long wait hold back every shorter one behind it. Delays are rounded up to a
// granularity so that near-identical delays share one hold queue.
//
// Applications declare the same queues themselves and RabbitMQ refuses a
// declaration whose arguments differ from the existing queue's, so every name
// and argument here must match the backend bit for bit: the same keys, the
// same integer values, nothing added. A hold queue's arguments therefore
// depend on nothing but q and the TTL in its name.
//
// The package is pure: it never opens a connection and imports neither the
// Terraform framework nor any network code.
package topology
