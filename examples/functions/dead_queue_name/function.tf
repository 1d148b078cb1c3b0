# "orders.dead"
output "dead_queue" {
  value = provider::queuey::dead_queue_name("orders")
}

# "orders-dlq", for a backend configured with another dead suffix.
output "custom_dead_queue" {
  value = provider::queuey::dead_queue_name("orders", { dead_suffix = "-dlq" })
}
