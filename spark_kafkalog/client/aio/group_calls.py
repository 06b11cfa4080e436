"""``AsyncGroupCalls``: calls to a group's coordinator on an ``AsyncKafkaClient``, for ``AIOConsumer`` (its offset
calls) and ``AIOAdminClient`` (every group call, through ``group_call``).

The asyncio side of what ``GroupAdmin`` does for the blocking ``Consumer`` and ``AdminClient``: FindCoordinator
(cached per group; one request per attempt, its error worded by ``client_group_error``), OffsetCommit (v0-9, topics by name; as a member with its
generation or KIP-848 epoch, or from outside the group) and OffsetFetch (v1-9; v9 as a KIP-848 member). Requests
and answers are ``group_requests``' pure builders and parsers, so both consumers send and read the same bytes.
ZooKeeper offset storage (``offsets.storage=zookeeper``: OffsetCommit/OffsetFetch v0 to any broker) is served too.

Coordinator moves (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS) and lost connections
forget the cached coordinator and are retried within ``default.api.timeout.ms`` (``call_with_retries``).

Concurrency: coroutines of the client's event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from spark_kafkalog.client.admin.group_requests import (
    OFFSETS_BY_NAME_MAX,
    OffsetAndMetadata,
    client_group_error,
    committed_offsets,
    offset_commit_request,
    offset_fetch_answer,
    offset_fetch_request,
    raise_partition_errors,
)
from spark_kafkalog.client.aio.client import AsyncKafkaClient
from spark_kafkalog.client.core.coordinator import GROUP_KEY_TYPE
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ApiKey, ErrorCode

__all__ = ["AsyncGroupCalls"]

T = TypeVar("T")


class AsyncGroupCalls:
    """Calls to the coordinators of groups on ``client``; see the module docstring."""

    def __init__(self, client: AsyncKafkaClient) -> None:
        self.client = client
        self._coordinators: dict[str, int] = {}

    async def coordinator(self, group_id: str) -> int:
        """The broker id coordinating ``group_id`` (one FindCoordinator, cached until forgotten); a failed lookup
        raises ``error``'s exception (retriable while the coordinator loads), for ``group_call``'s retries."""
        cached = self._coordinators.get(group_id)
        if cached is not None:
            return cached
        found = await self.client.find_coordinator_once(group_id, GROUP_KEY_TYPE)
        if found.error_code != ErrorCode.NONE:
            raise self.error(found.error_code, "FindCoordinator", group_id, found.error_message)
        self._coordinators[group_id] = found.node_id
        return found.node_id

    def cached_coordinator(self, group_id: str) -> int:
        """The coordinator last found for ``group_id``, or -1."""
        return self._coordinators.get(group_id, -1)

    def forget_coordinator(self, group_id: str) -> None:
        """Drop the cached coordinator of ``group_id`` (it moved or its connection broke)."""
        self._coordinators.pop(group_id, None)

    def error(
        self, code: int, what: str, group_id: str, detail: str | None = None, tp: tuple[str, int] | None = None
    ) -> KafkaClientError:
        """``client_group_error`` for this client: names its principal, forgets a moved coordinator."""
        return client_group_error(self.client, self.forget_coordinator, code, what, group_id, detail, tp)

    async def group_call(
        self,
        group_id: str,
        api_key: int,
        build: Callable[[int], Any],
        check: Callable[[Any, int], T],
        what: str,
        *,
        max_version: int | None = None,
    ) -> T:
        """Send ``build(version)`` to the group's coordinator (at most ``max_version``); ``check(response,
        version)`` reads the answer. Coordinator moves and lost connections forget the coordinator and are
        retried (``call_with_retries``)."""

        async def attempt() -> T:
            node = await self.coordinator(group_id)
            try:
                version, response = await self.client.send_request_versioned(
                    node, api_key, build, max_version=max_version
                )
            except KafkaClientError:
                self.forget_coordinator(group_id)
                raise
            return check(response, version)

        return await self.client.call_with_retries(attempt, what=what)

    async def commit_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        *,
        generation: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
        storage: str = "kafka",
    ) -> None:
        """OffsetCommit (as ``GroupAdmin.commit_offsets``); raises on the first partition that failed."""
        if not offsets:
            return
        body = offset_commit_request(
            group_id, offsets, generation=generation, member_id=member_id, group_instance_id=group_instance_id
        )

        def check(response: Any, version: int) -> None:
            raise_partition_errors(group_id, "OffsetCommit", response.topics, self.error)

        if storage == "zookeeper":

            async def v0() -> Any:
                return await self.client.send_request_versioned(None, ApiKey.OFFSET_COMMIT, body, max_version=0)

            _, response = await self.client.call_with_retries(v0, what="OffsetCommit")
            check(response, 0)
            return
        await self.group_call(
            group_id, ApiKey.OFFSET_COMMIT, lambda v: body, check, "OffsetCommit", max_version=OFFSETS_BY_NAME_MAX
        )

    async def list_group_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition],
        *,
        storage: str = "kafka",
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Committed offsets of ``partitions`` (as ``GroupAdmin.list_group_offsets``); partitions without a
        commit are left out."""
        wanted = sorted(set(partitions))
        if storage == "zookeeper":

            async def v0() -> Any:
                build = lambda v: offset_fetch_request(0, group_id, wanted)  # noqa: E731
                return await self.client.send_request_versioned(None, ApiKey.OFFSET_FETCH, build, max_version=0)

            _, response = await self.client.call_with_retries(v0, what="OffsetFetch")
            return committed_offsets(group_id, response.topics, self.error, with_epoch=False, unknown_is_absent=True)

        def build(version: int) -> Any:
            return offset_fetch_request(version, group_id, wanted, member_id=member_id, member_epoch=member_epoch)

        def check(response: Any, version: int) -> dict[TopicPartition, OffsetAndMetadata]:
            return offset_fetch_answer(response, version, group_id, self.error)

        return await self.group_call(
            group_id, ApiKey.OFFSET_FETCH, build, check, "OffsetFetch", max_version=OFFSETS_BY_NAME_MAX
        )
