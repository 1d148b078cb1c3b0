# A "limits" policy on every queue of the vhost except the queues of "orders"
# and "billing" (q, q.dead, the hold queues, q.redeclaring), whose messages
# its keys would expire or drop.
resource "rabbitmq_policy" "limits" {
  name  = "limits"
  vhost = "/"

  policy {
    pattern  = provider::queuey::policy_pattern_excluding(".*", ["orders", "billing"])
    priority = 0
    apply_to = "queues"

    definition = {
      "max-length"  = 100000
      "message-ttl" = 86400000
    }
  }
}

# ^(?!(?:jobs\.orders(?:\-dlq|\.deferred\.[0-9]+|\.redeclaring)?)\z)[\s\S]*?(?:^jobs\.)
# for a backend configured with another dead suffix.
output "jobs_pattern" {
  value = provider::queuey::policy_pattern_excluding("^jobs\\.", ["jobs.orders"], { dead_suffix = "-dlq" })
}
