# Every queue of "orders" as the queuey backend declares it, plus regular
# expressions for permissions and policies.
data "queuey_topology" "orders" {
  queue        = "orders"
  message_ttl  = "24h"
  max_priority = 10

  # The backoffs of the application's retry policy; 29.2s and 30s round to the
  # same hold queue, orders.deferred.30000.
  retry_delays    = ["1s", "5s", "29.2s", "30s", "5m"]
  deferral_delays = ["1h"]
}

output "main_queue_arguments" {
  value = data.queuey_topology.orders.main_queue.arguments_json # {"x-max-priority":10,"x-message-ttl":86400000}
}

output "dead_queue" {
  value = data.queuey_topology.orders.dead_queue.name # "orders.dead"
}

output "hold_queues" {
  value = data.queuey_topology.orders.hold_queues[*].name
}

# Patterns for RabbitMQ permissions covering the whole topology of "orders":
# configure and read on queues_pattern, write on write_pattern.
output "permissions" {
  value = {
    configure = data.queuey_topology.orders.queues_pattern # ^orders(\.dead|\.deferred\.[0-9]+)?$
    read      = data.queuey_topology.orders.queues_pattern
    write     = data.queuey_topology.orders.write_pattern # ^(amq\.default|orders(\.dead|\.deferred\.[0-9]+)?)$
  }
}
