"""Bytes <-> ``__share_group_state`` records (``records``), in Kafka 4.4's formats (its ``CoordinatorRecordSerde``).

A key is ``int16`` record type (0 ShareSnapshot, 1 ShareUpdate) followed by the key's fields at key version 0,
not flexible (``int16``-length string, 16-byte uuid, ``int32``). A value is ``int16`` value version (0) followed
by its fields, flexible (KIP-482: compact arrays as unsigned varint length + 1, every struct ends in a
tagged-field buffer). The one tagged field Kafka 4.4 knows is ``delivery_complete_count`` (tag 0, int32, default
-1; KIP-1226, Kafka 4.2+), written only when it is not -1; unknown tags are skipped on read. A null value is a
tombstone. Anything malformed raises ``ShareStateRecordError`` naming the record and the fault. Pure code,
thread-safe.
"""

from __future__ import annotations

import uuid
from typing import Any

from broker.coordinator.record_serde import read_record_part, record_type_of, write_record_part
from spark_kafkalog.protocol.schema import DataSpec, declare_data

from .records import (
    ShareRecordType,
    ShareSnapshotValue,
    ShareStateKey,
    ShareStateRecord,
    ShareStateValue,
    ShareUpdateValue,
)
from .state_batches import StateBatch

VALUE_VERSION = 0

_KEY_FIELDS = """
    group_id                   string
    topic_id                   uuid
    partition                  int32
"""

_BATCH_FIELDS = """
          first_offset             int64
          last_offset              int64
          delivery_state           int8
          delivery_count           int16
"""

_KEY_SPECS: dict[int, DataSpec[Any]] = {
    # the key's "version" on the wire is its record type; its fields are those of key version 0
    ShareRecordType.SHARE_SNAPSHOT: declare_data("ShareSnapshotKey", versions="0", flexible="none", fields=_KEY_FIELDS),
    ShareRecordType.SHARE_UPDATE: declare_data("ShareUpdateKey", versions="1", flexible="none", fields=_KEY_FIELDS),
}

_VALUE_SPECS: dict[int, DataSpec[Any]] = {
    ShareRecordType.SHARE_SNAPSHOT: declare_data(
        "ShareSnapshotValue",
        versions="0",
        flexible="0+",
        fields="""
        snapshot_epoch             int32
        state_epoch                int32
        leader_epoch               int32
        start_offset               int64
        delivery_complete_count    int32       tag0 default=-1
        create_timestamp           int64
        write_timestamp            int64
        state_batches              []StateBatch
        """
        + _BATCH_FIELDS,
    ),
    ShareRecordType.SHARE_UPDATE: declare_data(
        "ShareUpdateValue",
        versions="0",
        flexible="0+",
        fields="""
        snapshot_epoch             int32
        leader_epoch               int32
        start_offset               int64
        delivery_complete_count    int32       tag0 default=-1
        state_batches              []StateBatch
        """
        + _BATCH_FIELDS,
    ),
}


class ShareStateRecordError(ValueError):
    """A ``__share_group_state`` record that cannot be encoded or decoded."""


def _write(spec: DataSpec[Any], version: int, obj: Any) -> bytes:
    return write_record_part(spec, version, obj, ShareStateRecordError)


def _read(spec: DataSpec[Any], data: bytes | bytearray | memoryview) -> Any:
    return read_record_part(spec, data, ShareStateRecordError)


# -- keys -----------------------------------------------------------------------------------------------------------
def encode_key(key: ShareStateKey) -> bytes:
    spec = _KEY_SPECS[key.record_type]
    return _write(
        spec, key.record_type, spec.cls(group_id=key.group_id, topic_id=key.topic_id, partition=key.partition)
    )


def decode_key(data: bytes | bytearray | memoryview) -> ShareStateKey:
    record_type = record_type_of(data)
    spec = _KEY_SPECS.get(record_type) if record_type is not None else None
    if spec is None or record_type is None:
        raise ShareStateRecordError(f"{record_type} is not a share state record type (0 ShareSnapshot, 1 ShareUpdate)")
    w = _read(spec, data)
    return ShareStateKey(ShareRecordType(record_type), w.group_id, _uuid(w.topic_id), w.partition)


