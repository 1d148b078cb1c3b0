output "dead_queue" {
  description = "The dead-letter queue of the main queue."
  value       = queuey_queue.orders.dead_queue
}

output "arguments_json" {
  description = "The declaration arguments of the main queue."
  value       = queuey_queue.orders.arguments_json
}

output "queues_pattern" {
  description = "Regex for configure and read permissions over the whole topology."
  value       = queuey_queue.orders.queues_pattern
}

output "write_pattern" {
  description = "Regex for write permissions over the whole topology."
  value       = queuey_queue.orders.write_pattern
}

output "retry_hold_queue" {
  description = "The hold queue of a 29.2s retry, its TTL and its arguments."
  value = {
    name           = data.queuey_hold_queue.retry.name
    ttl_ms         = data.queuey_hold_queue.retry.ttl_ms
    expires_ms     = data.queuey_hold_queue.retry.expires_ms
    arguments_json = data.queuey_hold_queue.retry.arguments_json
  }
}

output "deferral_hold_queue" {
  description = "The hold queue of a 90m deferral and its arguments."
  value = {
    name           = data.queuey_hold_queue.deferral.name
    arguments_json = data.queuey_hold_queue.deferral.arguments_json
  }
}

output "topology_hold_queues" {
  description = "The distinct hold queues of the listed retry and deferral delays, ascending by TTL."
  value       = [for q in data.queuey_topology.orders.hold_queues : q.name]
}

output "hold_queue_name_30s" {
  description = "The same name as the 29.2s retry's, from the provider function."
  value       = provider::queuey::hold_queue_name(local.queue, "30s")
}
