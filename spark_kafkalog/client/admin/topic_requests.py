"""The pure parts of ``AdminClient``'s topic calls, shared with the asyncio admin client (``client.aio.admin``):
the CreateTopics, DeleteTopics and CreatePartitions steps and bodies (any version; CreateTopics v4+ when a topic
leaves its partition count or replication factor to the broker), the controller checks (a retriable error while
the cluster has no controller or an answer says NOT_CONTROLLER), the waits' checks (leaders elected, topic gone),
``describe_topics``' answer from Metadata, one topic's DescribeConfigs body and answer, and the per-topic errors
raised as one ``AdminOperationError``. No I/O; thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spark_kafkalog.client.admin import admin_elections, admin_reassignments, admin_scram
from spark_kafkalog.client.admin.admin_errors import AdminOperationError
from spark_kafkalog.client.admin.admin_steps import AdminRequest, AdminSteps
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.client.metadata import MetadataCache, TopicInfo
from spark_kafkalog.client.types import NewTopic, PartitionDescription, TopicDescription
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

_CREATE_TOPICS = int(ApiKey.CREATE_TOPICS)
_DELETE_TOPICS = int(ApiKey.DELETE_TOPICS)
_CREATE_PARTITIONS = int(ApiKey.CREATE_PARTITIONS)
_DESCRIBE_CONFIGS = int(ApiKey.DESCRIBE_CONFIGS)
_TOPIC_RESOURCE = 2


def result_codes(api_key: int, response: Any) -> set[int]:
    if api_key == _CREATE_TOPICS:
        return {t.error_code for t in response.topics}
    if api_key == _DELETE_TOPICS:
        return {t.error_code for t in response.responses}
    if api_key == _CREATE_PARTITIONS:
        return {t.error_code for t in response.results}
    if api_key in (admin_reassignments.ALTER, admin_reassignments.LIST):
        return {response.error_code}
    if api_key == admin_elections.ELECT_LEADERS:  # top level from v1; per partition (v0 has no other place)
        return {getattr(response, "error_code", 0)} | {
            p.error_code for t in response.replica_election_results for p in t.partition_result
        }
    if api_key == admin_scram.ALTER:
        return {r.error_code for r in response.results}
    return set()


def raise_topic_errors(what: str, results: Iterable[Any], peer: str) -> None:
    """Raise ``AdminOperationError`` for the per-topic results (``name``, ``error_code``, ``error_message``)
    of a topic-admin response that carry an error."""
    errors = {
        r.name: error_for_code(r.error_code, what, broker=peer, topic=r.name, detail=r.error_message)
        for r in results
        if r.error_code
    }
    if errors:
        raise AdminOperationError(what, errors)


def create_topics_steps(topics: list[NewTopic], timeout: int, validate_only: bool) -> AdminSteps[None]:
    """One CreateTopics to the controller; per-topic failures raise one ``AdminOperationError``."""
    _, response, peer = yield AdminRequest(
        _CREATE_TOPICS,
        lambda version: create_topics_request(topics, timeout, validate_only),
        "CreateTopics",
        min_version=create_topics_min_version(topics),
        timeout_ms=timeout,
    )
    raise_topic_errors("CreateTopics", response.topics, peer)


def delete_topics_steps(names: list[str], timeout: int) -> AdminSteps[None]:
    """One DeleteTopics to the controller; per-topic failures raise one ``AdminOperationError``."""
    _, response, peer = yield AdminRequest(
        _DELETE_TOPICS, lambda v: delete_topics_request(v, names, timeout), "DeleteTopics", timeout_ms=timeout
    )
    raise_topic_errors("DeleteTopics", response.responses, peer)


def create_partitions_steps(new_totals: Mapping[str, int], timeout: int, validate_only: bool) -> AdminSteps[None]:
    """One CreatePartitions to the controller; per-topic failures raise one ``AdminOperationError``."""
    _, response, peer = yield AdminRequest(
        _CREATE_PARTITIONS,
        lambda v: create_partitions_request(new_totals, timeout, validate_only),
        "CreatePartitions",
        timeout_ms=timeout,
    )
    raise_topic_errors("CreatePartitions", response.results, peer)


def create_topics_min_version(topics: Iterable[NewTopic]) -> int:
    """CreateTopics v4+ when a topic leaves its partition count or replication factor to the broker (-1)."""
    uses_defaults = any(
        t.replica_assignment is None and (t.num_partitions < 0 or t.replication_factor < 0) for t in topics
    )
    return 4 if uses_defaults else 0


def create_topics_request(topics: Iterable[NewTopic], timeout: int, validate_only: bool) -> Any:
    """The CreateTopics body (any version) for ``topics``; ``timeout`` (ms) is the controller's wait."""
    R = API_BY_KEY[_CREATE_TOPICS].Request
    entries = []
    for t in topics:
        assignments = []
        num, rf = t.num_partitions, t.replication_factor
        if t.replica_assignment is not None:
            assignments = [
                R.CreatableTopic.CreatableReplicaAssignment(partition_index=p, broker_ids=list(ids))
                for p, ids in sorted(t.replica_assignment.items())
            ]
            num, rf = -1, -1
        configs = [R.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in t.config.items()]
        entries.append(
            R.CreatableTopic(
                name=t.name, num_partitions=num, replication_factor=rf, assignments=assignments, configs=configs
            )
        )
    return R(topics=entries, timeout_ms=timeout, validate_only=validate_only)


