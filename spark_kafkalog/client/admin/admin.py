"""``AdminClient``: create, delete and describe topics, add partitions, delete records, read topic configs,
and administer consumer groups (``spark_kafkalog.client.admin.group_admin``: list, describe, delete, offsets, lag).

CreateTopics, DeleteTopics, CreatePartitions and the partition reassignment requests
(``spark_kafkalog.client.admin.admin_reassignments``) go to the controller named by Metadata (NOT_CONTROLLER
refreshes it and retries); DeleteRecords goes to each partition's leader
(``spark_kafkalog.client.admin.admin_records``); DescribeConfigs, AlterConfigs and
IncrementalAlterConfigs (``spark_kafkalog.client.admin.admin_configs``) go to the broker a broker resource names,
else to any broker, as does Metadata. SCRAM credentials (``spark_kafkalog.client.admin.admin_scram``):
AlterUserScramCredentials goes to the controller, DescribeUserScramCredentials to any broker. ACLs
(``spark_kafkalog.client.admin.admin_acls``): CreateAcls, DescribeAcls and DeleteAcls go to any broker; these
calls and client quotas are ``AccessAdminMixin``'s (``spark_kafkalog.client.admin.admin_access``). Each call is
sent at the highest version both sides support (CreateTopics with broker defaults - ``-1`` partitions or
replication factor - needs v4+).

Per-topic failures are collected: a call raises one ``AdminOperationError`` listing every failed topic,
whose ``errors`` maps each topic (or partition) to its ``KafkaClientError`` and whose ``error_code`` is
the first failure's (so ``TOPIC_ALREADY_EXISTS`` can be tested on a single-topic call). With ``wait=True``
(the default) topic creation, deletion and partition growth return only once Metadata shows the result
with leaders elected, so a producer or reader can use the topic at once. The requests' bodies, steps and
answer checks are ``spark_kafkalog.client.admin.topic_requests``'s. Thread-safe like ``KafkaClient``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spark_kafkalog.client.admin import (
    admin_configs,
    admin_consumer_groups,
    admin_elections,
    admin_reassignments,
    admin_records,
    admin_share_groups,
    admin_topics,
)
from spark_kafkalog.client.admin.admin_access import AccessAdminMixin
from spark_kafkalog.client.admin.admin_configs import AlterConfigOp, ConfigEntry, ConfigResource
from spark_kafkalog.client.admin.admin_consumer_groups import ConsumerGroupDescription
from spark_kafkalog.client.admin.admin_errors import AdminOperationError
from spark_kafkalog.client.admin.admin_reassignments import PartitionReassignment
from spark_kafkalog.client.admin.admin_scram import (
    ScramCredentialInfo,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from spark_kafkalog.client.admin.admin_share_groups import ShareGroupDescription, SharePartitionOffset
from spark_kafkalog.client.admin.admin_steps import drive
from spark_kafkalog.client.admin.group_admin import (
    GroupAdmin,
    GroupDescription,
    GroupListing,
    OffsetAndMetadata,
    PartitionLag,
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
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import KafkaClientError, TopicAuthorizationFailedError
from spark_kafkalog.client.types import NewTopic, TopicDescription, TopicPartition
from spark_kafkalog.protocol import ApiKey

__all__ = [
    "AdminClient",
    "AdminOperationError",
    "AlterConfigOp",
    "ConfigEntry",
    "ConfigResource",
    "PartitionReassignment",
    "ScramCredentialInfo",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
]

_DESCRIBE_CONFIGS = int(ApiKey.DESCRIBE_CONFIGS)


class AdminClient(AccessAdminMixin):
    """``AdminClient("host:9092")``; a context manager. SCRAM credentials, client quotas and ACLs come from
    ``AccessAdminMixin`` (``spark_kafkalog.client.admin.admin_access``)."""

    def __init__(
        self,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        config: Mapping[str, Any] | ClientConfig | None = None,
        **kwargs: Any,
    ) -> None:
        self.client = KafkaClient(bootstrap_servers, config, **kwargs)
        self._groups = GroupAdmin(self.client)

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # consumer groups (spark_kafkalog.client.admin.group_admin) -------------------------------------
    def list_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]:
        """Every consumer group of the cluster, optionally only those in ``states`` (e.g. ``["Stable"]``)."""
        return self._groups.list_groups(states)

    def describe_groups(self, group_ids: Iterable[str]) -> dict[str, GroupDescription]:
        """State, protocol and members (with their assignment bytes) of each group."""
        return self._groups.describe_groups(group_ids)

    def describe_consumer_groups(self, group_ids: Iterable[str]) -> dict[str, ConsumerGroupDescription]:
        """Each group as Kafka's ``describeConsumerGroups``: a KIP-848 consumer group by ConsumerGroupDescribe
        (epochs, server assignor, members' subscriptions and assignments), a classic one by DescribeGroups
        (``spark_kafkalog.client.admin.admin_consumer_groups``)."""
        return admin_consumer_groups.describe_consumer_groups(self._groups, group_ids)

    def list_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The group's committed offsets (every partition it committed when ``partitions`` is None)."""
        return self._groups.list_group_offsets(group_id, partitions)

    def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int | OffsetAndMetadata]) -> None:
        """Set committed offsets of a group without active members (the reset of kafka-consumer-groups)."""
        self._groups.alter_group_offsets(group_id, offsets)

    def delete_groups(self, group_ids: Iterable[str]) -> None:
        """Delete empty groups with their committed offsets."""
        self._groups.delete_groups(group_ids)

    def delete_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition]) -> None:
        """Delete a group's committed offsets of ``partitions`` (not of topics the group is subscribed to)."""
        self._groups.delete_group_offsets(group_id, partitions)

    def group_lag(self, group_id: str, topics: Iterable[str] | None = None) -> list[PartitionLag]:
        """Committed offset, high watermark and lag per partition (also uncommitted ones of ``topics``)."""
        return self._groups.group_lag(group_id, topics)

    # share groups (KIP-932; spark_kafkalog.client.admin.admin_share_groups) ------------------------
    def list_share_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]:
        """The share groups of the cluster (ListGroups' groups of type "share"), optionally only in ``states``."""
        return [g for g in self._groups.list_groups(states) if g.protocol_type == "share"]

    def describe_share_groups(self, group_ids: Iterable[str]) -> dict[str, ShareGroupDescription]:
        """Each share group (ShareGroupDescribe): state, epochs, assignor, members and their partitions; a group
        that is not a share group raises GROUP_ID_NOT_FOUND."""
        return admin_share_groups.describe_share_groups(self._groups, group_ids)

    def list_share_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, SharePartitionOffset]:
        """The start offset (SPSO) of each share-partition of the group (every one with share state when
        ``partitions`` is None), with its lag when the coordinator knows it (DescribeShareGroupOffsets)."""
        return admin_share_groups.list_share_group_offsets(self._groups, group_id, partitions)

    def alter_share_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Set the start offset of share-partitions of an empty share group (AlterShareGroupOffsets); partition
        failures raise one ``AdminOperationError``."""
        wanted = {TopicPartition(*tp): int(o) for tp, o in offsets.items()}
        results = admin_share_groups.alter_share_group_offsets(self._groups, group_id, wanted)
        admin_share_groups.raise_failures("AlterShareGroupOffsets", results)

    def delete_share_group_offsets(self, group_id: str, topics: Iterable[str]) -> None:
        """Forget the share state of whole topics of an empty share group (DeleteShareGroupOffsets); their start
        offsets are chosen again by ``share.auto.offset.reset``. Topic failures raise one ``AdminOperationError``."""
        results = admin_share_groups.delete_share_group_offsets(self._groups, group_id, topics)
        admin_share_groups.raise_failures("DeleteShareGroupOffsets", results)

    # helpers -----------------------------------------------------------------------------------
    def _controller_request(
        self, api_key: int, build: Any, *, min_version: int = 0, timeout_ms: int, what: str
    ) -> tuple[int, Any, str]:
        """Send to the controller (looked up in Metadata), retrying NOT_CONTROLLER and lost connections;
        ``build(version)`` makes the body. Returns (version, response, controller address)."""
        client = self.client
        state: dict[str, Any] = {}

        def attempt() -> tuple[int, Any, str]:
            client.refresh_metadata_once([])
            controller = known_controller(client.metadata, what)
            version, response = client.send_request(
                api_key,
                build,
                node_id=controller,
                min_version=min_version,
                timeout_ms=timeout_ms + client.config.request_timeout_ms,
            )
            check_controller_answer(api_key, response, what, controller)
            state["peer"] = str(client.broker_address(controller) or controller)
            return version, response, state["peer"]

        return client.call_with_retries(attempt, what=what)

    def _timeout(self, timeout_ms: int | None) -> int:
        return self.client.config.request_timeout_ms if timeout_ms is None else timeout_ms

    # topics ------------------------------------------------------------------------------------
    def create_topics(
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
        drive(create_topics_steps(topics, timeout, validate_only), self._controller_request)
        if wait and not validate_only:
            for t in topics:
                self._wait_for_leaders(t.name)

    def _wait_for_leaders(self, topic: str, min_partitions: int = 1) -> None:
        """Wait until Metadata shows ``min_partitions`` partitions of ``topic``, each with a leader. A principal
        allowed to create the topic but not to describe it cannot see them: it returns at once (as Kafka's
        admin client, which never waits)."""
        client = self.client

        def check() -> None:
            check_leaders(client.topic_info(topic, refresh=True), min_partitions)

        try:
            client.call_with_retries(check, what=f"waiting for the leaders of {topic}")
        except TopicAuthorizationFailedError:
            return

    def delete_topics(self, names: Iterable[str], *, timeout_ms: int | None = None, wait: bool = True) -> None:
        """Delete topics; raises ``AdminOperationError`` naming each topic that failed."""
        names = list(names)
        if not names:
            return
        timeout = self._timeout(timeout_ms)
        drive(delete_topics_steps(names, timeout), self._controller_request)
        for name in names:
            self.client.metadata.forget(name)
        if wait:
            for name in names:
                self._wait_until_gone(name)

    def _wait_until_gone(self, topic: str) -> None:
        client = self.client

        def check() -> None:
            client.refresh_metadata_once([topic])
            check_gone(client.metadata, topic)

        client.call_with_retries(check, what=f"waiting for the deletion of {topic}")

    def list_topics(self, *, include_internal: bool = False) -> list[str]:
        """Names of every topic, sorted."""
        return sorted(self.client.topics(include_internal=include_internal))

    def describe_topics(self, names: Iterable[str] | None = None) -> dict[str, TopicDescription]:
        """Partitions, leaders, leader epochs, replicas and ISRs of ``names`` (every topic when ``None``).

        An unknown topic raises ``AdminOperationError``.
        """
        client = self.client
        wanted = None if names is None else list(names)
        client.refresh_metadata(wanted)
        return describe_topics_result(client.metadata.topics(), wanted)

    def describe_topic_partitions(
        self, names: Iterable[str] | None = None, *, partition_limit: int = 2000
    ) -> dict[str, TopicDescription]:
        """As ``describe_topics``, through DescribeTopicPartitions (key 75) as Kafka 4.x's admin client does:
        pages of at most ``partition_limit`` partitions (``spark_kafkalog.client.admin.admin_topics``) from any
        broker; ``names`` None (or empty) describes every topic the principal may describe. Partitions carry no
        per-partition error (a partition without a live leader has leader -1). A failed topic (unknown,
        TOPIC_AUTHORIZATION_FAILED) raises ``AdminOperationError``; a broker without the API raises
        ``NoCommonVersionError`` (``describe_topics`` uses Metadata and works everywhere)."""
        out, errors = admin_topics.describe_topic_partitions(
            self._any_broker_send, None if names is None else list(names), partition_limit
        )
        if errors:
            raise AdminOperationError("DescribeTopicPartitions", errors)
        return out

    def create_partitions(
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
        drive(create_partitions_steps(new_totals, timeout, validate_only), self._controller_request)
        if wait and not validate_only:
            for topic, total in new_totals.items():
                self._wait_for_leaders(topic, total)

    def delete_records(
        self, offsets: Mapping[TopicPartition, int], *, timeout_ms: int | None = None
    ) -> dict[TopicPartition, int]:
        """Delete the records below ``{tp: offset}`` (-1: the high watermark); returns the new log start
        offsets (low watermarks)."""
        result, errors = admin_records.delete_records(self.client, offsets, self._timeout(timeout_ms))
        if errors:
            raise AdminOperationError("DeleteRecords", errors)
        return result

    def describe_configs(self, topic: str, *, keys: Iterable[str] | None = None) -> dict[str, str | None]:
        """The topic's configuration ``{name: value}`` (``keys`` selects names; all when ``None``)."""
        body = topic_configs_request(topic, keys)
        _, response = self.client.call_with_retries(
            lambda: self.client.send_request(_DESCRIBE_CONFIGS, body), what="DescribeConfigs"
        )
        return topic_configs_answer(response, topic)

    # configs of topics and brokers (spark_kafkalog.client.admin.admin_configs) ----------------------
    def _config_send(self, what: str):
        client = self.client

        def send(api_key: int, body: Any, *, node_id: int | None) -> tuple[int, Any]:
            def attempt() -> tuple[int, Any]:
                if node_id is not None and client.metadata.broker(node_id) is None:
                    client.refresh_metadata_once([])
                    if client.metadata.broker(node_id) is None:
                        raise KafkaClientError(f"{what}: broker {node_id} is not in the cluster")
                return client.send_request(api_key, body, node_id=node_id)

            return client.call_with_retries(attempt, what=what)

        return send

    def describe_resource_configs(
        self, resources: Iterable[ConfigResource], *, keys: Iterable[str] | None = None, synonyms: bool = False
    ) -> dict[ConfigResource, list[ConfigEntry]]:
        """Every config of each resource with its value and source (``ConfigEntry``); a broker resource
        ``(4, "1")`` is asked of broker 1, ``(4, "")`` gives the cluster-wide dynamic defaults."""
        out, errors = admin_configs.describe_configs(self._config_send("DescribeConfigs"), resources, keys, synonyms)
        if errors:
            raise AdminOperationError("DescribeConfigs", errors)
        return out

    def alter_configs(
        self, configs: Mapping[ConfigResource, Mapping[str, str]], *, validate_only: bool = False
    ) -> None:
        """Replace each resource's whole set of dynamic configs (AlterConfigs): keys left out are removed."""
        errors = admin_configs.alter_configs(
            self._config_send("AlterConfigs"), configs, incremental=False, validate_only=validate_only
        )
        if errors:
            raise AdminOperationError("AlterConfigs", errors)

    def incremental_alter_configs(
        self, ops: Mapping[ConfigResource, Iterable[AlterConfigOp]], *, validate_only: bool = False
    ) -> None:
        """Change keys one by one (IncrementalAlterConfigs): ``AlterConfigOp(name, value, op)`` with op
        ``SET``, ``DELETE``, ``APPEND`` or ``SUBTRACT`` (``spark_kafkalog.client.admin.admin_configs``)."""
        errors = admin_configs.alter_configs(
            self._config_send("IncrementalAlterConfigs"), ops, incremental=True, validate_only=validate_only
        )
        if errors:
            raise AdminOperationError("IncrementalAlterConfigs", errors)

    # partition reassignment (spark_kafkalog.client.admin.admin_reassignments) ----------------------
    def alter_partition_reassignments(
        self, reassignments: Mapping[TopicPartition, Iterable[int] | None], *, timeout_ms: int | None = None
    ) -> None:
        """Move partitions to ``{tp: [broker ids]}`` (the first is the preferred leader), or cancel the ongoing
        reassignment of ``{tp: None}``. Returns once the controller has started them (``list_partition_
        reassignments`` shows them until the new replicas are in sync); failures raise ``AdminOperationError``."""
        if not reassignments:
            return
        targets = {TopicPartition(*tp): None if r is None else list(r) for tp, r in reassignments.items()}
        errors = admin_reassignments.alter_partition_reassignments(
            self._controller_request, targets, self._timeout(timeout_ms)
        )
        if errors:
            raise AdminOperationError("AlterPartitionReassignments", errors)

    def list_partition_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None, *, timeout_ms: int | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        """The ongoing reassignments (of ``partitions``; all when None)."""
        return admin_reassignments.list_partition_reassignments(
            self._controller_request, None if partitions is None else list(partitions), self._timeout(timeout_ms)
        )

    # leader elections (spark_kafkalog.client.admin.admin_elections) ------------------------------
    def elect_leaders(
        self,
        election_type: str = "preferred",
        partitions: Iterable[TopicPartition] | None = None,
        *,
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, KafkaClientError | None]:
        """Elect partition leaders on the controller, as Kafka's ``Admin.electLeaders``: ``"preferred"`` or
        ``"unclean"`` for ``partitions`` (every partition when None; the answer then holds only those that needed
        an election). Each partition answered maps to None (elected) or its error (``ELECTION_NOT_NEEDED``,
        ``PREFERRED_LEADER_NOT_AVAILABLE``, ...); a refused request (CLUSTER_AUTHORIZATION_FAILED) raises."""
        return admin_elections.elect_leaders(
            self._controller_request,
            election_type,
            None if partitions is None else list(partitions),
            self._timeout(timeout_ms),
        )

    def list_client_metrics_resources(self) -> list[str]:
        """The client metrics subscriptions (KIP-714 ``CLIENT_METRICS`` config resources, type 16), sorted
        (ListClientMetricsResources v0). Raises ``KafkaClientError`` with the broker's code
        (CLUSTER_AUTHORIZATION_FAILED without DescribeConfigs on the cluster)."""
        return drive(admin_configs.list_client_metrics_resources_steps(), self._any_broker_send)

    def describe_cluster(self) -> dict[str, Any]:
        """``{"cluster_id", "controller_id", "brokers": {node_id: "host:port"}}`` from Metadata."""
        client = self.client
        client.call_with_retries(lambda: client.refresh_metadata_once([]), what="Metadata")
        return {
            "cluster_id": client.metadata.cluster_id,
            "controller_id": client.metadata.controller_id,
            "brokers": {b.node_id: f"{b.host}:{b.port}" for b in client.metadata.brokers.values()},
        }
