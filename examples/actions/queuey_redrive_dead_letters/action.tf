# Terraform 1.14 or later. After the fix that ends the failures is deployed,
# move the dead letters of orders back to orders:
#   terraform apply -invoke=action.queuey_redrive_dead_letters.orders
action "queuey_redrive_dead_letters" "orders" {
  config {
    queue = "orders"
    # Move the oldest 100 only, e.g. to try the fix on a few first.
    # limit = 100
  }
}
