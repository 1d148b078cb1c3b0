# After the move is applied: no rabbitmq_queue is left in state, so the
# moved and removed blocks and the rabbitmq provider can go.
terraform {
  required_providers {
    queuey = { source = "queuey/queuey" }
  }
}

provider "queuey" {}

resource "queuey_queue" "orders" {
  name         = "orders"
  vhost        = "/"
  message_ttl  = "24h"
  max_priority = 10
}
