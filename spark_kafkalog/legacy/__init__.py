"""The client APIs of Kafka 0.8's design documents (section 5.1 and 5.6), in Python spelling, on top of the
project's client: the ``Producer`` taking ``ProducerData``, the stateless ``SimpleConsumer``, and the
ZooKeeper-coordinated ``ConsumerConnector`` with ``KafkaStream`` iterators and topic filters.

``docs/legacy-clients.md`` maps the seeds' Java/Scala names to these. Names resolve lazily, so importing one
API does not import the others (the connector needs kazoo, the others do not).

All three take the modern client's TLS/SASL settings (``security.protocol``, ``ssl.*``, ``sasl.*``; issue 26,
``security_settings``); the connector picks each broker's endpoint for that protocol (``broker_endpoints``).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    # the seeds' producer (kafka.javaapi.producer.Producer and its plug-in interfaces)
    "Producer": "producer",
    "ProducerConfig": "producer",
    "ProducerData": "producer",
    "Encoder": "producer",
    "DefaultEncoder": "producer",
    "StringEncoder": "producer",
    "Partitioner": "producer",
    "DefaultPartitioner": "producer",
    "CallbackHandler": "producer",
    "EventHandler": "producer",
    "QueueFullException": "producer",
    "FailedToSendMessageException": "event_handler",
    "DefaultEventHandler": "event_handler",
    # the low-level consumer (kafka.javaapi.consumer.SimpleConsumer)
    "SimpleConsumer": "simple_consumer",
    "FetchRequest": "simple_consumer",
    "MessageAndOffset": "simple_consumer",
    "ByteBufferMessageSet": "simple_consumer",
    "MultiFetchResponse": "simple_consumer",
    "OffsetOutOfRangeException": "simple_consumer",
    "NotLeaderForPartitionException": "message_set",
    "UnknownTopicOrPartitionException": "message_set",
    "MessageSizeTooLargeException": "message_set",
    "LATEST_TIME": "simple_consumer",
    "EARLIEST_TIME": "simple_consumer",
    # the high-level consumer (kafka.consumer.ConsumerConnector, ZooKeeper-coordinated)
    "ConsumerConnector": "consumer_connector",
    "ConsumerConfig": "consumer_connector",
    "Consumer": "consumer_connector",
    "ConsumerRebalanceFailedException": "consumer_connector",
    "KafkaStream": "kafka_stream",
    "MessageAndMetadata": "kafka_stream",
    "ConsumerTimeoutException": "kafka_stream",
    "TopicFilter": "topic_filter",
    "Whitelist": "topic_filter",
    "Blacklist": "topic_filter",
    # issue 26: the TLS/SASL settings the configs accept, and ZooKeeper discovery by security protocol
    "BrokerEndPointNotAvailableException": "broker_endpoints",
    "SECURITY_KEYS": "security_settings",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
