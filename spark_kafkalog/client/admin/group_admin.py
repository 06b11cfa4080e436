"""Consumer-group administration over the Kafka protocol: find a group's coordinator, list, describe and
delete groups, read, alter and delete committed offsets, and compute lag.

Every group call goes to the group's coordinator, found with FindCoordinator (key type 0) and cached
per group (v4+ as a batch of one key); COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR and
COORDINATOR_LOAD_IN_PROGRESS forget the cached coordinator and are retried within
``default.api.timeout.ms`` (as Kafka's AdminClient does). ListGroups goes to every broker (each lists the
groups it coordinates). Offsets are ``OffsetAndMetadata``; a partition with no committed offset is left out
of ``list_group_offsets``.

Offsets live in one of two stores (``storage``): ``"kafka"`` (the default) is the coordinator's
``__consumer_offsets`` (OffsetCommit/OffsetFetch v1+; OffsetFetch v8+ in its one-group-per-entry shape);
``"zookeeper"`` is Kafka 0.8's ``/consumers/<group>/offsets/<topic>/<partition>``, reached with
OffsetCommit/OffsetFetch v0 sent to any broker (a broker that does not serve v0 raises
``NoCommonVersionError``). The stores are independent: what one holds the other does not see.

Requests, answers, errors and result types are ``group_requests``' pure functions (shared with the asyncio
client; the result types are importable from here too). Used by ``AdminClient`` (which exposes these calls) and
the CLI. Thread-safe like ``KafkaClient``: the
coordinator cache has its own lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from spark_kafkalog.client.admin.group_requests import (
    OFFSETS_BY_NAME_MAX,
    GroupDescription,
    GroupListing,
    MemberDescription,
    OffsetAndMetadata,
    PartitionLag,
    client_group_error,
    committed_offsets,
    delete_groups_answer,
    delete_groups_request,
    describe_groups_answer,
    describe_groups_request,
    lag_rows,
    list_groups_answer,
    list_groups_request,
    offset_commit_request,
    offset_delete_answer,
    offset_delete_request,
    offset_fetch_answer,
    offset_fetch_request,
    offset_fetch_topics,
    raise_partition_errors,
    topic_partitions,
)
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.core.coordinator import GROUP_KEY_TYPE, find_coordinator_request, parse_find_coordinator
from spark_kafkalog.client.errors import KafkaClientError, NoCommonVersionError
from spark_kafkalog.client.types import OffsetSpec, TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

__all__ = [
    "GroupAdmin",
    "GroupDescription",
    "GroupListing",
    "MemberDescription",
    "OffsetAndMetadata",
    "PartitionLag",
]

_STORAGES = ("kafka", "zookeeper")


class GroupAdmin:
    """Group calls on a ``KafkaClient``; see the module docstring."""

    def __init__(self, client: KafkaClient) -> None:
        self.client = client
        self._coordinators: dict[str, int] = {}
        self._lock = threading.Lock()

    # coordinator -------------------------------------------------------------------------------
    def coordinator(self, group_id: str) -> int:
        """The broker id coordinating ``group_id`` (FindCoordinator, cached)."""
        with self._lock:
            cached = self._coordinators.get(group_id)
        if cached is not None:
            return cached
        version, response = self.client.send_request(
            ApiKey.FIND_COORDINATOR, lambda v: find_coordinator_request(v, group_id, GROUP_KEY_TYPE)
        )
        found = parse_find_coordinator(version, response, group_id)
        if found.error_code != ErrorCode.NONE:
            raise self._error(found.error_code, "FindCoordinator", group_id, found.error_message)
        if self.client.broker_address(found.node_id) is None:
            self.client.refresh_metadata_once([])
        with self._lock:
            self._coordinators[group_id] = found.node_id
        return found.node_id

    def forget_coordinator(self, group_id: str) -> None:
        """Drop the cached coordinator of ``group_id`` (it moved or its connection broke)."""
        with self._lock:
            self._coordinators.pop(group_id, None)

    def _error(
        self, code: int, what: str, group_id: str, detail: str | None = None, tp: tuple[str, int] | None = None
    ) -> KafkaClientError:
        """``tp``: the partition the error is about (its topic is what TOPIC_AUTHORIZATION_FAILED names)."""
        return client_group_error(self.client, self.forget_coordinator, code, what, group_id, detail, tp)

    def _group_call(
        self, group_id: str, api_key: int, build: Any, check: Any, what: str, *, max_version: int | None = None
    ) -> Any:
        """Send ``build(version)`` (at most ``max_version``) to the group's coordinator; ``check(response,
        version)`` raises on errors. Coordinator moves and lost connections are retried."""

        def attempt() -> Any:
            node = self.coordinator(group_id)
            try:
                version, response = self.client.send_request(api_key, build, node_id=node, max_version=max_version)
            except KafkaClientError:
                self.forget_coordinator(group_id)
                raise
            return check(response, version)

        return self.client.call_with_retries(attempt, what=what)

    # groups ------------------------------------------------------------------------------------
    def list_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]:
        """Every group of the cluster (ListGroups to each broker); ``states`` filters (ListGroups v4+).

        A broker that cannot be reached is retried until it answers or leaves the cluster's metadata (a dead
        broker's coordinated groups move to the new leaders of their ``__consumer_offsets`` partitions, which
        list them), so one dead broker delays the listing by its session timeout, not by the whole deadline."""
        wanted = None if states is None else {s.lower() for s in states}
        self.client.refresh_metadata([])
        found: dict[str, GroupListing] = {}
        for node in sorted(self.client.metadata.brokers):  # each broker lists the groups it coordinates
            tries = [0]

            def attempt(node: int = node, tries: list[int] = tries) -> Any:
                tries[0] += 1
                if tries[0] > 1:
                    self.client.refresh_metadata_once([])
                    if node not in self.client.metadata.brokers:
                        return None
                return self.client.send_request(ApiKey.LIST_GROUPS, lambda v: list_groups_request(wanted), node_id=node)

            answer = self.client.call_with_retries(attempt, what="ListGroups")
            if answer is None:
                continue  # the broker left the cluster
            version, response = answer
            found.update((g.group_id, g) for g in list_groups_answer(response, version, wanted, node))
        return sorted(found.values(), key=lambda g: g.group_id)

    def describe_groups(self, group_ids: Iterable[str]) -> dict[str, GroupDescription]:
        out = {}
        for group_id in group_ids:

            def check(response: Any, version: int, group_id: str = group_id) -> GroupDescription:
                return describe_groups_answer(response, version, group_id, self.coordinator(group_id), self._error)

            out[group_id] = self._group_call(
                group_id,
                ApiKey.DESCRIBE_GROUPS,
                lambda v, group_id=group_id: describe_groups_request(group_id),
                check,
                "DescribeGroups",
            )
        return out

    def delete_groups(self, group_ids: Iterable[str]) -> None:
        """Delete empty groups (and their offsets); raises naming the first group that failed
        (GROUP_NOT_EMPTY for a group with members, GROUP_ID_NOT_FOUND for an unknown one)."""
        for group_id in group_ids:

            def check(response: Any, version: int, group_id: str = group_id) -> None:
                delete_groups_answer(response, group_id, self._error)

            self._group_call(
                group_id,
                ApiKey.DELETE_GROUPS,
                lambda v, group_id=group_id: delete_groups_request(group_id),
                check,
                "DeleteGroups",
            )

    # offsets -----------------------------------------------------------------------------------
    def list_group_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition] | None = None,
        *,
        storage: str = "kafka",
        require_stable: bool = False,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Committed offsets of ``group_id`` (all its partitions when ``partitions`` is None) in ``storage``
        (see the module docstring; ``"zookeeper"`` needs ``partitions``, as OffsetFetch v0 cannot ask for all).
        ``require_stable`` (OffsetFetch v7+): while a transaction holds uncommitted offsets of a partition the
        broker answers UNSTABLE_OFFSET_COMMIT, retried until the transaction ended. ``member_id`` and
        ``member_epoch`` (OffsetFetch v9): a KIP-848 member asking, whose epoch the coordinator checks
        (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID); the defaults ask from outside the group."""
        wanted = None if partitions is None else sorted(set(partitions))
        if _check_storage(storage) == "zookeeper":
            if wanted is None:
                raise KafkaClientError("ZooKeeper offset storage cannot list all of a group's partitions: name them")
            return self._list_zookeeper_offsets(group_id, wanted)

        def build(version: int) -> Any:
            return offset_fetch_request(
                version, group_id, wanted, member_id=member_id, member_epoch=member_epoch, require_stable=require_stable
            )

        def check(response: Any, version: int) -> dict[TopicPartition, OffsetAndMetadata]:
            return offset_fetch_answer(response, version, group_id, self._error)

        # v2+ can ask for all of a group's partitions (a null topic list)
        if wanted is None:
            return self._group_call(
                group_id,
                ApiKey.OFFSET_FETCH,
                lambda v: build(v) if v >= 2 else _too_old("OffsetFetch for all partitions", 2),
                check,
                "OffsetFetch",
                max_version=OFFSETS_BY_NAME_MAX,
            )
        return self._group_call(
            group_id, ApiKey.OFFSET_FETCH, build, check, "OffsetFetch", max_version=OFFSETS_BY_NAME_MAX
        )

    def _committed(
        self, group_id: str, topics: Any, *, with_epoch: bool, unknown_is_absent: bool = False
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        return committed_offsets(
            group_id, topics, self._error, with_epoch=with_epoch, unknown_is_absent=unknown_is_absent
        )

    def _list_zookeeper_offsets(
        self, group_id: str, wanted: list[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        R = API_BY_KEY[ApiKey.OFFSET_FETCH].Request
        body = R(group_id=group_id, topics=offset_fetch_topics(wanted, R.OffsetFetchRequestTopic))
        response = self._send_v0(ApiKey.OFFSET_FETCH, body, "OffsetFetch")
        return self._committed(group_id, response.topics, with_epoch=False, unknown_is_absent=True)

    def _send_v0(self, api_key: int, body: Any, what: str) -> Any:
        """Send ``body`` at v0 (the ZooKeeper offset storage) to any broker, retrying lost connections."""

        def attempt() -> Any:
            try:
                return self.client.send_request(api_key, body, min_version=0, max_version=0)[1]
            except NoCommonVersionError as e:
                raise NoCommonVersionError(
                    f"ZooKeeper offset storage needs {what} v0, which broker {e.broker} does not serve "
                    f"(Kafka 4.0+ removed it); use storage='kafka' (offsets.storage=kafka)",
                    broker=e.broker,
                ) from e

        return self.client.call_with_retries(attempt, what=what)

    def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int | OffsetAndMetadata]) -> None:
        """Commit ``offsets`` for a group with no active members (as ``kafka-consumer-groups --reset-offsets
        --execute``; an active group answers UNKNOWN_MEMBER_ID or REBALANCE_IN_PROGRESS and nothing changes)."""
        self.commit_offsets(group_id, offsets)

    def commit_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        *,
        generation: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
        storage: str = "kafka",
    ) -> None:
        """OffsetCommit to the coordinator: as a member (``generation``, ``member_id``) or, with the defaults,
        as a consumer outside the group protocol (manual assignment), which Kafka accepts while the group has
        no active members. ``storage="zookeeper"`` writes ZooKeeper's 0.8 offsets with OffsetCommit v0 through
        any broker instead (membership, metadata and leader epochs are not stored there). Raises on the first
        partition that failed."""
        _check_storage(storage)
        if not offsets:
            return
        body = offset_commit_request(
            group_id, offsets, generation=generation, member_id=member_id, group_instance_id=group_instance_id
        )
        if storage == "zookeeper":
            response = self._send_v0(ApiKey.OFFSET_COMMIT, body, "OffsetCommit")
            _raise_partition_errors(self, group_id, "OffsetCommit", response.topics)
            return

        def check(response: Any, version: int) -> None:
            _raise_partition_errors(self, group_id, "OffsetCommit", response.topics)

        self._group_call(
            group_id, ApiKey.OFFSET_COMMIT, lambda v: body, check, "OffsetCommit", max_version=OFFSETS_BY_NAME_MAX
        )

    def delete_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition]) -> None:
        """Delete the committed offsets of ``partitions`` (OffsetDelete: the group must not be subscribed to them)."""
        body = offset_delete_request(group_id, partitions)

        def check(response: Any, version: int) -> None:
            offset_delete_answer(response, group_id, self._error)

        self._group_call(group_id, ApiKey.OFFSET_DELETE, lambda v: body, check, "OffsetDelete")

    def group_lag(self, group_id: str, topics: Iterable[str] | None = None) -> list[PartitionLag]:
        """Per partition of the group's committed offsets (or of every partition of ``topics``): the
        committed offset, the high watermark and their difference, sorted by topic and partition."""
        committed = self.list_group_offsets(group_id)
        tps = set(committed)
        if topics is not None:
            names = list(topics)
            self.client.refresh_metadata(names)
            tps.update(topic_partitions(self.client.metadata, names, "group lag"))
        if not tps:
            return []
        ends = self.client.list_offsets(dict.fromkeys(tps, OffsetSpec.LATEST))
        return lag_rows(committed, tps, ends)


def _check_storage(storage: str) -> str:
    if storage not in _STORAGES:
        raise ValueError(f"offset storage must be one of {', '.join(_STORAGES)}, not {storage!r}")
    return storage


def _too_old(what: str, version: int) -> Any:
    raise KafkaClientError(f"{what} needs v{version}+ of the API, which the coordinator does not serve")


def _raise_partition_errors(admin: GroupAdmin, group_id: str, what: str, topics: Any) -> None:
    raise_partition_errors(group_id, what, topics, admin._error)
