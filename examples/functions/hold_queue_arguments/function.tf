# {"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}
output "hold_queue_arguments" {
  value = provider::queuey::hold_queue_arguments("orders", 30000)
}

# The arguments of the hold queue a 29.2s retry waits in, as an object.
output "retry_hold_queue_arguments" {
  value = jsondecode(provider::queuey::hold_queue_arguments(
    "orders",
    provider::queuey::deferred_ttl_ms("29.2s", "1s"),
  ))
}
