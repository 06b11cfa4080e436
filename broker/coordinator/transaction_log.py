"""The internal topic ``__transaction_state``: which partition holds a transactional id, and Kafka's record
formats (``TransactionLogKey`` / ``TransactionLogValue``), so Kafka's tools could read the topic.

Partition of a transactional id: ``Utils.abs(transactionalId.hashCode()) % transaction.state.log.num.partitions``
(Java's ``String.hashCode``; see ``offsets_topic.partition_for``).

    TransactionLogKey   v0   version int16 (0), transactional_id string
    TransactionLogValue v0   version int16 (0), producer_id int64, producer_epoch int16,
                             transaction_timeout_ms int32, transaction_status int8,
                             transaction_partitions nullable []{topic string, partition_ids []int32},
                             transaction_last_update_timestamp_ms int64, transaction_start_timestamp_ms int64

Not flexible (Kafka's v1 value, flexible with tagged fields, is read too). A null value is a tombstone: the
transactional id expired. Status codes: Empty 0, Ongoing 1, PrepareCommit 2, PrepareAbort 3,
CompleteCommit 4, CompleteAbort 5, Dead 6, PrepareEpochFence 7. Pure code, thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from spark_kafkalog.protocol.schema import declare_data

from .offsets_topic import OffsetsRecordError, _decode, _encode, partition_for

TRANSACTION_STATE_TOPIC = "__transaction_state"

_KEY = declare_data(
    "TransactionLogKey",
    versions="0",
    flexible="none",
    fields="""
        transactional_id           string
    """,
)
_VALUE = declare_data(
    "TransactionLogValue",
    versions="0-1",
    flexible="1+",
    fields="""
        producer_id                int64
        producer_epoch             int16
        transaction_timeout_ms     int32
        transaction_status         int8
        transaction_partitions     []PartitionsSchema  null0+
          topic                    string
          partition_ids            []int32
        transaction_last_update_timestamp_ms  int64
        transaction_start_timestamp_ms  int64
    """,
)
_Value = _VALUE.cls
_Partitions = _Value.PartitionsSchema


class TransactionLogError(OffsetsRecordError):
    """A record of ``__transaction_state`` that is not in Kafka's format."""


@dataclass
class TxnLogValue:
    """A decoded TransactionLogValue; ``partitions`` maps topic -> sorted partition ids."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    status: int
    partitions: dict[str, list[int]] = field(default_factory=dict)
    last_update_ms: int = -1
    start_ms: int = -1


def transaction_partition_for(transactional_id: str, num_partitions: int) -> int:
    """The ``__transaction_state`` partition of ``transactional_id`` (Kafka's ``partitionFor``)."""
    return partition_for(transactional_id, num_partitions)


def encode_txn_key(transactional_id: str) -> bytes:
    return _encode(_KEY, 0, _KEY.cls(transactional_id=transactional_id))


def decode_txn_key(data) -> str:
    if data is None or len(data) < 2:
        raise TransactionLogError("a __transaction_state key needs at least a 2-byte version")
    try:
        return _decode(_KEY, data).transactional_id
    except OffsetsRecordError as e:
        raise TransactionLogError(str(e)) from None


def encode_txn_value(v: TxnLogValue) -> bytes:
    """Value v0. Kafka writes a null partition list for Empty/Complete states with no partitions; an empty
    array is written here in every state (both decode to no partitions)."""
    value = _Value(
        producer_id=v.producer_id,
        producer_epoch=v.producer_epoch,
        transaction_timeout_ms=v.timeout_ms,
        transaction_status=v.status,
        transaction_partitions=[
            _Partitions(topic=t, partition_ids=sorted(ps)) for t, ps in sorted(v.partitions.items())
        ],
        transaction_last_update_timestamp_ms=v.last_update_ms,
        transaction_start_timestamp_ms=v.start_ms,
    )
    return _encode(_VALUE, 0, value)


def decode_txn_value(data) -> TxnLogValue:
    try:
        v = _decode(_VALUE, data)
    except OffsetsRecordError as e:
        raise TransactionLogError(str(e)) from None
    partitions: dict[str, list[int]] = {}
    for p in v.transaction_partitions or ():
        partitions.setdefault(p.topic, []).extend(p.partition_ids)
    return TxnLogValue(
        v.producer_id,
        v.producer_epoch,
        v.transaction_timeout_ms,
        v.transaction_status,
        {t: sorted(ps) for t, ps in partitions.items()},
        v.transaction_last_update_timestamp_ms,
        v.transaction_start_timestamp_ms,
    )
