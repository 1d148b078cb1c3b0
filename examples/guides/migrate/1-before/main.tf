# Before: the queues of the logical queue "orders" managed with rabbitmq_queue.
# Both providers read RABBITMQ_ENDPOINT, RABBITMQ_USERNAME and RABBITMQ_PASSWORD.
terraform {
  required_providers {
    rabbitmq = { source = "cyrilgdn/rabbitmq" }
  }
}

provider "rabbitmq" {}

resource "rabbitmq_queue" "orders" {
  name  = "orders"
  vhost = "/"

  settings {
    durable        = true
    arguments_json = jsonencode({ "x-message-ttl" = 86400000, "x-max-priority" = 10 })
  }
}

resource "rabbitmq_queue" "orders_dead" {
  name  = "orders.dead"
  vhost = "/"

  settings {
    durable = true
  }
}