# -- values ---------------------------------------------------------------------------------------------------------
def _wire_batches(cls: Any, batches: tuple[StateBatch, ...]) -> list[Any]:
    return [
        cls(
            first_offset=b.first_offset,
            last_offset=b.last_offset,
            delivery_state=b.delivery_state,
            delivery_count=b.delivery_count,
        )
        for b in batches
    ]


def _batches(items: list[Any]) -> tuple[StateBatch, ...]:
    return tuple(StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in items)


def encode_value(value: ShareStateValue) -> bytes:
    if isinstance(value, ShareSnapshotValue):
        spec = _VALUE_SPECS[ShareRecordType.SHARE_SNAPSHOT]
        wire = spec.cls(
            snapshot_epoch=value.snapshot_epoch,
            state_epoch=value.state_epoch,
            leader_epoch=value.leader_epoch,
            start_offset=value.start_offset,
            delivery_complete_count=value.delivery_complete_count,
            create_timestamp=value.create_timestamp,
            write_timestamp=value.write_timestamp,
            state_batches=_wire_batches(spec.cls.StateBatch, value.state_batches),
        )
    else:
        spec = _VALUE_SPECS[ShareRecordType.SHARE_UPDATE]
        wire = spec.cls(
            snapshot_epoch=value.snapshot_epoch,
            leader_epoch=value.leader_epoch,
            start_offset=value.start_offset,
            delivery_complete_count=value.delivery_complete_count,
            state_batches=_wire_batches(spec.cls.StateBatch, value.state_batches),
        )
    return _write(spec, VALUE_VERSION, wire)


def decode_value(record_type: int, data: bytes | bytearray | memoryview) -> ShareStateValue:
    spec = _VALUE_SPECS.get(record_type)
    if spec is None:
        raise ShareStateRecordError(f"{record_type} is not a share state record type (0 ShareSnapshot, 1 ShareUpdate)")
    w = _read(spec, data)
    if record_type == ShareRecordType.SHARE_SNAPSHOT:
        return ShareSnapshotValue(
            snapshot_epoch=w.snapshot_epoch,
            state_epoch=w.state_epoch,
            leader_epoch=w.leader_epoch,
            start_offset=w.start_offset,
            create_timestamp=w.create_timestamp,
            write_timestamp=w.write_timestamp,
            state_batches=_batches(w.state_batches),
            delivery_complete_count=w.delivery_complete_count,
        )
    return ShareUpdateValue(
        snapshot_epoch=w.snapshot_epoch,
        leader_epoch=w.leader_epoch,
        start_offset=w.start_offset,
        state_batches=_batches(w.state_batches),
        delivery_complete_count=w.delivery_complete_count,
    )


def encode_record(record: ShareStateRecord) -> tuple[bytes, bytes | None]:
    """(key bytes, value bytes or None for a tombstone)."""
    if record.value is not None:
        expected = (
            ShareRecordType.SHARE_SNAPSHOT
            if isinstance(record.value, ShareSnapshotValue)
            else ShareRecordType.SHARE_UPDATE
        )
        if expected != record.key.record_type:
            raise ShareStateRecordError(f"a {type(record.value).__name__} under a {record.key.record_type.name} key")
    return encode_key(record.key), None if record.value is None else encode_value(record.value)


def decode_record(
    key: bytes | bytearray | memoryview, value: bytes | bytearray | memoryview | None
) -> ShareStateRecord:
    """A record read from ``__share_group_state``; ``ShareStateRecordError`` when malformed."""
    k = decode_key(key)
    return ShareStateRecord(k, None if value is None else decode_value(k.record_type, value))


def _uuid(v: Any) -> uuid.UUID:
    return v if isinstance(v, uuid.UUID) else uuid.UUID(bytes=bytes(v))
