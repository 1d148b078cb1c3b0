# The hold queues of "orders" that exist on the broker right now, with their
# message counts: e.g. for an alert on messages stuck waiting.
data "queuey_hold_queues" "orders" {
  queue = "orders"
}

output "orders_hold_queues" {
  value = data.queuey_hold_queues.orders.names
}

output "orders_waiting_messages" {
  # concat([0], ...) because sum() refuses an empty list.
  value = sum(concat([0], [for q in data.queuey_hold_queues.orders.queues : coalesce(q.messages, 0)]))
}
