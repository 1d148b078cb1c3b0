# The hold queue a retry of "orders" after 29.2s waits in: the delay is rounded
# up to the provider's retry_granularity (1s by default), so its name is
# "orders.deferred.30000" and its TTL 30000 ms.
data "queuey_hold_queue" "retry" {
  queue = "orders"
  delay = "29.2s"
}

# A deferral is rounded to the provider's deferred_granularity instead.
data "queuey_hold_queue" "deferral" {
  queue   = "orders"
  delay   = "90m"
  purpose = "deferral"
}

# The granularity can also be given here, overriding the provider's.
data "queuey_hold_queue" "coarse" {
  queue       = "orders"
  delay       = "61s"
  granularity = "1m"
}

output "retry_hold_queue" {
  value = data.queuey_hold_queue.retry.name # "orders.deferred.30000"
}

output "retry_hold_queue_arguments" {
  # {"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}
  value = data.queuey_hold_queue.retry.arguments_json
}

output "coarse_hold_queue" {
  value = data.queuey_hold_queue.coarse.name # "orders.deferred.120000"
}
