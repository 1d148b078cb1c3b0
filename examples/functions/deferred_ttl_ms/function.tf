# 30000: 29.2s rounded up to a whole second.
output "ttl_at_1s" {
  value = provider::queuey::deferred_ttl_ms("29.2s", "1s")
}

# 35000: 30.5s rounded up to a multiple of 5s.
output "ttl_at_5s" {
  value = provider::queuey::deferred_ttl_ms("30.5s", "5s")
}

# 1000: a zero delay still waits one step.
output "ttl_of_zero" {
  value = provider::queuey::deferred_ttl_ms("0s", "1s")
}
