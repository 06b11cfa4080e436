"""The persister (KIP-932): how a share-partition leader and the share group coordinator store and read share-
partition state, wherever its share coordinator is.

``Persister`` is the interface (the five operations of ``ShareCoordinator``, same arguments and answers).
``CoordinatorPersister`` is the broker's: per call it finds the key's coordinator (the in-process FindCoordinator
key type 2 of ``ShareCoordinator.find_coordinator``: the leader of the key's ``__share_group_state`` partition,
the topic created when missing); when that is this broker it calls the local ``ShareCoordinator``, else it
sends the API (InitializeShareGroupState 83, ReadShareGroupState 84, WriteShareGroupState 85,
DeleteShareGroupState 86, ReadShareGroupStateSummary 87; one group, topic and partition per request) to the
coordinator over the inter-broker listener (``InterBrokerClient``; one connection per broker, re-opened after a
failure). NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT and a
lost connection are retried after ``backoff_s`` (doubling up to 1 s) until ``timeout_s`` has passed; then the
last error is answered (a lost connection as COORDINATOR_NOT_AVAILABLE). Other errors are answered at once.
Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from broker.security.inter_broker import InterBrokerClient, InterBrokerConnections
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from .records import coordinator_key
from .state_batches import PersistedState, StateBatch

if TYPE_CHECKING:
    from broker.metadata.cache import MetadataCache

    from .share_coordinator import ShareCoordinator

log = logging.getLogger("kafkalog.share.persister")

RETRIABLE = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.REQUEST_TIMED_OUT,
    }
)
REQUEST_TIMEOUT_S = 30.0
T = TypeVar("T", bound=tuple)


class Persister(Protocol):
    async def initialize(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> tuple[ErrorCode, str | None]: ...

    async def read(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> tuple[ErrorCode, str | None, PersistedState | None]: ...

    async def write(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        state_batches: Sequence[StateBatch],
    ) -> tuple[ErrorCode, str | None]: ...

    async def delete(self, group_id: str, topic_id: uuid.UUID, partition: int) -> tuple[ErrorCode, str | None]: ...

    async def read_summary(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> tuple[ErrorCode, str | None, PersistedState | None]: ...


class CoordinatorPersister:
    """The ``Persister`` of a broker (see the module docstring)."""

    def __init__(
        self,
        broker_id: int,
        coordinator: ShareCoordinator,
        metadata: MetadataCache,
        inter_broker: InterBrokerClient | None = None,
        *,
        timeout_s: float = 15.0,
        backoff_s: float = 0.05,
    ) -> None:
        self.broker_id = broker_id
        self.coordinator = coordinator
        self.metadata = metadata
        self.inter_broker = inter_broker if inter_broker is not None else InterBrokerClient("PLAINTEXT")
        self.timeout_s = timeout_s
        self.backoff_s = backoff_s
        self._peers = InterBrokerConnections(
            lambda: self.inter_broker,
            lambda node: self.metadata.brokers.get(node),
            f"broker-{broker_id}-share-persister",
        )

    async def close(self) -> None:
        await self._peers.close()

    # -- the operations -------------------------------------------------------------------------------------------
    async def initialize(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> tuple[ErrorCode, str | None]:
        Req = API_BY_KEY[ApiKey.INITIALIZE_SHARE_GROUP_STATE].Request
        T_, P_ = Req.InitializeStateData, Req.InitializeStateData.PartitionData
        request = Req(
            group_id=group_id,
            topics=[
                T_(
                    topic_id=topic_id,
                    partitions=[P_(partition=partition, state_epoch=state_epoch, start_offset=start_offset)],
                )
            ],
        )

        def local() -> Awaitable[tuple[ErrorCode, str | None]]:
            return self.coordinator.initialize(group_id, topic_id, partition, state_epoch, start_offset)

        def answer(p: Any) -> tuple[ErrorCode, str | None]:
            return ErrorCode(p.error_code), p.error_message

        return await self._call(
            group_id, topic_id, partition, local, ApiKey.INITIALIZE_SHARE_GROUP_STATE, request, answer
        )

    async def read(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> tuple[ErrorCode, str | None, PersistedState | None]:
        Req = API_BY_KEY[ApiKey.READ_SHARE_GROUP_STATE].Request
        request = Req(
            group_id=group_id,
            topics=[
                Req.ReadStateData(
                    topic_id=topic_id,
                    partitions=[Req.ReadStateData.PartitionData(partition=partition, leader_epoch=leader_epoch)],
                )
            ],
        )

        def local() -> Awaitable[tuple[ErrorCode, str | None, PersistedState | None]]:
            return self.coordinator.read(group_id, topic_id, partition, leader_epoch)

        def answer(p: Any) -> tuple[ErrorCode, str | None, PersistedState | None]:
            if p.error_code != ErrorCode.NONE:
                return ErrorCode(p.error_code), p.error_message, None
            batches = tuple(
                StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in p.state_batches
            )
            return ErrorCode.NONE, None, PersistedState(p.state_epoch, p.start_offset, batches, leader_epoch)

        return await self._call(group_id, topic_id, partition, local, ApiKey.READ_SHARE_GROUP_STATE, request, answer)

    async def write(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        state_batches: Sequence[StateBatch],
        delivery_complete_count: int = -1,
    ) -> tuple[ErrorCode, str | None]:
        Req = API_BY_KEY[ApiKey.WRITE_SHARE_GROUP_STATE].Request
        P_ = Req.WriteStateData.PartitionData
        request = Req(
            group_id=group_id,
            topics=[
                Req.WriteStateData(
                    topic_id=topic_id,
                    partitions=[
                        P_(
                            partition=partition,
                            state_epoch=state_epoch,
                            leader_epoch=leader_epoch,
                            start_offset=start_offset,
                            delivery_complete_count=delivery_complete_count,
                            state_batches=[
                                P_.StateBatch(
                                    first_offset=b.first_offset,
                                    last_offset=b.last_offset,
                                    delivery_state=b.delivery_state,
                                    delivery_count=b.delivery_count,
                                )
                                for b in state_batches
                            ],
                        )
                    ],
                )
            ],
        )

        def local() -> Awaitable[tuple[ErrorCode, str | None]]:
            return self.coordinator.write(
                group_id,
                topic_id,
                partition,
                state_epoch,
                leader_epoch,
                start_offset,
                state_batches,
                delivery_complete_count,
            )

        def answer(p: Any) -> tuple[ErrorCode, str | None]:
            return ErrorCode(p.error_code), p.error_message

        return await self._call(group_id, topic_id, partition, local, ApiKey.WRITE_SHARE_GROUP_STATE, request, answer)

    async def delete(self, group_id: str, topic_id: uuid.UUID, partition: int) -> tuple[ErrorCode, str | None]:
        Req = API_BY_KEY[ApiKey.DELETE_SHARE_GROUP_STATE].Request
        request = Req(
            group_id=group_id,
            topics=[
                Req.DeleteStateData(
                    topic_id=topic_id, partitions=[Req.DeleteStateData.PartitionData(partition=partition)]
                )
            ],
        )

        def local() -> Awaitable[tuple[ErrorCode, str | None]]:
            return self.coordinator.delete(group_id, topic_id, partition)

        def answer(p: Any) -> tuple[ErrorCode, str | None]:
            return ErrorCode(p.error_code), p.error_message

        return await self._call(group_id, topic_id, partition, local, ApiKey.DELETE_SHARE_GROUP_STATE, request, answer)

    async def read_summary(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> tuple[ErrorCode, str | None, PersistedState | None]:
        Req = API_BY_KEY[ApiKey.READ_SHARE_GROUP_STATE_SUMMARY].Request
        D_ = Req.ReadStateSummaryData
        request = Req(
            group_id=group_id,
            topics=[
                D_(topic_id=topic_id, partitions=[D_.PartitionData(partition=partition, leader_epoch=leader_epoch)])
            ],
        )

        def local() -> Awaitable[tuple[ErrorCode, str | None, PersistedState | None]]:
            return self.coordinator.read_summary(group_id, topic_id, partition, leader_epoch)

        def answer(p: Any) -> tuple[ErrorCode, str | None, PersistedState | None]:
            if p.error_code != ErrorCode.NONE:
                return ErrorCode(p.error_code), p.error_message, None
            return ErrorCode.NONE, None, PersistedState(p.state_epoch, p.start_offset, (), p.leader_epoch)

        return await self._call(
            group_id, topic_id, partition, local, ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, request, answer
        )

    # -- routing and retries --------------------------------------------------------------------------------------
    async def _call(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        local: Callable[[], Awaitable[T]],
        api_key: ApiKey,
        request: Any,
        answer: Callable[[Any], T],
    ) -> T:
        """Route one operation to the key's coordinator, retrying the coordinator errors (module docstring)."""
        key = coordinator_key(group_id, topic_id, partition)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        backoff = self.backoff_s
        while True:
            code, node = await self.coordinator.find_coordinator(key)
            result: T | None = None
            if code == ErrorCode.NONE and node == self.broker_id:
                result = await local()
                code = result[0]
            elif code == ErrorCode.NONE:
                result, code = await self._remote(node, api_key, request, answer)
            if code not in RETRIABLE:
                if result is not None:
                    return result
                return self._failure(answer, code, f"no share coordinator for {key!r} ({code.name})")
            remaining = deadline - loop.time()
            if remaining <= 0:
                if result is not None:
                    return result
                return self._failure(answer, code, f"the share coordinator of {key!r} is not available ({code.name})")
            log.debug("share state %s of %r: %s, retrying", api_key.name, key, code.name)
            await asyncio.sleep(min(backoff, remaining))
            backoff = min(backoff * 2, 1.0)

    @staticmethod
    def _failure(answer: Callable[[Any], T], code: ErrorCode, message: str) -> T:
        class _P:
            error_code = code
            error_message = message

        return answer(_P())

    async def _remote(
        self, node: int, api_key: ApiKey, request: Any, answer: Callable[[Any], T]
    ) -> tuple[T | None, ErrorCode]:
        """(the answer, its error) of ``request`` sent to broker ``node``; (None, COORDINATOR_NOT_AVAILABLE) when
        the connection failed."""
        try:
            conn = await self._peers.get(node)
            response = await conn.request(api_key, request, timeout=REQUEST_TIMEOUT_S)
        except (KafkaClientError, OSError, TimeoutError) as e:
            log.info("share state %s to broker %d failed (%s); retrying", api_key.name, node, e)
            await self._peers.drop(node)
            return None, ErrorCode.COORDINATOR_NOT_AVAILABLE
        try:
            (topic,) = response.results
            (p,) = topic.partitions
        except ValueError:
            return None, ErrorCode.UNKNOWN_SERVER_ERROR
        result = answer(p)
        return result, result[0]
