# Terraform 1.12+ and OpenTofu 1.12+: import a queue the application declared
# by its identity. vhost may be left out: the provider's vhost is used.
import {
  to = queuey_queue.orders
  identity = {
    name  = "orders"
    vhost = "/"
  }
}

resource "queuey_queue" "orders" {
  name         = "orders"
  message_ttl  = "24h"
  max_priority = 10
}
