# Terraform 1.14+: `terraform query` lists the logical queues of a vhost, and
# `terraform query -generate-config-out=queues.tf` writes a queuey_queue
# resource and an import block for each.
list "queuey_queue" "orders" {
  provider = queuey
  # Terraform reads at most 100 results unless told otherwise.
  limit = 1000

  config {
    vhost      = "/"
    name_regex = "^orders"
  }
}
