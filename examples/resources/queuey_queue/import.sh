# The import ID is the vhost and the queue name, each escaped as a URL path
# segment (Go's url.PathEscape), joined by one slash.
#
# Import reads q as the broker has it. When q exists but its dead-letter
# queue q.dead does not, the plan after the import shows an in-place update
# of the queue: apply declares q.dead and changes nothing about q.

# Queue "orders" in the default vhost "/":
terraform import queuey_queue.orders '%2F/orders'

# Queue "odd name@x" in vhost "team/a b":
terraform import queuey_queue.odd 'team%2Fa%20b/odd%20name@x'
