"""Bytes <-> consumer group coordinator records (``records``), in Kafka 4.x's ``__consumer_offsets`` formats.

A key is ``int16`` record type (3-8, 16) followed by the key's fields at key version 0, not flexible
(classic ``int16``-length strings). A value is ``int16`` value version (0) followed by its fields at that
version, flexible (KIP-482: compact strings and arrays as unsigned varint length + 1, every struct ends in a
tagged-field buffer). The tagged fields Kafka 4.4 knows:

    ConsumerGroupMetadataValue                  tag 0 metadata_hash int64 (default 0)
    ConsumerGroupMemberMetadataValue            tag 0 classic_member_metadata: session_timeout_ms int32,
                                                      supported_protocols [](name string, metadata bytes)
    ConsumerGroupTargetAssignmentMetadataValue  tag 0 assignment_timestamp int64 (default 0)
    ConsumerGroupCurrentMemberAssignmentValue   TopicPartitions tag 0 assignment_epochs []int32 (default null)

A tagged field is written only when it differs from its default; unknown tags are skipped on read. Kafka's
default of ``classic_member_metadata`` is an empty struct, so a consumer-protocol member's null is written
(tag 0, size 1, varint 0 = null, as Kafka 4.4 writes it) and an absent tag or an empty struct reads as null. A
null value is a tombstone. ``decode_record`` raises ``OffsetsRecordError`` (``offsets_topic``) for anything else;
``is_consumer_group_key`` tells the loader which records are ours. Pure code, thread-safe.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from spark_kafkalog.protocol.schema import DataSpec, declare_data

from ..offsets_topic import OffsetsRecordError
from ..record_serde import read_record_part, record_type_of, write_record_part
from .records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupPartitionMetadataValue,
    ConsumerGroupRecordKey,
    ConsumerGroupRecordValue,
    ConsumerGroupRegularExpressionKey,
    ConsumerGroupRegularExpressionValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    CoordinatorRecord,
    CoordinatorRecordType,
    PartitionMetadata,
    TopicMetadata,
    TopicPartition,
    TopicPartitions,
)

VALUE_VERSION = 0

_T = CoordinatorRecordType


def _key_spec(name: str, record_type: int, fields: str) -> DataSpec[Any]:
    # the key's "version" on the wire is its record type; its fields are those of key version 0
    return declare_data(name, versions=str(record_type), flexible="none", fields=fields)


def _value_spec(name: str, fields: str) -> DataSpec[Any]:
    return declare_data(name, versions="0", flexible="0+", fields=fields)


_KEY_SPECS: dict[int, DataSpec[Any]] = {
    _T.CONSUMER_GROUP_METADATA: _key_spec("ConsumerGroupMetadataKey", 3, "group_id string"),
    _T.CONSUMER_GROUP_PARTITION_METADATA: _key_spec("ConsumerGroupPartitionMetadataKey", 4, "group_id string"),
    _T.CONSUMER_GROUP_MEMBER_METADATA: _key_spec(
        "ConsumerGroupMemberMetadataKey", 5, "group_id string\nmember_id string"
    ),
    _T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: _key_spec(
        "ConsumerGroupTargetAssignmentMetadataKey", 6, "group_id string"
    ),
    _T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: _key_spec(
        "ConsumerGroupTargetAssignmentMemberKey", 7, "group_id string\nmember_id string"
    ),
    _T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: _key_spec(
        "ConsumerGroupCurrentMemberAssignmentKey", 8, "group_id string\nmember_id string"
    ),
    _T.CONSUMER_GROUP_REGULAR_EXPRESSION: _key_spec(
        "ConsumerGroupRegularExpressionKey", 16, "group_id string\nregular_expression string"
    ),
}

_VALUE_SPECS: dict[int, DataSpec[Any]] = {
    _T.CONSUMER_GROUP_METADATA: _value_spec(
        "ConsumerGroupMetadataValue",
        """
        epoch                      int32
        metadata_hash              int64       tag0 default=0
        """,
    ),
    _T.CONSUMER_GROUP_PARTITION_METADATA: _value_spec(
        "ConsumerGroupPartitionMetadataValue",
        """
        topics                     []TopicMetadata
          topic_id                 uuid
          topic_name               string
          num_partitions           int32
          partition_metadata       []PartitionMetadata
            partition              int32
            racks                  []string
        """,
    ),
    _T.CONSUMER_GROUP_MEMBER_METADATA: _value_spec(
        "ConsumerGroupMemberMetadataValue",
        """
        instance_id                string?
        rack_id                    string?
        client_id                  string
        client_host                string
        subscribed_topic_names     []string
        subscribed_topic_regex     string?
        rebalance_timeout_ms       int32       default=-1
        server_assignor            string?
        classic_member_metadata    ClassicMemberMetadata?  tag0
          session_timeout_ms       int32
          supported_protocols      []ClassicProtocol
            name                   string
            metadata               bytes
        """,
    ),
    _T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: _value_spec(
        "ConsumerGroupTargetAssignmentMetadataValue",
        """
        assignment_epoch           int32
        assignment_timestamp       int64       tag0 default=0
        """,
    ),
    _T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: _value_spec(
        "ConsumerGroupTargetAssignmentMemberValue",
        """
        topic_partitions           []TopicPartition
          topic_id                 uuid
          partitions               []int32
        """,
    ),
    _T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: _value_spec(
        "ConsumerGroupCurrentMemberAssignmentValue",
        """
        member_epoch               int32
        previous_member_epoch      int32
        state                      int8
        assigned_partitions        []AssignedPartitions
          topic_id                 uuid
          partitions               []int32
          assignment_epochs        []int32?    tag0 default=null
        partitions_pending_revocation  []PendingPartitions
          topic_id                 uuid
          partitions               []int32
          assignment_epochs        []int32?    tag0 default=null
        """,
    ),
    _T.CONSUMER_GROUP_REGULAR_EXPRESSION: _value_spec(
        "ConsumerGroupRegularExpressionValue",
        """
        topics                     []string
        version                    int64
        timestamp                  int64
        """,
    ),
}

CONSUMER_GROUP_RECORD_TYPES = frozenset(_KEY_SPECS)

_KEY_CLASSES: dict[int, type] = {
    _T.CONSUMER_GROUP_METADATA: ConsumerGroupMetadataKey,
    _T.CONSUMER_GROUP_PARTITION_METADATA: ConsumerGroupPartitionMetadataKey,
    _T.CONSUMER_GROUP_MEMBER_METADATA: ConsumerGroupMemberMetadataKey,
    _T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: ConsumerGroupTargetAssignmentMetadataKey,
    _T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: ConsumerGroupTargetAssignmentMemberKey,
    _T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: ConsumerGroupCurrentMemberAssignmentKey,
    _T.CONSUMER_GROUP_REGULAR_EXPRESSION: ConsumerGroupRegularExpressionKey,
}


# -- the wire form ----------------------------------------------------------------------------------------------
def _write(spec: DataSpec[Any], version: int, obj: Any) -> bytes:
    return write_record_part(spec, version, obj, OffsetsRecordError)


def _read(spec: DataSpec[Any], data: bytes | bytearray | memoryview) -> Any:
    return read_record_part(spec, data, OffsetsRecordError)


def is_consumer_group_key(key: bytes | bytearray | memoryview | None) -> bool:
    """Whether ``key`` is one of the consumer group record keys (types 3-8, 16)."""
    return record_type_of(key) in CONSUMER_GROUP_RECORD_TYPES


# -- keys -----------------------------------------------------------------------------------------------------------
def encode_key(key: ConsumerGroupRecordKey) -> bytes:
    spec = _KEY_SPECS[key.RECORD_TYPE]
    fields = {f.name: getattr(key, f.name) for f in dataclasses.fields(key)}
    return _write(spec, key.RECORD_TYPE, spec.cls(**fields))


def decode_key(data: bytes | bytearray | memoryview) -> ConsumerGroupRecordKey:
    record_type = record_type_of(data)
    spec = _KEY_SPECS.get(record_type) if record_type is not None else None
    if spec is None:
        raise OffsetsRecordError(f"{record_type} is not a consumer group record type ({sorted(_KEY_SPECS)})")
    wire = _read(spec, data)
    cls = _KEY_CLASSES[record_type]  # type: ignore[index]  # not None: spec was found
    key: ConsumerGroupRecordKey = cls(**{f.name: getattr(wire, f.name) for f in dataclasses.fields(cls)})
    return key


# -- values ---------------------------------------------------------------------------------------------------------
def encode_value(record_type: int, value: ConsumerGroupRecordValue) -> bytes:
    spec = _VALUE_SPECS[record_type]
    return _write(spec, VALUE_VERSION, _to_wire(spec, value))


def decode_value(record_type: int, data: bytes | bytearray | memoryview) -> ConsumerGroupRecordValue:
    spec = _VALUE_SPECS.get(record_type)
    if spec is None:
        raise OffsetsRecordError(f"{record_type} is not a consumer group record type ({sorted(_VALUE_SPECS)})")
    return _from_wire(record_type, _read(spec, data))


def encode_record(record: CoordinatorRecord) -> tuple[bytes, bytes | None]:
    """(key bytes, value bytes or None for a tombstone)."""
    key = encode_key(record.key)
    value = None if record.value is None else encode_value(record.record_type, record.value)
    return key, value


def decode_record(
    key: bytes | bytearray | memoryview, value: bytes | bytearray | memoryview | None
) -> CoordinatorRecord:
    """A consumer group record read from ``__consumer_offsets``; ``OffsetsRecordError`` when malformed."""
    k = decode_key(key)
    return CoordinatorRecord(k, None if value is None else decode_value(k.RECORD_TYPE, value))


def _to_wire(spec: DataSpec[Any], v: ConsumerGroupRecordValue) -> Any:
    cls = spec.cls
    if isinstance(v, ConsumerGroupMetadataValue):
        return cls(epoch=v.epoch, metadata_hash=v.metadata_hash)
    if isinstance(v, ConsumerGroupPartitionMetadataValue):
        tm, pm = cls.TopicMetadata, cls.TopicMetadata.PartitionMetadata
        return cls(
            topics=[
                tm(
                    topic_id=t.topic_id,
                    topic_name=t.topic_name,
                    num_partitions=t.num_partitions,
                    partition_metadata=[pm(partition=p.partition, racks=list(p.racks)) for p in t.partition_metadata],
                )
                for t in v.topics
            ]
        )
    if isinstance(v, ConsumerGroupMemberMetadataValue):
        classic = None
        if v.classic_member_metadata is not None:
            cm = cls.ClassicMemberMetadata
            classic = cm(
                session_timeout_ms=v.classic_member_metadata.session_timeout_ms,
                supported_protocols=[
                    cm.ClassicProtocol(name=p.name, metadata=p.metadata)
                    for p in v.classic_member_metadata.supported_protocols
                ],
            )
        return cls(
            instance_id=v.instance_id,
            rack_id=v.rack_id,
            client_id=v.client_id,
            client_host=v.client_host,
            subscribed_topic_names=list(v.subscribed_topic_names),
            subscribed_topic_regex=v.subscribed_topic_regex,
            rebalance_timeout_ms=v.rebalance_timeout_ms,
            server_assignor=v.server_assignor,
            classic_member_metadata=classic,
        )
    if isinstance(v, ConsumerGroupTargetAssignmentMetadataValue):
        return cls(assignment_epoch=v.assignment_epoch, assignment_timestamp=v.assignment_timestamp)
    if isinstance(v, ConsumerGroupTargetAssignmentMemberValue):
        tp = cls.TopicPartition
        return cls(
            topic_partitions=[tp(topic_id=t.topic_id, partitions=list(t.partitions)) for t in v.topic_partitions]
        )
    if isinstance(v, ConsumerGroupCurrentMemberAssignmentValue):

        def tps(wire_cls: Any, items: tuple[TopicPartitions, ...]) -> list[Any]:
            return [
                wire_cls(
                    topic_id=t.topic_id,
                    partitions=list(t.partitions),
                    assignment_epochs=None if t.assignment_epochs is None else list(t.assignment_epochs),
                )
                for t in items
            ]

        return cls(
            member_epoch=v.member_epoch,
            previous_member_epoch=v.previous_member_epoch,
            state=int(v.state),
            assigned_partitions=tps(cls.AssignedPartitions, v.assigned_partitions),
            partitions_pending_revocation=tps(cls.PendingPartitions, v.partitions_pending_revocation),
        )
    if isinstance(v, ConsumerGroupRegularExpressionValue):
        return cls(topics=list(v.topics), version=v.version, timestamp=v.timestamp)
    raise OffsetsRecordError(f"{type(v).__name__} is not a consumer group record value")


def _from_wire(record_type: int, w: Any) -> ConsumerGroupRecordValue:
    if record_type == _T.CONSUMER_GROUP_METADATA:
        return ConsumerGroupMetadataValue(epoch=w.epoch, metadata_hash=w.metadata_hash)
    if record_type == _T.CONSUMER_GROUP_PARTITION_METADATA:
        return ConsumerGroupPartitionMetadataValue(
            topics=tuple(
                TopicMetadata(
                    topic_id=t.topic_id,
                    topic_name=t.topic_name,
                    num_partitions=t.num_partitions,
                    partition_metadata=tuple(
                        PartitionMetadata(partition=p.partition, racks=tuple(p.racks)) for p in t.partition_metadata
                    ),
                )
                for t in w.topics
            )
        )
    if record_type == _T.CONSUMER_GROUP_MEMBER_METADATA:
        classic = None
        c = w.classic_member_metadata
        if c is not None and (c.session_timeout_ms or c.supported_protocols):  # an empty struct: Kafka's default
            classic = ClassicMemberMetadata(
                session_timeout_ms=c.session_timeout_ms,
                supported_protocols=tuple(
                    ClassicProtocol(name=p.name, metadata=bytes(p.metadata)) for p in c.supported_protocols
                ),
            )
        return ConsumerGroupMemberMetadataValue(
            instance_id=w.instance_id,
            rack_id=w.rack_id,
            client_id=w.client_id,
            client_host=w.client_host,
            subscribed_topic_names=tuple(w.subscribed_topic_names),
            subscribed_topic_regex=w.subscribed_topic_regex,
            rebalance_timeout_ms=w.rebalance_timeout_ms,
            server_assignor=w.server_assignor,
            classic_member_metadata=classic,
        )
    if record_type == _T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
        return ConsumerGroupTargetAssignmentMetadataValue(
            assignment_epoch=w.assignment_epoch, assignment_timestamp=w.assignment_timestamp
        )
    if record_type == _T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
        return ConsumerGroupTargetAssignmentMemberValue(
            topic_partitions=tuple(
                TopicPartition(topic_id=_uuid(t.topic_id), partitions=tuple(t.partitions)) for t in w.topic_partitions
            )
        )
    if record_type == _T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:

        def tps(items: list[Any]) -> tuple[TopicPartitions, ...]:
            return tuple(
                TopicPartitions(
                    topic_id=_uuid(t.topic_id),
                    partitions=tuple(t.partitions),
                    assignment_epochs=None if t.assignment_epochs is None else tuple(t.assignment_epochs),
                )
                for t in items
            )

        return ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=w.member_epoch,
            previous_member_epoch=w.previous_member_epoch,
            state=w.state,
            assigned_partitions=tps(w.assigned_partitions),
            partitions_pending_revocation=tps(w.partitions_pending_revocation),
        )
    if record_type == _T.CONSUMER_GROUP_REGULAR_EXPRESSION:
        return ConsumerGroupRegularExpressionValue(topics=tuple(w.topics), version=w.version, timestamp=w.timestamp)
    raise OffsetsRecordError(f"{record_type} is not a consumer group record type")


def _uuid(v: Any) -> uuid.UUID:
    return v if isinstance(v, uuid.UUID) else uuid.UUID(bytes=bytes(v))
