# The main queue "orders" and its dead-letter queue "orders.dead", declared
# exactly as the queuey backend declares them.
resource "queuey_queue" "orders" {
  name         = "orders"
  message_ttl  = "24h"
  max_priority = 10
}

# A queue in another vhost, which refuses to be destroyed while any of its
# queues holds a message (the default), spelled out for clarity.
resource "queuey_queue" "billing" {
  name          = "invoices"
  vhost         = "billing"
  force_destroy = false
}

# The patterns give an application's user exactly the permissions it needs
# on the whole topology, hold queues included.
output "orders_permissions" {
  value = {
    configure = queuey_queue.orders.queues_pattern
    write     = queuey_queue.orders.write_pattern
    read      = queuey_queue.orders.queues_pattern
  }
}
