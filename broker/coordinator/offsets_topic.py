"""The internal topic ``__consumer_offsets``: which partition holds a group, and Kafka's record formats.

Partition of a group: ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`` as Kafka computes
it (Java's ``String.hashCode`` over UTF-16 code units, 32-bit overflow; ``Utils.abs`` maps
``Integer.MIN_VALUE`` to 0), so a group lands on the same partition as on a Kafka cluster.

Records are Kafka's own (``GroupCoordinatorRecordSerde``), so Kafka's tools could read the topic. Every key
and value starts with an ``int16`` version:

    key version 0/1  OffsetCommitKey      group string, topic string, partition int32
    key version 2    GroupMetadataKey     group string
    OffsetCommitValue v0   offset int64, metadata string, commit_timestamp int64
                      v1   ... + expire_timestamp int64 (v1 only)
                      v2   offset, metadata, commit_timestamp
                      v3   offset, leader_epoch int32, metadata, commit_timestamp
                      v4   as v3, flexible (compact strings, tagged fields)
    GroupMetadataValue v0-4  protocol_type string, generation int32, protocol string?, leader string?,
                      current_state_timestamp int64 (v2+), members []MemberMetadata:
                      member_id, group_instance_id string? (v3+), client_id, client_host,
                      rebalance_timeout int32 (v1+), session_timeout int32, subscription bytes,
                      assignment bytes; v4 flexible

A null value is a tombstone (the commit or the group was deleted). We write key version 1, OffsetCommitValue
v3 (v1 when an explicit expire timestamp is given, as Kafka) and GroupMetadataValue v3; every version
above is read. Pure code, thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_kafkalog.protocol.codec import encode_struct
from spark_kafkalog.protocol.primitives import Writer
from spark_kafkalog.protocol.schema import DataSpec, declare_data

from .record_serde import read_record_part

OFFSETS_TOPIC = "__consumer_offsets"

_OFFSET_COMMIT_KEY = declare_data(
    "OffsetCommitKey",
    versions="0-1",
    flexible="none",
    fields="""
        group                      string
        topic                      string
        partition                  int32
    """,
)
_GROUP_METADATA_KEY = declare_data(
    "GroupMetadataKey",
    versions="2",
    flexible="none",
    fields="""
        group                      string
    """,
)
OFFSET_COMMIT_VALUE = declare_data(
    "OffsetCommitValue",
    versions="0-4",
    flexible="4+",
    fields="""
        offset                     int64
        leader_epoch               int32       v3+ default=-1
        metadata                   string
        commit_timestamp           int64
        expire_timestamp           int64       v1 default=-1
    """,
)
GROUP_METADATA_VALUE = declare_data(
    "GroupMetadataValue",
    versions="0-4",
    flexible="4+",
    fields="""
        protocol_type              string
        generation                 int32
        protocol                   string?
        leader                     string?
        current_state_timestamp    int64       v2+ default=-1
        members                    []MemberMetadata
          member_id                string
          group_instance_id        string?     v3+ default=null
          client_id                string
          client_host              string
          rebalance_timeout        int32       v1+ default=-1
          session_timeout          int32
          subscription             bytes
          assignment               bytes
    """,
)

OffsetCommitValue = OFFSET_COMMIT_VALUE.cls
GroupMetadataValue = GROUP_METADATA_VALUE.cls
MemberMetadata = GroupMetadataValue.MemberMetadata


class OffsetsRecordError(ValueError):
    """A record of ``__consumer_offsets`` that is not in any of Kafka's formats."""


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (signed 32-bit) over the UTF-16 code units of ``s``."""
    units = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(group_id: str, num_partitions: int) -> int:
    """The ``__consumer_offsets`` partition of ``group_id`` (Kafka's ``partitionFor``)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % num_partitions


@dataclass(frozen=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupKey:
    group: str


def _encode(spec: DataSpec, version: int, value) -> bytes:
    w = Writer()
    w.int16(version)
    flexible = spec.flexible is not None and version in spec.flexible
    return encode_struct(spec.struct, version, flexible, value, w).getvalue()


def _decode(spec: DataSpec, data, version: int | None = None):
    return read_record_part(spec, data, OffsetsRecordError, version=version)


def encode_offset_key(group: str, topic: str, partition: int, *, version: int = 1) -> bytes:
    return _encode(_OFFSET_COMMIT_KEY, version, _OFFSET_COMMIT_KEY.cls(group=group, topic=topic, partition=partition))


def encode_group_key(group: str) -> bytes:
    return _encode(_GROUP_METADATA_KEY, 2, _GROUP_METADATA_KEY.cls(group=group))


def decode_key(data) -> OffsetKey | GroupKey:
    """An OffsetCommitKey (versions 0, 1) or GroupMetadataKey (version 2); ``OffsetsRecordError`` otherwise."""
    if data is None or len(data) < 2:
        raise OffsetsRecordError("a __consumer_offsets key needs at least a 2-byte version")
    version = int.from_bytes(bytes(data[:2]), "big", signed=True)
    if version in (0, 1):
        k = _decode(_OFFSET_COMMIT_KEY, data)
        return OffsetKey(k.group, k.topic, k.partition)
    if version == 2:
        return GroupKey(_decode(_GROUP_METADATA_KEY, data).group)
    raise OffsetsRecordError(f"unknown __consumer_offsets key version {version} (0-2 are known)")


def encode_offset_value(
    offset: int,
    metadata: str,
    commit_timestamp: int,
    *,
    leader_epoch: int = -1,
    expire_timestamp: int = -1,
    version: int | None = None,
) -> bytes:
    """OffsetCommitValue: v3 by default, v1 when ``expire_timestamp`` is set (Kafka's choice)."""
    if version is None:
        version = 1 if expire_timestamp >= 0 else 3
    value = OffsetCommitValue(
        offset=offset,
        leader_epoch=leader_epoch,
        metadata=metadata or "",
        commit_timestamp=commit_timestamp,
        expire_timestamp=expire_timestamp,
    )
    return _encode(OFFSET_COMMIT_VALUE, version, value)


def decode_offset_value(data):
    """OffsetCommitValue of any version 0-4 (fields absent at its version keep their defaults)."""
    return _decode(OFFSET_COMMIT_VALUE, data)


def encode_group_value(value, *, version: int = 3) -> bytes:
    return _encode(GROUP_METADATA_VALUE, version, value)


def decode_group_value(data):
    """GroupMetadataValue of any version 0-4."""
    return _decode(GROUP_METADATA_VALUE, data)
