// Package topology computes the RabbitMQ queue topology of the queuey job-queue backend: the names
// of a logical queue's broker queues and their exact declaration arguments. For a logical queue q:
//
//   - q, the main queue, with x-message-ttl and x-max-priority only when configured;
//   - q.dead, the dead-letter queue, with no arguments;
//   - q.deferred.{ttl_ms}, one hold queue per delay: a message waits there for the queue-wide TTL,
//     then dead-letters back to q through the default exchange; the queue expires after twice its
//     TTL idle.
//
// A classic queue only expires the message at its head, so each delay needs a queue of its own;
// delays are rounded up to a granularity so that near ones share one. Applications declare the same
// queues and RabbitMQ refuses a declaration whose arguments differ, so every name and argument
// matches the backend bit for bit. The package is pure: no network, no Terraform framework.
package topology
