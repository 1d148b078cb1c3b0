# What the vhost's policies and operator policies do to the queues of "orders"
# (orders, orders.dead, its hold queues), as the plan's policy check sees it.
data "queuey_policy_effects" "orders" {
  queue = "orders"
}

# A warning at every plan and apply while a policy breaks the topology.
check "orders_policies" {
  assert {
    condition     = data.queuey_policy_effects.orders.ok
    error_message = join("\n", flatten(data.queuey_policy_effects.orders.queues[*].effects))
  }
}

# The effects by queue, e.g. for a dashboard.
output "orders_policy_effects" {
  value = { for q in data.queuey_policy_effects.orders.queues : q.name => q.effects if length(q.effects) > 0 }
}
