"""The internal topic ``__transaction_state``: which partition holds a transactional id, and Kafka's record
formats (``TransactionLogKey`` / ``TransactionLogValue``), so Kafka's tools could read the topic.

Partition of a transactional id: ``Utils.abs(transactionalId.hashCode()) % transaction.state.log.num.partitions``
(Java's ``String.hashCode``; see ``offsets_topic.partition_for``).

    TransactionLogKey   v0   version int16 (0), transactional_id string
    TransactionLogValue v0   version int16 (0), producer_id int64, producer_epoch int16,
                             transaction_timeout_ms int32, transaction_status int8,
                             transaction_partitions nullable []{topic string, partition_ids []int32},
                             transaction_last_update_timestamp_ms int64, transaction_start_timestamp_ms int64
    TransactionLogValue v1   the same fields, flexible, with the tagged fields of transactions v2 (Kafka 4.x):
                             previous_producer_id int64 (tag 0, default -1), next_producer_id int64 (tag 1,
                             default -1), client_transaction_version int16 (tag 2, default 0)

v0 is written while ``transaction.version`` is 0 (readable by Kafka before 4.0), v1 from level 1 on, as Kafka
writes (``TransactionVersion.transactionLogValueVersion``); both are read. A null value is a tombstone: the
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
        previous_producer_id       int64       v1+ tag0 default=-1
        next_producer_id           int64       v1+ tag1 default=-1
        producer_epoch             int16
        transaction_timeout_ms     int32
        transaction_status         int8
        transaction_partitions     []PartitionsSchema  null0+
          topic                    string
          partition_ids            []int32
        transaction_last_update_timestamp_ms  int64
        transaction_start_timestamp_ms  int64
        client_transaction_version  int16      v1+ tag2 default=0
    """,
)
_Value = _VALUE.cls
_Partitions = _Value.PartitionsSchema


class TransactionLogError(OffsetsRecordError):
    """A record of ``__transaction_state`` that is not in Kafka's format."""


@dataclass
class TxnLogValue:
    """A decoded TransactionLogValue; ``partitions`` maps topic -> sorted partition ids. ``previous_producer_id``
    is the id before the latest transition (-1: none), ``next_producer_id`` the id a transactions-v2 commit or
    abort that exhausted the epoch hands over once its markers are written (-1: none), and
    ``client_transaction_version`` the transaction version the producer used (0, or 2 for transactions v2)."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    status: int
    partitions: dict[str, list[int]] = field(default_factory=dict)
    last_update_ms: int = -1
    start_ms: int = -1
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0


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


def encode_txn_value(v: TxnLogValue, version: int = 0) -> bytes:
    """Value ``version`` (0, or 1 with the tagged fields). Kafka writes a null partition list for Empty/Complete
    states with no partitions; an empty array is written here in every state (both decode to no partitions)."""
    value = _Value(
        producer_id=v.producer_id,
        previous_producer_id=v.previous_producer_id,
        next_producer_id=v.next_producer_id,
        client_transaction_version=v.client_transaction_version,
        producer_epoch=v.producer_epoch,
        transaction_timeout_ms=v.timeout_ms,
        transaction_status=v.status,
        transaction_partitions=[
            _Partitions(topic=t, partition_ids=sorted(ps)) for t, ps in sorted(v.partitions.items())
        ],
        transaction_last_update_timestamp_ms=v.last_update_ms,
        transaction_start_timestamp_ms=v.start_ms,
    )
    return _encode(_VALUE, version, value)


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
        v.previous_producer_id,
        v.next_producer_id,
        v.client_transaction_version,
    )
