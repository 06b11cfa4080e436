"""Helpers shared by the group handlers: the coordinator of a request, the client host as Kafka shows it, the
offsets of an OffsetCommit or TxnOffsetCommit request, committed metadata as each client means it, and the
authorization checks they share (Kafka's ``KafkaApis``: a group is checked before anything else, then each
topic once, before its existence, so an unauthorized principal never learns whether a topic exists), and the
successful answers ConsumerGroupHeartbeat and ShareGroupHeartbeat share, and the described group of
ConsumerGroupDescribe and ShareGroupDescribe.

Committed metadata is stored and answered byte for byte, as Kafka does, for every client but those in
``C_STRING_METADATA_CLIENTS`` (known by the software name they give in ApiVersions v3+).
confluent-kafka-python (every version up to at least 2.16.1) treats metadata as a C string at both ends:
it commits ``strlen + 1`` bytes, a trailing NUL included, and it reads fetched metadata up to the first NUL
from a copy librdkafka makes of exactly the bytes on the wire, unterminated. Against Kafka its metadata
therefore reads back as ``'m1\\x00'`` in every other client, and metadata any other client committed reads
back in it with whatever bytes follow the copy in memory (``'m1\\x020&V'``) or a UnicodeDecodeError. For
these clients one trailing NUL is removed from committed metadata (nothing is lost: ``strlen`` stops at the
first NUL, so they never send one of their own) and one is added to fetched metadata, so every client reads
exactly the string that was committed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from broker.coordinator.offset_store import CommittedOffset
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType


def coordinator(ctx):
    """The broker's group coordinator."""
    return ctx.services.group_coordinator


def client_host(ctx) -> str:
    """``/<address>`` of the client, as Kafka reports member hosts."""
    host = ctx.peer.rsplit(":", 1)[0] if ctx.peer.count(":") == 1 or ctx.peer.startswith("[") else ctx.peer
    return "/" + host.strip("[]")


def group_authorized(ctx, operation: AclOperation, group_id: str) -> bool:
    """Whether the request's principal may do ``operation`` (READ, DESCRIBE or DELETE) on group ``group_id``."""
    return bool(ctx.authorize(operation, ResourceType.GROUP, group_id))


def authorized_topics(ctx, operation: AclOperation, names: Iterable[str]) -> frozenset[str]:
    """The distinct topics of ``names`` the principal may do ``operation`` on (each asked once, as Kafka's
    ``filterByAuthorized``)."""
    return frozenset(name for name in set(names) if ctx.authorize(operation, ResourceType.TOPIC, name))


def subscription_authorized(ctx, subscribed_topic_names: Iterable[str] | None) -> bool:
    """Whether the principal may DESCRIBE every topic a ConsumerGroupHeartbeat / ShareGroupHeartbeat subscribes to
    (no names: nothing to check)."""
    if not subscribed_topic_names:
        return True
    names = set(subscribed_topic_names)
    return authorized_topics(ctx, AclOperation.DESCRIBE, names) == names


def heartbeat_response(resp: Any, outcome: Any) -> Any:
    """The successful ConsumerGroupHeartbeat / ShareGroupHeartbeat response (class ``resp``) for a coordinator
    ``outcome``: member id and epoch, heartbeat interval, and the assignment (topic id -> partitions; None
    unchanged) sorted by topic id and partition, topics without partitions left out."""
    assignment = None
    if outcome.assignment is not None:
        tp = resp.Assignment.TopicPartitions
        assignment = resp.Assignment(
            topic_partitions=[
                tp(topic_id=topic_id, partitions=sorted(parts))
                for topic_id, parts in sorted(outcome.assignment.items())
                if parts
            ]
        )
    return resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        member_id=outcome.member_id,
        member_epoch=outcome.member_epoch,
        heartbeat_interval_ms=outcome.heartbeat_interval_ms,
        assignment=assignment,
    )


