"""Leader elections for ``AdminClient`` (ElectLeaders, key 43, v0-2; KIP-183 and KIP-460), as Kafka's
``Admin.electLeaders``: sent to the controller named by Metadata (a top-level NOT_CONTROLLER refreshes it and
retries). ``election_type``: ``"preferred"`` (the first assigned replica, when live and in the ISR) or
``"unclean"`` (a partition without a live leader gets the first live replica, even one outside the ISR; needs
v1). ``partitions`` None elects every partition; the broker then answers only those that needed an election.

The result maps each partition answered to None (elected) or its ``KafkaClientError`` (ELECTION_NOT_NEEDED,
PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, ...); a top-level
error (CLUSTER_AUTHORIZATION_FAILED without Alter on the cluster) is raised. Thread-safe like ``KafkaClient``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from spark_kafkalog.client.admin.admin_steps import AdminRequest, AdminSteps, drive, fixed
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

__all__ = ["ELECT_LEADERS", "ELECTION_TYPES", "elect_leaders", "elect_leaders_steps"]

ELECT_LEADERS = int(ApiKey.ELECT_LEADERS)
ELECTION_TYPES = {"preferred": 0, "unclean": 1}
"""Kafka's ``ElectionType`` by the name its tool takes (case-insensitive) -> the wire value."""

ControllerRequest = Callable[..., tuple[int, Any, str]]
"""``AdminClient._controller_request``: (api key, build(version), min_version=, timeout_ms=, what=) ->
(version, response, peer)."""


def elect_leaders(
    send: ControllerRequest, election_type: str, partitions: Iterable[TopicPartition] | None, timeout_ms: int
) -> dict[TopicPartition, KafkaClientError | None]:
    """``elect_leaders_steps`` driven by the blocking ``send``."""
    return drive(elect_leaders_steps(election_type, partitions, timeout_ms), send)


def elect_leaders_steps(
    election_type: str, partitions: Iterable[TopicPartition] | None, timeout_ms: int
) -> AdminSteps[dict[TopicPartition, KafkaClientError | None]]:
    """Send one ElectLeaders; see the module docstring."""
    kind = ELECTION_TYPES.get(election_type.lower())
    if kind is None:
        raise ValueError(f"election type must be one of {sorted(ELECTION_TYPES)}, not {election_type!r}")
    R = API_BY_KEY[ELECT_LEADERS].Request
    named = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in dict.fromkeys(TopicPartition(*tp) for tp in partitions):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        named = [R.TopicPartitions(topic=t, partitions=ps) for t, ps in by_topic.items()]
    body = R(election_type=kind, topic_partitions=named, timeout_ms=timeout_ms)
    _, response, peer = yield AdminRequest(
        ELECT_LEADERS, fixed(body), "ElectLeaders", min_version=1 if kind else 0, timeout_ms=timeout_ms
    )
    if getattr(response, "error_code", 0):
        raise error_for_code(response.error_code, "ElectLeaders", broker=peer)
    out: dict[TopicPartition, KafkaClientError | None] = {}
    for t in response.replica_election_results:
        for p in t.partition_result:
            tp = TopicPartition(t.topic, p.partition_id)
            out[tp] = (
                None
                if not p.error_code
                else error_for_code(
                    p.error_code,
                    "ElectLeaders",
                    broker=peer,
                    topic=t.topic,
                    partition=p.partition_id,
                    detail=p.error_message,
                )
            )
    return out
