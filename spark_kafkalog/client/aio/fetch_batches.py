"""``AsyncFetchMixin``: ``AsyncKafkaClient.fetch_batches``, the Fetch of one partition range as an async iterator
(``FetchBatches``) with retries and one request ahead, as the blocking ``ClientFetchMixin`` (``core.client_fetch``)
does: the same ``FetchRange`` builds each request and walks each answer (``fetcher``), the same ``fetch_error`` /
``out_of_range_error`` word the failures. Versions as there: v4+ under read_committed, v13+ by topic id when the
metadata knows it. With ``client.rack`` (KIP-392) a partition may be fetched from its preferred read replica.

Concurrency: coroutines of the client's event loop; the request sent ahead is a task cancelled when the iteration
stops. Mixed into ``AsyncKafkaClient`` only: it uses the client's config, metadata, connections and retry plans.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from spark_kafkalog.client.core.client_base import ClientBase
from spark_kafkalog.client.core.client_fetch import FetchRange, checked_range, fetch_error, out_of_range_error
from spark_kafkalog.client.core.fetcher import partition_data
from spark_kafkalog.client.errors import KafkaClientError, KafkaConnectionError, KafkaTimeoutError
from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
from spark_kafkalog.client.network.retry import gave_up
from spark_kafkalog.client.types import FetchedBatch, OffsetSpec, TopicPartition
from spark_kafkalog.protocol import ApiKey

from .retrying import sleep_or_give_up

__all__ = ["AsyncFetchMixin", "FetchBatches"]

_FETCH = int(ApiKey.FETCH)


class AsyncFetchMixin(ClientBase):
    """The Fetch calls of ``AsyncKafkaClient`` (see the module docstring)."""

    connection: Callable[[int], Awaitable[AsyncKafkaConnection]]
    drop: Callable[..., Awaitable[None]]
    leader_and_epoch: Callable[[TopicPartition], Awaitable[tuple[int, int]]]
    list_offsets: Callable[..., Awaitable[dict[TopicPartition, int]]]
    topic_id: Callable[[str], uuid.UUID | None]

    def fetch_batches(
        self,
        tp: TopicPartition,
        start: int,
        end: int | None = None,
        *,
        max_bytes: int | None = None,
        isolation_level: int | None = None,
        max_wait_ms: int | None = None,
        timeout_ms: int | None = None,
    ) -> FetchBatches:
        """Every record batch overlapping ``[start, end)`` of one partition, in offset order, as an async
        iterator (``async for fetched in client.fetch_batches(tp, 0, end)``); as ``KafkaClient.fetch_batches``:
        ``end=None`` reads up to the high watermark (last stable offset under read_committed) of the first
        answer; batches may hold records outside the range (filter by offset); control and aborted batches
        are not yielded; no progress for ``timeout_ms`` raises ``KafkaTimeoutError``; an offset outside the
        log raises ``OffsetOutOfRangeError``; the next fetch is sent before the current batches are yielded.
        When the iteration ends, ``.position`` is the offset after the last batch walked (where the next fetch
        starts)."""
        tp = checked_range(tp, start, end)
        fetch = FetchRange(self.config, tp, start, end, max_bytes, isolation_level, max_wait_ms, timeout_ms)
        return FetchBatches(self, fetch)

    async def _send_fetch(self, fetch: FetchRange) -> tuple[AsyncKafkaConnection, asyncio.Task[Any]]:
        """Send the Fetch for ``fetch``'s position to the leader (or its preferred read replica); returns the
        connection and a task awaiting the answer."""
        tp = fetch.tp
        leader, epoch = await self.leader_and_epoch(tp)
        node = self.read_replicas.node_for(tp, leader, lambda n: self.metadata.broker(n) is not None)
        try:
            conn = await self.connection(node)
        except KafkaClientError:
            self.read_replicas.clear(tp)
            raise
        body, bounds = fetch.request(epoch, self.topic_id(tp.topic))
        self.stats["requests"] += 1
        task = asyncio.get_running_loop().create_task(
            conn.request(_FETCH, body, timeout=fetch.response_timeout, **bounds), name=f"kafka-fetch-{tp}"
        )
        return conn, task

    async def _fetch_error(self, tp: TopicPartition, position: int, code: int, peer: str) -> KafkaClientError:
        error = fetch_error(tp, position, code, peer, self.read_replicas.clear(tp))
        if error is None:  # OFFSET_OUT_OF_RANGE from the leader: name the log's bounds
            bounds = await self.list_offsets({tp: OffsetSpec.EARLIEST})
            latest = await self.list_offsets({tp: OffsetSpec.LATEST}, isolation_level=0)
            return out_of_range_error(tp, position, peer, bounds[tp], latest[tp])
        self.on_partition_error(tp, code)
        self.name_principal(error)
        return error

    async def _fetch_iter(self, fetch: FetchRange) -> AsyncGenerator[FetchedBatch, None]:
        tp = fetch.tp
        if fetch.finished:
            return
        plan = self.retry_plan()
        pending: tuple[AsyncKafkaConnection, asyncio.Task[Any], int] | None = None  # (conn, answer, its offset)
        try:
            while True:
                try:
                    if pending is not None and pending[2] == fetch.position and not pending[0].closed:
                        conn, answer, _ = pending
                    else:
                        if pending is not None:
                            pending[1].cancel()
                        conn, answer = await self._send_fetch(fetch)
                    pending = None
                    try:
                        response = await answer
                    except (KafkaConnectionError, KafkaTimeoutError) as e:
                        await self.drop(conn, e)
                        self.read_replicas.clear(tp)
                        raise
                    data = partition_data(response, tp, self.topic_id(tp.topic))
                    if data.error_code:
                        raise await self._fetch_error(tp, fetch.position, data.error_code, conn.peer)
                    if data.preferred_read_replica >= 0:  # KIP-392: no data; the next fetch goes to that broker
                        self.read_replicas.update(tp, data.preferred_read_replica)
                except KafkaClientError as e:
                    if not e.retriable:
                        raise
                    self.stats["retries"] += 1
                    if not await sleep_or_give_up(plan):
                        e.add_context(gave_up(f"Fetch of {tp} at offset {fetch.position}", plan))
                        raise
                    continue
                plan = self.retry_plan()
                step = fetch.advance(data)
                self.stats["fetch_requests"] += 1
                self.stats["bytes_fetched"] += step.bytes
                if step.idle:
                    await asyncio.sleep(self.config.retry_backoff_ms / 1000.0)  # data should be there: no spin
                if step.fetch_ahead:
                    try:
                        pending = (*(await self._send_fetch(fetch)), fetch.position)
                    except KafkaClientError as e:
                        if not e.retriable:
                            raise
                        pending = None
                self.stats["batches_fetched"] += len(step.batches)
                for batch in step.batches:
                    yield batch
                if step.done:
                    return
        finally:
            if pending is not None:
                pending[1].cancel()


class FetchBatches:
    """The async iterator ``AsyncKafkaClient.fetch_batches`` returns; ``position`` is the offset after the last
    batch walked (the range's start until the first answer), where the next fetch starts."""

    def __init__(self, client: AsyncFetchMixin, fetch: FetchRange) -> None:
        self._fetch = fetch
        self._iter = client._fetch_iter(fetch)

    @property
    def position(self) -> int:
        return self._fetch.position

    def __aiter__(self) -> FetchBatches:
        return self

    async def __anext__(self) -> FetchedBatch:
        return await self._iter.__anext__()

    async def aclose(self) -> None:
        """Stop early: cancel the fetch sent ahead."""
        await self._iter.aclose()
