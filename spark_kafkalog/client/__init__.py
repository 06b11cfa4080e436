"""The Kafka client: one sans-IO connection state machine with blocking and asyncio transports, a metadata
cache, ListOffsets and partition fetching (``KafkaClient``), an idempotent batching ``Producer``, an
``AdminClient``, and a ``Consumer`` with manual assignment or consumer-group membership (``subscribe``), with
the group protocol's building blocks: the consumer protocol's ``Subscription``/``Assignment`` and the range,
roundrobin, sticky and cooperative-sticky assignors (``assignor_by_name``), and a ``ShareConsumer`` for share groups
(KIP-932) with its ``AcknowledgeType``. Keys and values go through
serializer objects in confluent-kafka's shape (``IntegerSerializer``, ``JSONDeserializer``, ... and the
``Serializer``/``Deserializer`` bases: ``client.serialization``). docs/api.md lists the public API (``__all__``).

Works against our broker and any Kafka broker: every request is sent at the highest version both sides
support, never at a version the broker does not advertise. Imports neither pyspark nor kazoo.

    from spark_kafkalog.client import KafkaClient, Producer, TopicPartition, OffsetSpec

    with Producer("localhost:9092", linger_ms=5) as producer:
        producer.send("events", b"value", key=b"key")
    with KafkaClient("localhost:9092") as client:
        tp = TopicPartition("events", 0)
        end = client.list_offsets({tp: OffsetSpec.LATEST})[tp]
        for fetched in client.fetch_batches(tp, 0, end):
            records = fetched.batch.records()
"""

from spark_kafkalog.client.admin import AdminClient, AdminOperationError
from spark_kafkalog.client.aio import AsyncKafkaClient
from spark_kafkalog.client.aio.admin import AIOAdminClient
from spark_kafkalog.client.aio.consumer import AIOConsumer
from spark_kafkalog.client.aio.producer import AIOProducer
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer import (
    Assignment,
    CommitFailedError,
    Consumer,
    CooperativeStickyAssignor,
    GroupMemberFatalError,
    PartitionAssignor,
    RangeAssignor,
    RebalanceProtocol,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
    UnknownAssignorError,
    UnsupportedGroupProtocolError,
    assignor_by_name,
)
from spark_kafkalog.client.core import KafkaClient
from spark_kafkalog.client.errors import (
    AuthorizationError,
    BrokerNotAvailableError,
    ClusterAuthorizationFailedError,
    ConfigError,
    GroupAuthorizationFailedError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NoCommonVersionError,
    OffsetOutOfRangeError,
    ProducerClosedError,
    RecordTooLargeError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)
from spark_kafkalog.client.producer import (
    DefaultPartitioner,
    Partitioner,
    Producer,
    RecordFuture,
    RoundRobinPartitioner,
    UniformStickyPartitioner,
)
from spark_kafkalog.client.schema_registry import (
    RegisteredSchema,
    Schema,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from spark_kafkalog.client.serialization import (
    Deserializer,
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    JSONDeserializer,
    JSONSerializer,
    KeyDeserializationError,
    KeySerializationError,
    MessageField,
    SerializationContext,
    SerializationError,
    Serializer,
    StringDeserializer,
    StringSerializer,
    ValueDeserializationError,
    ValueSerializationError,
)
from spark_kafkalog.client.share import AcknowledgeType, ShareConsumer
from spark_kafkalog.client.types import (
    ConsumerRecord,
    FetchedBatch,
    NewTopic,
    OffsetSpec,
    PartitionDescription,
    RecordMetadata,
    TopicDescription,
    TopicPartition,
)

__all__ = [
    "AuthorizationError",
    "ClusterAuthorizationFailedError",
    "GroupAuthorizationFailedError",
    "TopicAuthorizationFailedError",
    "TransactionalIdAuthorizationFailedError",
    "CommitFailedError",
    "GroupMemberFatalError",
    "UnsupportedGroupProtocolError",
    "AdminClient",
    "AdminOperationError",
    "AIOAdminClient",
    "AIOConsumer",
    "AIOProducer",
    "AsyncKafkaClient",
    "Assignment",
    "BrokerNotAvailableError",
    "ClientConfig",
    "ConfigError",
    "Consumer",
    "ConsumerRecord",
    "CooperativeStickyAssignor",
    "DefaultPartitioner",
    "FetchedBatch",
    "KafkaClient",
    "KafkaClientError",
    "KafkaConnectionError",
    "KafkaTimeoutError",
    "NewTopic",
    "NoCommonVersionError",
    "OffsetOutOfRangeError",
    "OffsetSpec",
    "PartitionAssignor",
    "PartitionDescription",
    "Partitioner",
    "Producer",
    "ProducerClosedError",
    "RangeAssignor",
    "RebalanceProtocol",
    "RecordFuture",
    "RecordMetadata",
    "RecordTooLargeError",
    "RoundRobinAssignor",
    "RoundRobinPartitioner",
    "StickyAssignor",
    "Subscription",
    "TopicDescription",
    "TopicPartition",
    "UniformStickyPartitioner",
    "UnknownAssignorError",
    "assignor_by_name",
    # share groups (KIP-932; client.share)
    "AcknowledgeType",
    "ShareConsumer",
    # serializers (client.serialization)
    "Deserializer",
    "DoubleDeserializer",
    "DoubleSerializer",
    "IntegerDeserializer",
    "IntegerSerializer",
    "JSONDeserializer",
    "JSONSerializer",
    "KeyDeserializationError",
    "KeySerializationError",
    "MessageField",
    "SerializationContext",
    "SerializationError",
    "Serializer",
    "StringDeserializer",
    "StringSerializer",
    "ValueDeserializationError",
    "ValueSerializationError",
    # Schema Registry (client.schema_registry; its serializers are there)
    "RegisteredSchema",
    "Schema",
    "SchemaRegistryClient",
    "SchemaRegistryError",
]
