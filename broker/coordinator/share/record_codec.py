"""Bytes <-> share group coordinator records (``records``), in Kafka 4.4's ``__consumer_offsets`` formats.

A key is ``int16`` record type (10-15) followed by the key's fields at key version 0, not flexible (``int16``
length strings). A value is ``int16`` value version (0) followed by its fields, flexible (compact strings and
arrays, a tagged-field buffer ending every struct). The one tagged field Kafka 4.4 knows here is
ShareGroupTargetAssignmentMetadataValue's tag 0 ``assignment_timestamp`` (int64, default 0, written only when not
0); unknown tags are skipped on read. A null value is a tombstone. ``decode_record`` raises
``OffsetsRecordError`` (``offsets_topic``) for anything malformed; ``is_share_group_key`` tells the loader which
records are ours. Pure code, thread-safe.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from spark_kafkalog.protocol.schema import DataSpec, declare_data

from ..offsets_topic import OffsetsRecordError
from ..record_serde import read_record_part, record_type_of, write_record_part
from . import records as r

VALUE_VERSION = 0

_T = r.ShareRecordType


def _key_spec(name: str, record_type: int, fields: str) -> DataSpec[Any]:
    # the key's "version" on the wire is its record type; its fields are those of key version 0
    return declare_data(name, versions=str(record_type), flexible="none", fields=fields)


def _value_spec(name: str, fields: str) -> DataSpec[Any]:
    return declare_data(name, versions="0", flexible="0+", fields=fields)


_GROUP = "group_id string"
_MEMBER = "group_id string\nmember_id string"

_KEY_SPECS: dict[int, DataSpec[Any]] = {
    _T.SHARE_GROUP_MEMBER_METADATA: _key_spec("ShareGroupMemberMetadataKey", 10, _MEMBER),
    _T.SHARE_GROUP_METADATA: _key_spec("ShareGroupMetadataKey", 11, _GROUP),
    _T.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: _key_spec("ShareGroupTargetAssignmentMetadataKey", 12, _GROUP),
    _T.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: _key_spec("ShareGroupTargetAssignmentMemberKey", 13, _MEMBER),
    _T.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: _key_spec("ShareGroupCurrentMemberAssignmentKey", 14, _MEMBER),
    _T.SHARE_GROUP_STATE_PARTITION_METADATA: _key_spec("ShareGroupStatePartitionMetadataKey", 15, _GROUP),
}

_KEY_CLASSES: dict[int, type] = {
    _T.SHARE_GROUP_MEMBER_METADATA: r.ShareGroupMemberMetadataKey,
    _T.SHARE_GROUP_METADATA: r.ShareGroupMetadataKey,
    _T.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: r.ShareGroupTargetAssignmentMetadataKey,
    _T.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: r.ShareGroupTargetAssignmentMemberKey,
    _T.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: r.ShareGroupCurrentMemberAssignmentKey,
    _T.SHARE_GROUP_STATE_PARTITION_METADATA: r.ShareGroupStatePartitionMetadataKey,
}

_VALUE_SPECS: dict[int, DataSpec[Any]] = {
    _T.SHARE_GROUP_MEMBER_METADATA: _value_spec(
        "ShareGroupMemberMetadataValue",
        """
        rack_id                    string?
        client_id                  string
        client_host                string
        subscribed_topic_names     []string
        """,
    ),
    _T.SHARE_GROUP_METADATA: _value_spec(
        "ShareGroupMetadataValue",
        """
        epoch                      int32
        metadata_hash              int64
        """,
    ),
    _T.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: _value_spec(
        "ShareGroupTargetAssignmentMetadataValue",
        """
        assignment_epoch           int32
        assignment_timestamp       int64       tag0 default=0
        """,
    ),
    _T.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: _value_spec(
        "ShareGroupTargetAssignmentMemberValue",
        """
        topic_partitions           []TopicPartition
          topic_id                 uuid
          partitions               []int32
        """,
    ),
    _T.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: _value_spec(
        "ShareGroupCurrentMemberAssignmentValue",
        """
        member_epoch               int32
        previous_member_epoch      int32
        state                      int8
        assigned_partitions        []TopicPartitions
          topic_id                 uuid
          partitions               []int32
        """,
    ),
    _T.SHARE_GROUP_STATE_PARTITION_METADATA: _value_spec(
        "ShareGroupStatePartitionMetadataValue",
        """
        initializing_topics        []InitializingTopics
          topic_id                 uuid
          topic_name               string
          partitions               []int32
        initialized_topics         []InitializedTopics
          topic_id                 uuid
          topic_name               string
          partitions               []int32
        deleting_topics            []TopicInfo
          topic_id                 uuid
          topic_name               string
        """,
    ),
}

SHARE_GROUP_RECORD_TYPES = frozenset(_KEY_SPECS)


def _write(spec: DataSpec[Any], version: int, obj: Any) -> bytes:
    return write_record_part(spec, version, obj, OffsetsRecordError)


def _read(spec: DataSpec[Any], data: bytes | bytearray | memoryview) -> Any:
    return read_record_part(spec, data, OffsetsRecordError)


def is_share_group_key(key: bytes | bytearray | memoryview | None) -> bool:
    """Whether ``key`` is one of the share group record keys (types 10-15)."""
    return record_type_of(key) in SHARE_GROUP_RECORD_TYPES


def encode_key(key: r.ShareGroupRecordKey) -> bytes:
    spec = _KEY_SPECS[key.RECORD_TYPE]
    fields = {f.name: getattr(key, f.name) for f in dataclasses.fields(key)}
    return _write(spec, key.RECORD_TYPE, spec.cls(**fields))


def decode_key(data: bytes | bytearray | memoryview) -> r.ShareGroupRecordKey:
    record_type = record_type_of(data)
    spec = _KEY_SPECS.get(record_type) if record_type is not None else None
    if spec is None or record_type is None:
        raise OffsetsRecordError(f"{record_type} is not a share group record type ({sorted(_KEY_SPECS)})")
    wire = _read(spec, data)
    cls = _KEY_CLASSES[record_type]
    key: r.ShareGroupRecordKey = cls(**{f.name: getattr(wire, f.name) for f in dataclasses.fields(cls)})
    return key


def encode_value(record_type: int, value: r.ShareGroupRecordValue) -> bytes:
    spec = _VALUE_SPECS[record_type]
    return _write(spec, VALUE_VERSION, _to_wire(spec, value))


def decode_value(record_type: int, data: bytes | bytearray | memoryview) -> r.ShareGroupRecordValue:
    spec = _VALUE_SPECS.get(record_type)
    if spec is None:
        raise OffsetsRecordError(f"{record_type} is not a share group record type ({sorted(_VALUE_SPECS)})")
    return _from_wire(record_type, _read(spec, data))


def encode_record(record: r.ShareGroupRecord) -> tuple[bytes, bytes | None]:
    """(key bytes, value bytes or None for a tombstone)."""
    key = encode_key(record.key)
    value = None if record.value is None else encode_value(record.record_type, record.value)
    return key, value


def decode_record(
    key: bytes | bytearray | memoryview, value: bytes | bytearray | memoryview | None
) -> r.ShareGroupRecord:
    """A share group record read from ``__consumer_offsets``; ``OffsetsRecordError`` when malformed."""
    k = decode_key(key)
    return r.ShareGroupRecord(k, None if value is None else decode_value(k.RECORD_TYPE, value))


def _tps(wire_cls: Any, items: tuple[r.TopicPartitions, ...]) -> list[Any]:
    return [wire_cls(topic_id=t.topic_id, partitions=list(t.partitions)) for t in items]


def _infos(wire_cls: Any, items: tuple[r.TopicPartitionsInfo, ...]) -> list[Any]:
    return [wire_cls(topic_id=t.topic_id, topic_name=t.topic_name, partitions=list(t.partitions)) for t in items]


def _to_wire(spec: DataSpec[Any], v: r.ShareGroupRecordValue) -> Any:
    cls = spec.cls
    if isinstance(v, r.ShareGroupMemberMetadataValue):
        return cls(
            rack_id=v.rack_id,
            client_id=v.client_id,
            client_host=v.client_host,
            subscribed_topic_names=list(v.subscribed_topic_names),
        )
    if isinstance(v, r.ShareGroupMetadataValue):
        return cls(epoch=v.epoch, metadata_hash=v.metadata_hash)
    if isinstance(v, r.ShareGroupTargetAssignmentMetadataValue):
        return cls(assignment_epoch=v.assignment_epoch, assignment_timestamp=v.assignment_timestamp)
    if isinstance(v, r.ShareGroupTargetAssignmentMemberValue):
        return cls(topic_partitions=_tps(cls.TopicPartition, v.topic_partitions))
    if isinstance(v, r.ShareGroupCurrentMemberAssignmentValue):
        return cls(
            member_epoch=v.member_epoch,
            previous_member_epoch=v.previous_member_epoch,
            state=int(v.state),
            assigned_partitions=_tps(cls.TopicPartitions, v.assigned_partitions),
        )
    if isinstance(v, r.ShareGroupStatePartitionMetadataValue):
        return cls(
            initializing_topics=_infos(cls.InitializingTopics, v.initializing_topics),
            initialized_topics=_infos(cls.InitializedTopics, v.initialized_topics),
            deleting_topics=[cls.TopicInfo(topic_id=t.topic_id, topic_name=t.topic_name) for t in v.deleting_topics],
        )
    raise OffsetsRecordError(f"{type(v).__name__} is not a share group record value")


def _uuid(v: Any) -> uuid.UUID:
    return v if isinstance(v, uuid.UUID) else uuid.UUID(bytes=bytes(v))


def _tps_from(items: list[Any]) -> tuple[r.TopicPartitions, ...]:
    return tuple(r.TopicPartitions(_uuid(t.topic_id), tuple(t.partitions)) for t in items)


def _infos_from(items: list[Any]) -> tuple[r.TopicPartitionsInfo, ...]:
    return tuple(r.TopicPartitionsInfo(_uuid(t.topic_id), t.topic_name, tuple(t.partitions)) for t in items)


def _from_wire(record_type: int, w: Any) -> r.ShareGroupRecordValue:
    if record_type == _T.SHARE_GROUP_MEMBER_METADATA:
        return r.ShareGroupMemberMetadataValue(
            client_id=w.client_id,
            client_host=w.client_host,
            rack_id=w.rack_id,
            subscribed_topic_names=tuple(w.subscribed_topic_names),
        )
    if record_type == _T.SHARE_GROUP_METADATA:
        return r.ShareGroupMetadataValue(epoch=w.epoch, metadata_hash=w.metadata_hash)
    if record_type == _T.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA:
        return r.ShareGroupTargetAssignmentMetadataValue(w.assignment_epoch, w.assignment_timestamp)
    if record_type == _T.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER:
        return r.ShareGroupTargetAssignmentMemberValue(_tps_from(w.topic_partitions))
    if record_type == _T.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT:
        return r.ShareGroupCurrentMemberAssignmentValue(
            member_epoch=w.member_epoch,
            previous_member_epoch=w.previous_member_epoch,
            state=w.state,
            assigned_partitions=_tps_from(w.assigned_partitions),
        )
    if record_type == _T.SHARE_GROUP_STATE_PARTITION_METADATA:
        return r.ShareGroupStatePartitionMetadataValue(
            initializing_topics=_infos_from(w.initializing_topics),
            initialized_topics=_infos_from(w.initialized_topics),
            deleting_topics=tuple(r.TopicInfo(_uuid(t.topic_id), t.topic_name) for t in w.deleting_topics),
        )
    raise OffsetsRecordError(f"{record_type} is not a share group record type")
