terraform {
  required_providers {
    queuey = {
      source = "queuey/queuey"
    }
  }
}

# The management API endpoint and credentials may instead come from the
# RABBITMQ_ENDPOINT, RABBITMQ_USERNAME and RABBITMQ_PASSWORD environment
# variables. Configuring the provider never contacts the broker, and the pure
# data sources and functions need no endpoint at all.
provider "queuey" {
  endpoint        = "https://rabbitmq.example.com:15671"
  username        = "terraform"
  vhost           = "/"
  request_timeout = "30s"

  # These must be the values the application's queuey backend runs with, or the
  # queues declared here will not match the ones it declares. The values shown
  # are the defaults.
  retry_granularity    = "1s"
  deferred_granularity = "1s"
  dead_suffix          = ".dead"
  deferred_suffix      = ".deferred."
}
