# Terraform 1.14 or later. Throw the dead letters of orders away:
#   terraform apply -invoke=action.queuey_purge_dead_letters.orders
action "queuey_purge_dead_letters" "orders" {
  config {
    queue = "orders"
  }
}

# Terraform 1.16 or later: purge them before the queue is destroyed (or
# replaced), so that the destroy is not refused over them.
resource "queuey_queue" "orders" {
  name = "orders"

  lifecycle {
    action_trigger {
      events  = [before_destroy]
      actions = [action.queuey_purge_dead_letters.orders]
    }
  }
}
