# The move: queuey_queue.orders takes over the state of rabbitmq_queue.orders,
# and the dead-letter queue's rabbitmq_queue leaves the state without being
# destroyed (queuey_queue manages orders.dead itself). The rabbitmq provider
# stays in required_providers until this is applied: both CLIs need it while
# its resources are in state.
terraform {
  required_providers {
    queuey   = { source = "queuey/queuey" }
    rabbitmq = { source = "cyrilgdn/rabbitmq" }
  }
}

provider "queuey" {}

provider "rabbitmq" {}

resource "queuey_queue" "orders" {
  name         = "orders"
  vhost        = "/"
  message_ttl  = "24h"
  max_priority = 10
}

moved {
  from = rabbitmq_queue.orders
  to   = queuey_queue.orders
}

removed {
  from = rabbitmq_queue.orders_dead

  lifecycle {
    destroy = false
  }
}
