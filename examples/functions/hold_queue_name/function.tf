# "orders.deferred.30000": 29.2s rounded up to the default 1s granularity.
output "retry_hold_queue" {
  value = provider::queuey::hold_queue_name("orders", "29.2s")
}

# With the settings of a backend that does not use the defaults:
# "orders-wait-120000", since 61s rounds up to two minutes.
output "custom_hold_queue" {
  value = provider::queuey::hold_queue_name("orders", "61s", {
    deferred_suffix = "-wait-"
    granularity     = "1m"
  })
}
