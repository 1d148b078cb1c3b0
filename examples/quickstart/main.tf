# Quickstart: one logical queue on a live broker, and the names and arguments
# of its hold queues looked up without touching the broker.
#
# `make demo` builds the provider, makes a broker ready, points Terraform at the
# fresh build and applies this configuration. By hand:
#   export RABBITMQ_ENDPOINT=http://127.0.0.1:15672 RABBITMQ_USERNAME=guest RABBITMQ_PASSWORD=guest
#   terraform apply

terraform {
  required_version = ">= 1.8"

  required_providers {
    queuey = {
      source = "queuey/queuey"
    }
  }
}

# The endpoint and credentials come from RABBITMQ_ENDPOINT, RABBITMQ_USERNAME
# and RABBITMQ_PASSWORD.
provider "queuey" {}

locals {
  queue = "orders"
}

# Declares `orders` (with x-message-ttl and x-max-priority) and `orders.dead`.
resource "queuey_queue" "orders" {
  name         = local.queue
  message_ttl  = "24h"
  max_priority = 10
}

# The data sources below are pure: they compute names and arguments at plan
# time without contacting the broker.

# The hold queue a retry after 29.2s goes through: the delay is rounded up to
# the retry granularity (1s), so it is `orders.deferred.30000`.
data "queuey_hold_queue" "retry" {
  queue = local.queue
  delay = "29.2s"
}

# A deferral rounds with the deferred granularity instead.
data "queuey_hold_queue" "deferral" {
  queue   = local.queue
  delay   = "90m"
  purpose = "deferral"
}

# The whole topology of the queue: main, dead-letter and hold queues, and the
# permission patterns that cover them.
data "queuey_topology" "orders" {
  queue           = local.queue
  message_ttl     = "24h"
  max_priority    = 10
  retry_delays    = ["1s", "5s", "29.2s", "30s"]
  deferral_delays = ["1h"]
}