def describe_error(described: Any, group_id: str, code: ErrorCode, message: str | None = None) -> Any:
    """A ConsumerGroupDescribe / ShareGroupDescribe ``DescribedGroup`` (class ``described``) with an error."""
    return described(
        error_code=code, error_message=message, group_id=group_id, group_state="", group_epoch=0,
        assignment_epoch=0, assignor_name="",
    )  # fmt: skip


def described_assignment(assignment: Any, topics: Iterable[Any]) -> Any:
    """A described member's ``Assignment`` (class ``assignment``) of its described topic-partitions."""
    tp = assignment.TopicPartitions
    return assignment(
        topic_partitions=[
            tp(topic_id=t.topic_id, topic_name=t.topic_name, partitions=list(t.partitions)) for t in topics
        ]
    )


def described_group(
    ctx, described: Any, group_id: str, d: Any, members: list[Any], topics: set[str], with_operations: bool
) -> Any:
    """The ConsumerGroupDescribe / ShareGroupDescribe ``DescribedGroup`` of description ``d`` with ``members``;
    TOPIC_AUTHORIZATION_FAILED when the principal may not DESCRIBE one of ``topics`` (those the members'
    assignments name), as Kafka. With ``with_operations`` the principal's authorized operations on the group."""
    if authorized_topics(ctx, AclOperation.DESCRIBE, topics) != topics:
        return describe_error(
            described,
            group_id,
            ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            "The group has described topic(s) that the client is not authorized to describe.",
        )
    out = described(
        error_code=ErrorCode.NONE,
        group_id=group_id,
        group_state=d.state.value,
        group_epoch=d.group_epoch,
        assignment_epoch=d.assignment_epoch,
        assignor_name=d.assignor_name,
        members=members,
    )
    if with_operations:
        out.authorized_operations = ctx.authorized_operations(ResourceType.GROUP, group_id)
    return out


def client_id(ctx) -> str:
    return ctx.header.client_id or ""


#: ApiVersions ``client_software_name``s of clients whose committed metadata is a C string (module docstring)
C_STRING_METADATA_CLIENTS = frozenset({"confluent-kafka-python"})


def metadata_from_client(ctx, metadata: str | None) -> str:
    """The metadata a commit request means: null is empty (as in Kafka); a C-string client's NUL removed."""
    if not metadata:
        return ""
    if ctx.client.name in C_STRING_METADATA_CLIENTS and metadata.endswith("\x00"):
        return metadata[:-1]
    return metadata


def metadata_for_client(ctx, metadata: str) -> str:
    """Committed ``metadata`` as an OffsetFetch answer gives it to this connection's client."""
    if ctx.client.name in C_STRING_METADATA_CLIENTS:
        return metadata + "\x00"
    return metadata


def requested_offsets(
    ctx, topics: Any, commit_timestamp: Callable[[Any], int], expire_timestamp: int = -1
) -> tuple[dict[tuple[str, int], CommittedOffset], dict[tuple[str, int], ErrorCode]]:
    """The ``(topic, partition) -> CommittedOffset`` of a commit request's ``topics`` to hand to the group
    coordinator, and the error of every other requested partition: TOPIC_AUTHORIZATION_FAILED for topics the
    principal may not READ (checked first, so it does not learn whether they exist), then
    UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist. ``commit_timestamp(partition)`` gives each
    offset's commit time."""
    known = ctx.services.metadata.topics
    readable = authorized_topics(ctx, AclOperation.READ, (t.name for t in topics))
    offsets: dict[tuple[str, int], CommittedOffset] = {}
    errors: dict[tuple[str, int], ErrorCode] = {}
    for t in topics:
        topic = known.get(t.name)
        for p in t.partitions:
            tp = (t.name, p.partition_index)
            if t.name not in readable:
                errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            if topic is None or p.partition_index not in topic.replicas:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            offsets[tp] = CommittedOffset(
                p.committed_offset,
                p.committed_leader_epoch,
                metadata_from_client(ctx, p.committed_metadata),
                commit_timestamp(p),
                expire_timestamp,
            )
    return offsets, errors
