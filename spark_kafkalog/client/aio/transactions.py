"""``AsyncTransactionManager``: the asyncio producer's transactions, on its ``AsyncKafkaClient``.

The state machine, the requests and the answer checks are the blocking producer's
(``producer.transactions.TransactionManager``, whose module docstring has the states, the versions and
transactions v2): each operation there is a generator of steps (``producer.txn_steps``: ``Request``,
``Versions``, ``KnowBroker``, ``Sleep``) and this class only performs those steps on the event loop - ``AsyncKafkaClient.send_request_versioned``
on the coordinator's shared connection, ``asyncio.sleep`` for backoffs - so no thread and no second client are
involved, and the coordinator moves (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...), CONCURRENT_TRANSACTIONS
retries, fencing and deadlines behave exactly as in the blocking producer.

Coroutines: ``init_async``, ``add_partitions_async`` (the sender task, before a partition's first batch
without transactions v2), ``send_offsets_async``, ``end_async``. Synchronous and without I/O (called on the
loop): ``begin`` (``begin_transaction`` is not a coroutine) decides transactions v2 from the coordinator's
connection when it is open and otherwise keeps the decision ``init_async`` or the last ``end_async`` made
(as Kafka's client, which reads it from the latest ApiVersions); ``add_partitions`` with transactions v2
(``SenderCore._produce_request``: only remembers the partitions). A step that would need I/O in those raises
``KafkaClientError`` into the operation, which handles it as a lost connection.

Cancellation: a cancelled coroutine gets ``CancelledError`` thrown into the operation where it waited; the
operation's own handlers run (``init_async`` goes back to UNINITIALIZED) and the error propagates.

Concurrency: one event loop; the state is changed only between steps, by the coroutine driving them. The
inherited ``lock`` is never held across a step, so it never blocks the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast

from spark_kafkalog.client.aio.client import AsyncKafkaClient
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.producer.sender_core import SenderCore
from spark_kafkalog.client.producer.transactions import TransactionManager
from spark_kafkalog.client.producer.txn_steps import KnowBroker, Request, Sleep, Steps, Versions, run_steps_async
from spark_kafkalog.client.types import TopicPartition

__all__ = ["AsyncTransactionManager", "new_async_transactions"]

T = TypeVar("T")


class AsyncTransactionManager(TransactionManager):
    """One transactional id's state on ``client`` (the producer's ``AsyncKafkaClient``); see the module
    docstring. ``idempotence`` is the sender's ``IdempotenceState``."""

    def __init__(self, client: AsyncKafkaClient, transactional_id: str, timeout_ms: int, idempotence: Any) -> None:
        # the shared steps read only ``config`` and ``name_principal`` of the client, which both clients have
        super().__init__(cast(Any, client), transactional_id, timeout_ms, idempotence)
        self.aio_client = client

    # drivers -------------------------------------------------------------------------------------
    async def drive_async(self, steps: Steps[T]) -> T:
        """Run an operation's steps to its result on the event loop (``txn_steps.run_steps_async``)."""
        return await run_steps_async(steps, self.perform_async)

    async def perform_async(self, step: Any) -> Any:
        """One step on the ``AsyncKafkaClient``."""
        client = self.aio_client
        if isinstance(step, Request):
            return await client.send_request_versioned(
                step.node, step.api_key, step.body, min_version=step.min_version, max_version=step.max_version
            )
        if isinstance(step, Sleep):
            await asyncio.sleep(step.seconds)
        elif isinstance(step, Versions):
            return (await client.connection(step.node)).versions
        elif isinstance(step, KnowBroker):
            if client.metadata.broker(step.node) is None:
                await client.refresh_metadata_once([])
        else:
            raise TypeError(f"not a transaction step: {step!r}")
        return None

    def perform(self, step: Any) -> Any:
        """The synchronous steps ``begin`` and a transactions-v2 ``add_partitions`` may take: the features of
        an open connection; anything needing I/O raises ``KafkaClientError`` (see the module docstring)."""
        if isinstance(step, Versions):
            conn = self.aio_client.pool.get(step.node)
            if conn is not None:
                return conn.versions
        raise KafkaClientError(
            f"{type(step).__name__} needs the event loop (transactional id {self.transactional_id!r})"
        )

    # operations ----------------------------------------------------------------------------------
    async def init_async(self, timeout_s: float) -> None:
        await self.drive_async(self.init_steps(timeout_s))

    async def add_partitions_async(self, partitions: Iterable[TopicPartition], timeout_s: float) -> None:
        await self.drive_async(self.add_partitions_steps(partitions, timeout_s))

    async def send_offsets_async(
        self, offsets: Mapping[TopicPartition, Any], group_id: str, group_metadata: Any, timeout_s: float
    ) -> None:
        await self.drive_async(self.send_offsets_steps(offsets, group_id, group_metadata, timeout_s))

    async def end_async(self, commit: bool, timeout_s: float) -> None:
        await self.drive_async(self.end_steps(commit, timeout_s))


def new_async_transactions(
    cfg: ClientConfig, sender: SenderCore, client: AsyncKafkaClient
) -> AsyncTransactionManager | None:
    """The ``AsyncTransactionManager`` of ``transactional.id`` (None without one) on ``client``, wired to
    ``sender`` as ``producer_setup.new_transactions`` wires the blocking one (its idempotence state marks
    batches transactional)."""
    if cfg.transactional_id is None:
        return None
    idem = sender.idempotence
    assert idem is not None  # a transactional.id implies idempotence (ClientConfig)
    idem.transactional = True
    manager = AsyncTransactionManager(client, cfg.transactional_id, cfg.transaction_timeout_ms, idem)
    sender.transactions = manager
    return manager
