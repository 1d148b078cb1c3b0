# The import ID is the vhost and the queue name, each escaped as a URL path
# segment (Go's url.PathEscape), joined by one slash.

# Queue "orders" in the default vhost "/":
terraform import queuey_queue.orders '%2F/orders'

# Queue "odd name@x" in vhost "team/a b":
terraform import queuey_queue.odd 'team%2Fa%20b/odd%20name@x'
