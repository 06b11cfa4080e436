"""What the blocking ``Producer`` and the asyncio ``AIOProducer`` build and check alike: the accumulator and
partitioner of a ``ClientConfig``, the ``TransactionManager`` of a ``transactional.id``, the errors of an
unusable producer and of a transaction call without transactions, and the arguments of
``send_offsets_to_transaction``.

``ProducerCommon`` is a mixin: it reads the producer's ``config``, ``_closed``, ``_sender`` (its
``fatal_error``) and ``_transactions``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import KafkaClientError, ProducerClosedError
from spark_kafkalog.client.producer.accumulator import RecordAccumulator
from spark_kafkalog.client.producer.partitioner import make_partitioner
from spark_kafkalog.client.producer.sender_core import SenderCore
from spark_kafkalog.client.producer.transactions import TransactionError, TransactionManager
from spark_kafkalog.client.types import TopicPartition

__all__ = ["ProducerCommon", "new_accumulator", "new_partitioner", "new_transactions", "transaction_offsets"]


def new_accumulator(cfg: ClientConfig) -> RecordAccumulator:
    """The record accumulator of ``batch.size``, ``linger.ms``, ``compression.type`` (and level) and
    ``buffer.memory``."""
    return RecordAccumulator(
        batch_size=cfg.batch_size,
        linger_ms=cfg.linger_ms,
        compression=cfg.compression_type,
        compression_level=cfg.compression_level(),
        buffer_memory=cfg.buffer_memory,
    )


def new_partitioner(cfg: ClientConfig) -> tuple[Callable[..., int], Callable[..., None] | None]:
    """``(partition function, record_appended hook or None)`` of ``partitioner.class``."""
    return make_partitioner(cfg.partitioner, batch_size=cfg.batch_size, ignore_keys=cfg.partitioner_ignore_keys)


def new_transactions(cfg: ClientConfig, sender: SenderCore) -> TransactionManager | None:
    """The ``TransactionManager`` of ``transactional.id`` (None without one), on a ``KafkaClient`` of its own,
    wired to ``sender`` (its idempotence state marks batches transactional)."""
    if cfg.transactional_id is None:
        return None
    idem = sender.idempotence
    assert idem is not None  # a transactional.id implies idempotence (ClientConfig)
    idem.transactional = True
    manager = TransactionManager(
        KafkaClient(cfg, _producer=True), cfg.transactional_id, cfg.transaction_timeout_ms, idem
    )
    sender.transactions = manager
    return manager


def transaction_offsets(offsets: Mapping[Any, Any], group_metadata: Any) -> tuple[dict[TopicPartition, Any], str, Any]:
    """``send_offsets_to_transaction``'s arguments as ``TransactionManager.send_offsets`` takes them:
    ``(offsets by TopicPartition, group id, the consumer's group metadata or None)``; ``group_metadata`` is a
    group id or a consumer's ``group_metadata()``."""
    group_id = group_metadata if isinstance(group_metadata, str) else group_metadata.group_id
    tps = {TopicPartition(*tp) if not isinstance(tp, TopicPartition) else tp: v for tp, v in offsets.items()}
    return tps, group_id, None if isinstance(group_metadata, str) else group_metadata


class ProducerCommon:
    """The checks both producers make (see the module docstring)."""

    config: ClientConfig
    _closed: bool
    _sender: Any  # Sender or AsyncSender (fatal_error)
    _transactions: TransactionManager | None

    def _raise_unusable(self, topic: str) -> None:
        if self._closed:
            raise ProducerClosedError(f"cannot send to {topic}: the producer is closed")
        error = self._sender.fatal_error
        raise KafkaClientError(f"the producer failed: {error}", retriable=False) from error

    def _txn(self) -> TransactionManager:
        if self._transactions is None:
            raise TransactionError("this producer has no transactional.id: transactions are not available")
        if self._closed:
            raise ProducerClosedError("the producer is closed")
        return self._transactions

    def _timeout(self, timeout: float | None) -> float:
        """A transaction call's timeout in seconds: ``max.block.ms`` when ``None``."""
        return self.config.max_block_ms / 1000.0 if timeout is None else timeout