def delete_topics_request(version: int, names: list[str], timeout: int) -> Any:
    """The DeleteTopics body at ``version`` (v6+ name topics in ``topics``, older in ``topic_names``)."""
    R = API_BY_KEY[_DELETE_TOPICS].Request
    if version >= 6:
        return R(topics=[R.DeleteTopicState(name=n) for n in names], timeout_ms=timeout)
    return R(topic_names=names, timeout_ms=timeout)


def create_partitions_request(new_totals: Mapping[str, int], timeout: int, validate_only: bool) -> Any:
    """The CreatePartitions body growing ``{topic: total partition count}``."""
    R = API_BY_KEY[_CREATE_PARTITIONS].Request
    return R(
        topics=[R.CreatePartitionsTopic(name=t, count=n, assignments=None) for t, n in new_totals.items()],
        timeout_ms=timeout,
        validate_only=validate_only,
    )


def known_controller(metadata: MetadataCache, what: str) -> int:
    """The controller's id from fresh metadata; a retriable error while the cluster has none."""
    controller = metadata.controller_id
    if controller < 0:
        raise KafkaClientError(f"{what}: the cluster has no controller right now", retriable=True)
    return controller


def check_controller_answer(api_key: int, response: Any, what: str, controller: int) -> None:
    """Raise a retriable error when a controller request was answered NOT_CONTROLLER (the controller moved)."""
    if ErrorCode.NOT_CONTROLLER in result_codes(api_key, response):
        raise KafkaClientError(f"{what}: broker {controller} is no longer the controller", retriable=True)


def check_leaders(info: TopicInfo, min_partitions: int) -> None:
    """Raise a retriable error until ``info`` shows ``min_partitions`` partitions, each with a leader."""
    if len(info.partitions) < min_partitions or any(p.leader < 0 for p in info.partitions.values()):
        raise KafkaClientError(
            f"topic {info.name} has partitions without a leader yet", retriable=True, topic=info.name
        )


def check_gone(metadata: MetadataCache, topic: str) -> None:
    """After a Metadata refresh of a deleted ``topic``: a retriable error while it is still listed, else the
    topic is forgotten."""
    info = metadata.topic(topic)
    if info is not None and info.error_code != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        raise KafkaClientError(f"topic {topic} is still listed after its deletion", retriable=True, topic=topic)
    metadata.forget(topic)


def describe_topics_result(topics: Mapping[str, TopicInfo], wanted: list[str] | None) -> dict[str, TopicDescription]:
    """``describe_topics``'s answer from the metadata's ``topics`` (``wanted`` None: every topic); raises
    ``AdminOperationError`` naming each unknown or failed topic."""
    out: dict[str, TopicDescription] = {}
    errors = {}
    for name in wanted if wanted is not None else sorted(topics):
        info = topics.get(name)
        if info is None or info.error_code:
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if info is None else info.error_code
            errors[name] = error_for_code(code, "DescribeTopics", topic=name)
            continue
        partitions = tuple(
            PartitionDescription(
                p.partition, p.leader, p.leader_epoch, p.replicas, p.isr, p.offline_replicas, p.error_code
            )
            for _, p in sorted(info.partitions.items())
        )
        out[name] = TopicDescription(name, partitions, info.is_internal, info.topic_id)
    if errors:
        raise AdminOperationError("DescribeTopics", errors)
    return out


def topic_configs_request(topic: str, keys: Iterable[str] | None) -> Any:
    """The DescribeConfigs body for one topic's configs (``keys`` None: all)."""
    R = API_BY_KEY[_DESCRIBE_CONFIGS].Request
    return R(
        resources=[
            R.DescribeConfigsResource(
                resource_type=_TOPIC_RESOURCE,
                resource_name=topic,
                configuration_keys=None if keys is None else list(keys),
            )
        ],
        include_synonyms=False,
        include_documentation=False,
    )


def topic_configs_answer(response: Any, topic: str) -> dict[str, str | None]:
    """``{name: value}`` of a DescribeConfigs answer for ``topic``; raises the resource's error."""
    out: dict[str, str | None] = {}
    for result in response.results:
        if result.error_code:
            raise error_for_code(result.error_code, "DescribeConfigs", topic=topic, detail=result.error_message)
        for entry in result.configs:
            out[entry.name] = entry.value
    return out
