"""``AIOAdminClient``: the blocking ``AdminClient``'s topic, config, record, offset and consumer-group calls as
coroutines, on an ``AsyncKafkaClient``.

Same names, arguments, results and errors as ``spark_kafkalog.client.admin.AdminClient``: the requests are built
and the answers read by the blocking admin's own functions (``topic_requests``, ``admin_configs`` steps,
``admin_records``, ``group_requests``, ``admin_consumer_groups``); only the sending is asyncio. Routing as there:
CreateTopics, DeleteTopics and CreatePartitions to the controller named by Metadata (NOT_CONTROLLER refreshes it
and retries); DeleteRecords and ListOffsets to each partition's leader; DescribeConfigs/AlterConfigs/
IncrementalAlterConfigs to the broker a broker resource names, else to any broker; group calls to the group's
coordinator (FindCoordinator, cached; a moved coordinator is forgotten and the call retried); ListGroups to
every broker. Each request goes at the highest version both sides support (CreateTopics with broker defaults
needs v4+; OffsetFetch/OffsetCommit at most v9, by topic name; ConsumerGroupDescribe v0-1 with a DescribeGroups
fallback). Per-topic failures raise one ``AdminOperationError``; ``wait=True`` waits for Metadata to show the
result, as the blocking client does.

Partition reassignments, leader elections, DescribeTopicPartitions, client metrics resources, SCRAM
credentials, client quotas and ACLs are ``AIOAccessAdminMixin``'s (``client.aio.admin_access``).

Besides the blocking names (``list_groups``, ``describe_groups``, ``list_group_offsets``, ``delete_groups``) the
Kafka Admin names ``list_consumer_groups``, ``list_consumer_group_offsets`` and ``delete_consumer_groups`` are
the same calls.

Concurrency: one event loop (that of ``start`` or the first call); calls may run concurrently on it, sharing the
client's connections; not thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from spark_kafkalog.client.admin import admin_consumer_groups as consumer_groups
from spark_kafkalog.client.admin.admin_configs import (
    AlterConfigOp,
    ConfigEntry,
    ConfigResource,
    Steps,
    alter_configs_steps,
    describe_configs_steps,
)
from spark_kafkalog.client.admin.admin_consumer_groups import ConsumerGroupDescription
from spark_kafkalog.client.admin.admin_errors import AdminOperationError
from spark_kafkalog.client.admin.admin_records import DeleteRecordsRounds, delete_records_request
from spark_kafkalog.client.admin.group_requests import (
    OFFSETS_BY_NAME_MAX,
    GroupDescription,
    GroupListing,
    OffsetAndMetadata,
    PartitionLag,
    delete_groups_answer,
    delete_groups_request,
    describe_groups_answer,
    describe_groups_request,
    lag_rows,
    list_groups_answer,
    list_groups_request,
    offset_delete_answer,
    offset_delete_request,
    offset_fetch_answer,
    offset_fetch_request,
    topic_partitions,
)
from spark_kafkalog.client.admin.topic_requests import (
    check_controller_answer,
    check_gone,
    check_leaders,
    create_partitions_steps,
    create_topics_steps,
    delete_topics_steps,
    describe_topics_result,
    known_controller,
    topic_configs_answer,
    topic_configs_request,
)
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import KafkaClientError, TopicAuthorizationFailedError
from spark_kafkalog.client.types import NewTopic, OffsetSpec, TopicDescription, TopicPartition
from spark_kafkalog.protocol import ApiKey, ErrorCode

from .admin_access import AIOAccessAdminMixin
from .admin_share import AIOShareAdminMixin
from .admin_steps import drive_async
from .client import AsyncKafkaClient
from .group_calls import AsyncGroupCalls
from .retrying import sleep_or_give_up

__all__ = ["AIOAdminClient"]

T = TypeVar("T")

_CREATE_TOPICS = int(ApiKey.CREATE_TOPICS)
_DELETE_TOPICS = int(ApiKey.DELETE_TOPICS)
_CREATE_PARTITIONS = int(ApiKey.CREATE_PARTITIONS)
_DESCRIBE_CONFIGS = int(ApiKey.DESCRIBE_CONFIGS)
_DELETE_RECORDS = int(ApiKey.DELETE_RECORDS)


class AIOAdminClient(AIOShareAdminMixin, AIOAccessAdminMixin):
    """``AIOAdminClient("host:9092")``; ``await start()`` or ``async with``; settings as ``AdminClient``'s."""

    def __init__(
        self,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        config: Mapping[str, Any] | ClientConfig | None = None,
        **kwargs: Any,
    ) -> None:
        self.client = AsyncKafkaClient(bootstrap_servers, config=config, **kwargs)
        self._groups = AsyncGroupCalls(self.client)

    async def start(self) -> None:
        """Connect and learn the cluster's brokers (optional: the first call does it too)."""
        await self.client.start()

    async def close(self) -> None:
        await self.client.close()

    async def __aenter__(self) -> AIOAdminClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _timeout(self, timeout_ms: int | None) -> int:
        return self.client.config.request_timeout_ms if timeout_ms is None else timeout_ms

    async def _controller_request(
        self, api_key: int, build: Callable[[int], Any], *, min_version: int = 0, timeout_ms: int, what: str
    ) -> tuple[int, Any, str]:
        """Send ``build(version)`` to the controller (looked up in Metadata), retrying NOT_CONTROLLER and lost
        connections; returns (version, response, controller address)."""
        client = self.client

        async def attempt() -> tuple[int, Any, str]:
            await client.refresh_metadata_once([])
            controller = known_controller(client.metadata, what)
            version, response = await client.send_request_versioned(
                controller,
                api_key,
                build,
                min_version=min_version,
                timeout_ms=timeout_ms + client.config.request_timeout_ms,
            )
            check_controller_answer(api_key, response, what, controller)
            return version, response, str(client.broker_address(controller) or controller)

        return await client.call_with_retries(attempt, what=what)

    # topics ------------------------------------------------------------------------------------
    async def create_topics(
        self,
        new_topics: Iterable[NewTopic],
        validate_only: bool = False,
        *,
        timeout_ms: int | None = None,
        wait: bool = True,
    ) -> None:
        """Create topics; raises ``AdminOperationError`` naming each topic that failed."""
        topics = list(new_topics)
        if not topics:
            return
        timeout = self._timeout(timeout_ms)
        await drive_async(create_topics_steps(topics, timeout, validate_only), self._controller_request)
        if wait and not validate_only:
            for t in topics:
                await self._wait_for_leaders(t.name)

    async def _wait_for_leaders(self, topic: str, min_partitions: int = 1) -> None:
        client = self.client

        async def check() -> None:
            check_leaders(await client.topic_info(topic, refresh=True), min_partitions)

        try:
            await client.call_with_retries(check, what=f"waiting for the leaders of {topic}")
        except TopicAuthorizationFailedError:
            return

    async def delete_topics(self, names: Iterable[str], *, timeout_ms: int | None = None, wait: bool = True) -> None:
        """Delete topics; raises ``AdminOperationError`` naming each topic that failed."""
        names = list(names)
        if not names:
            return
        timeout = self._timeout(timeout_ms)
        await drive_async(delete_topics_steps(names, timeout), self._controller_request)
        for name in names:
            self.client.metadata.forget(name)
        if wait:
            for name in names:
                await self._wait_until_gone(name)

    async def _wait_until_gone(self, topic: str) -> None:
        client = self.client

        async def check() -> None:
            await client.refresh_metadata_once([topic])
            check_gone(client.metadata, topic)

        await client.call_with_retries(check, what=f"waiting for the deletion of {topic}")

    async def list_topics(self, *, include_internal: bool = False) -> list[str]:
        """Names of every topic, sorted."""
        return sorted(await self.client.topics(include_internal=include_internal))

    async def describe_topics(self, names: Iterable[str] | None = None) -> dict[str, TopicDescription]:
        """Partitions, leaders, leader epochs, replicas and ISRs of ``names`` (every topic when ``None``); an
        unknown topic raises ``AdminOperationError``."""
        wanted = None if names is None else list(names)
        await self.client.refresh_metadata(wanted)
        return describe_topics_result(self.client.metadata.topics(), wanted)

    async def create_partitions(
        self,
        new_totals: Mapping[str, int],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        wait: bool = True,
    ) -> None:
        """Grow topics to ``{topic: total partition count}``."""
        if not new_totals:
            return
        timeout = self._timeout(timeout_ms)
        await drive_async(create_partitions_steps(new_totals, timeout, validate_only), self._controller_request)
        if wait and not validate_only:
            for topic, total in new_totals.items():
                await self._wait_for_leaders(topic, total)

    # records and offsets -----------------------------------------------------------------------
    async def delete_records(
        self, offsets: Mapping[TopicPartition, int], *, timeout_ms: int | None = None
    ) -> dict[TopicPartition, int]:
        """Delete the records below ``{tp: offset}`` (-1: the high watermark); returns the new log start
        offsets (low watermarks). One DeleteRecords per leader; retriable partition errors are sent again."""
        client = self.client
        timeout = self._timeout(timeout_ms)
        rounds = DeleteRecordsRounds(offsets)
        plan = client.retry_plan()
        while rounds.remaining:
            leaders = {tp: await client.leader_for(tp) for tp in rounds.remaining}
            for leader, part in rounds.by_leader(leaders).items():
                try:
                    response = await client.send_request(
                        leader,
                        _DELETE_RECORDS,
                        delete_records_request(part, timeout),
                        timeout_ms=timeout + client.config.request_timeout_ms,
                    )
                except KafkaClientError as e:
                    rounds.failed(part, e)
                    continue
                rounds.answered(response, part, str(client.broker_address(leader) or leader), client.metadata)
            if rounds.next_round() and not await sleep_or_give_up(plan):
                rounds.give_up()
        if rounds.errors:
            raise AdminOperationError("DeleteRecords", rounds.errors)
        return rounds.result

    async def list_offsets(
        self, specs: Mapping[TopicPartition, int], *, isolation_level: int | None = None
    ) -> dict[TopicPartition, int]:
        """Offsets for ``{tp: OffsetSpec or timestamp}`` (``AsyncKafkaClient.list_offsets``)."""
        return await self.client.list_offsets(specs, isolation_level=isolation_level)

    # configs -----------------------------------------------------------------------------------
    async def describe_configs(self, topic: str, *, keys: Iterable[str] | None = None) -> dict[str, str | None]:
        """The topic's configuration ``{name: value}`` (``keys`` selects names; all when ``None``)."""
        body = topic_configs_request(topic, keys)
        response = await self.client.call_with_retries(
            lambda: self.client.send_request(None, _DESCRIBE_CONFIGS, body), what="DescribeConfigs"
        )
        return topic_configs_answer(response, topic)

    async def _run_config_steps(self, steps: Steps[T], what: str) -> T:
        """Drive ``admin_configs`` steps: each request to its broker (any when None), retried."""
        client = self.client

        async def send(api_key: int, body: Any, node_id: int | None) -> tuple[int, Any]:
            async def attempt() -> tuple[int, Any]:
                if node_id is not None and client.metadata.broker(node_id) is None:
                    await client.refresh_metadata_once([])
                    if client.metadata.broker(node_id) is None:
                        raise KafkaClientError(f"{what}: broker {node_id} is not in the cluster")
                return await client.send_request_versioned(node_id, api_key, body)

            return await client.call_with_retries(attempt, what=what)

        try:
            api_key, body, node = next(steps)
            while True:
                api_key, body, node = steps.send(await send(api_key, body, node))
        except StopIteration as done:
            return done.value

    async def describe_resource_configs(
        self, resources: Iterable[ConfigResource], *, keys: Iterable[str] | None = None, synonyms: bool = False
    ) -> dict[ConfigResource, list[ConfigEntry]]:
        """Every config of each resource with its value and source (``ConfigEntry``); a broker resource
        ``(4, "1")`` is asked of broker 1, ``(4, "")`` gives the cluster-wide dynamic defaults."""
        out, errors = await self._run_config_steps(describe_configs_steps(resources, keys, synonyms), "DescribeConfigs")
        if errors:
            raise AdminOperationError("DescribeConfigs", errors)
        return out

    async def alter_configs(
        self, configs: Mapping[ConfigResource, Mapping[str, str]], *, validate_only: bool = False
    ) -> None:
        """Replace each resource's whole set of dynamic configs (AlterConfigs): keys left out are removed."""
        steps = alter_configs_steps(configs, incremental=False, validate_only=validate_only)
        errors = await self._run_config_steps(steps, "AlterConfigs")
        if errors:
            raise AdminOperationError("AlterConfigs", errors)

    async def incremental_alter_configs(
        self, ops: Mapping[ConfigResource, Iterable[AlterConfigOp]], *, validate_only: bool = False
    ) -> None:
        """Change keys one by one (IncrementalAlterConfigs): ``AlterConfigOp(name, value, op)``."""
        steps = alter_configs_steps(ops, incremental=True, validate_only=validate_only)
        errors = await self._run_config_steps(steps, "IncrementalAlterConfigs")
        if errors:
            raise AdminOperationError("IncrementalAlterConfigs", errors)

    # cluster -----------------------------------------------------------------------------------
    async def describe_cluster(self) -> dict[str, Any]:
        """``{"cluster_id", "controller_id", "brokers": {node_id: "host:port"}}`` from Metadata."""
        client = self.client
        await client.call_with_retries(lambda: client.refresh_metadata_once([]), what="Metadata")
        return {
            "cluster_id": client.metadata.cluster_id,
            "controller_id": client.metadata.controller_id,
            "brokers": {b.node_id: f"{b.host}:{b.port}" for b in client.metadata.brokers.values()},
        }

    # consumer groups ---------------------------------------------------------------------------
    async def coordinator(self, group_id: str) -> int:
        """The broker id coordinating ``group_id`` (FindCoordinator, cached; ``AsyncGroupCalls``)."""
        return await self._groups.coordinator(group_id)

    def forget_coordinator(self, group_id: str) -> None:
        """Drop the cached coordinator of ``group_id`` (it moved or its connection broke)."""
        self._groups.forget_coordinator(group_id)

    async def list_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]:
        """Every consumer group of the cluster (ListGroups to each broker), optionally only those in ``states``
        (e.g. ``["Stable"]``, ListGroups v4+). A broker that leaves the metadata while being retried is
        skipped (its groups moved to others)."""
        client = self.client
        wanted = None if states is None else {s.lower() for s in states}
        await client.refresh_metadata([])
        found: dict[str, GroupListing] = {}
        for node in sorted(client.metadata.brokers):
            tries = 0

            async def attempt(node: int = node) -> tuple[int, Any] | None:
                nonlocal tries
                tries += 1
                if tries > 1:
                    await client.refresh_metadata_once([])
                    if node not in client.metadata.brokers:
                        return None
                return await client.send_request_versioned(
                    node, ApiKey.LIST_GROUPS, lambda v: list_groups_request(wanted)
                )

            answer = await client.call_with_retries(attempt, what="ListGroups")
            if answer is None:
                continue
            version, response = answer
            found.update((g.group_id, g) for g in list_groups_answer(response, version, wanted, node))
        return sorted(found.values(), key=lambda g: g.group_id)

    async def list_consumer_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]:
        """``list_groups`` under Kafka Admin's name."""
        return await self.list_groups(states)

    async def describe_groups(self, group_ids: Iterable[str]) -> dict[str, GroupDescription]:
        """State, protocol and members (with their assignment bytes) of each classic group (DescribeGroups)."""
        return {group_id: await self._describe_group(group_id) for group_id in group_ids}

    async def _describe_group(self, group_id: str) -> GroupDescription:
        def check(response: Any, version: int) -> GroupDescription:
            node = self._groups.cached_coordinator(group_id)  # the coordinator just asked
            return describe_groups_answer(response, version, group_id, node, self._groups.error)

        return await self._groups.group_call(
            group_id, ApiKey.DESCRIBE_GROUPS, lambda v: describe_groups_request(group_id), check, "DescribeGroups"
        )

    async def describe_consumer_groups(self, group_ids: Iterable[str]) -> dict[str, ConsumerGroupDescription]:
        """Each group as Kafka's ``describeConsumerGroups``: a KIP-848 consumer group by ConsumerGroupDescribe, a
        classic one by DescribeGroups, an unknown one Dead (``admin_consumer_groups``)."""
        return {group_id: await self._describe_consumer_group(group_id) for group_id in dict.fromkeys(group_ids)}

    async def _describe_consumer_group(self, group_id: str) -> ConsumerGroupDescription:
        try:

            def check(response: Any, version: int) -> ConsumerGroupDescription:
                node = self._groups.cached_coordinator(group_id)
                return consumer_groups.consumer_group_describe_answer(
                    response, version, group_id, node, self._groups.error
                )

            return await self._groups.group_call(
                group_id,
                ApiKey.CONSUMER_GROUP_DESCRIBE,
                lambda v: consumer_groups.consumer_group_describe_request(group_id),
                check,
                "ConsumerGroupDescribe",
            )
        except KafkaClientError as e:
            if not consumer_groups.is_classic_or_unknown(e):
                raise
        try:
            return consumer_groups.classic_description((await self.describe_groups([group_id]))[group_id])
        except KafkaClientError as e:  # DescribeGroups v6 (Kafka 4.x): GROUP_ID_NOT_FOUND where v0-5 answer Dead
            if e.error_code != ErrorCode.GROUP_ID_NOT_FOUND:
                raise
        return consumer_groups.dead_group(group_id, await self.coordinator(group_id))

    async def list_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The group's committed offsets (every partition it committed when ``partitions`` is None; that needs
        OffsetFetch v2+)."""
        wanted = None if partitions is None else sorted(set(partitions))

        def build(version: int) -> Any:
            if wanted is None and version < 2:
                raise KafkaClientError(
                    "OffsetFetch for all partitions needs v2+ of the API, which the coordinator does not serve"
                )
            return offset_fetch_request(version, group_id, wanted)

        return await self._groups.group_call(
            group_id,
            ApiKey.OFFSET_FETCH,
            build,
            lambda response, version: offset_fetch_answer(response, version, group_id, self._groups.error),
            "OffsetFetch",
            max_version=OFFSETS_BY_NAME_MAX,
        )

    async def list_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """``list_group_offsets`` under Kafka Admin's name."""
        return await self.list_group_offsets(group_id, partitions)

    async def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int | OffsetAndMetadata]
    ) -> None:
        """Set committed offsets of a group without active members (the reset of kafka-consumer-groups)."""
        await self._groups.commit_offsets(group_id, offsets)

    async def delete_groups(self, group_ids: Iterable[str]) -> None:
        """Delete empty groups with their committed offsets; raises naming the first group that failed
        (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND)."""
        for group_id in group_ids:
            await self._delete_group(group_id)

    async def _delete_group(self, group_id: str) -> None:
        def check(response: Any, version: int) -> None:
            delete_groups_answer(response, group_id, self._groups.error)

        await self._groups.group_call(
            group_id, ApiKey.DELETE_GROUPS, lambda v: delete_groups_request(group_id), check, "DeleteGroups"
        )

    async def delete_consumer_groups(self, group_ids: Iterable[str]) -> None:
        """``delete_groups`` under Kafka Admin's name."""
        await self.delete_groups(group_ids)

    async def delete_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition]) -> None:
        """Delete a group's committed offsets of ``partitions`` (not of topics the group is subscribed to)."""
        body = offset_delete_request(group_id, partitions)

        def check(response: Any, version: int) -> None:
            offset_delete_answer(response, group_id, self._groups.error)

        await self._groups.group_call(group_id, ApiKey.OFFSET_DELETE, lambda v: body, check, "OffsetDelete")

    async def group_lag(self, group_id: str, topics: Iterable[str] | None = None) -> list[PartitionLag]:
        """Committed offset, high watermark and lag per partition (also uncommitted ones of ``topics``)."""
        committed = await self.list_group_offsets(group_id)
        tps = set(committed)
        if topics is not None:
            names = list(topics)
            await self.client.refresh_metadata(names)
            tps.update(topic_partitions(self.client.metadata, names, "group lag"))
        if not tps:
            return []
        ends = await self.client.list_offsets(dict.fromkeys(tps, OffsetSpec.LATEST))
        return lag_rows(committed, tps, ends)
