"""Client quotas (Kafka's ClientQuotaManager semantics): byte-rate and request-percentage quotas per
user / client-id entity, throttle times and channel muting."""
