"""The kafkalog broker: log store, Kafka-protocol server, replication and group coordination."""
