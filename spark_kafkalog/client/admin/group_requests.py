"""The pure parts of the consumer-group calls: the requests ``GroupAdmin`` (blocking), ``AsyncGroupCalls`` and
``AIOAdminClient`` (asyncio) send - ListGroups, DescribeGroups, DeleteGroups, OffsetCommit (v0-9, topics by name),
OffsetFetch (v0-9; v8+ in the one-group-per-entry shape of KIP-709), OffsetDelete - the readers of their answers,
the group errors (``group_error``; ``client_group_error`` names the principal and forgets a moved coordinator),
the result types (``OffsetAndMetadata``, ``GroupListing``, ``GroupDescription``, ``MemberDescription``,
``PartitionLag``) and the lag rows. No I/O; thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

__all__ = [
    "COORDINATOR_MOVED",
    "FETCH_BATCHED_FROM",
    "OFFSETS_BY_NAME_MAX",
    "GroupDescription",
    "GroupErrorFactory",
    "GroupListing",
    "MemberDescription",
    "OffsetAndMetadata",
    "PartitionLag",
    "client_group_error",
    "committed_offsets",
    "delete_groups_answer",
    "delete_groups_request",
    "describe_groups_answer",
    "describe_groups_request",
    "group_error",
    "lag_rows",
    "list_groups_answer",
    "list_groups_request",
    "offset_commit_request",
    "offset_delete_answer",
    "offset_delete_request",
    "offset_fetch_answer",
    "offset_fetch_request",
    "offset_fetch_topics",
    "raise_partition_errors",
    "topic_partitions",
]

FETCH_BATCHED_FROM = 8  # OffsetFetch v8+: groups in and out (KIP-709)
OFFSETS_BY_NAME_MAX = 9  # OffsetCommit/OffsetFetch v10 name topics by id, which this client does not send
_STORAGES = ("kafka", "zookeeper")
COORDINATOR_MOVED = {
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_COORDINATOR,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
}


@dataclass(frozen=True)
class OffsetAndMetadata:
    offset: int
    metadata: str | None = None
    leader_epoch: int = -1


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    protocol_type: str
    state: str | None  # None from brokers that do not report it (ListGroups < v4)


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    metadata: bytes
    assignment: bytes  # the protocol's assignment bytes (``consumer``: a ConsumerProtocolAssignment)


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberDescription, ...] = field(default=())
    coordinator: int = -1


@dataclass(frozen=True)
class PartitionLag:
    """Committed offset vs the partition's high watermark (``lag`` is None without a commit)."""

    topic_partition: TopicPartition
    committed: int | None
    log_end_offset: int

    @property
    def lag(self) -> int | None:
        return None if self.committed is None else max(self.log_end_offset - self.committed, 0)


def offset_fetch_topics(tps: Iterable[TopicPartition], topic_cls: Any) -> list[Any]:
    """OffsetFetch request topics (``name``, ``partition_indexes``) of ``tps``, in first-seen topic order."""
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return [topic_cls(name=t, partition_indexes=ps) for t, ps in by_topic.items()]


GroupErrorFactory = Callable[..., KafkaClientError]
"""``(code, what, group_id, detail=None, tp=None) -> KafkaClientError``: ``group_error`` or a client's wrapper of it
(``GroupAdmin._error`` also names the principal and forgets a moved coordinator)."""


def group_error(
    code: int, what: str, group_id: str, detail: str | None = None, tp: tuple[str, int] | None = None
) -> KafkaClientError:
    """The error of a group call answered ``code``, naming the group (and the partition ``tp``); the coordinator
    moving (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) is retriable."""
    if ErrorCode(code) != ErrorCode.GROUP_AUTHORIZATION_FAILED:  # that one names the group itself
        detail = f"group {group_id!r}" + (f": {detail}" if detail else "")
    error = error_for_code(
        code,
        what,
        detail=detail,
        topic=None if tp is None else tp[0],
        partition=None if tp is None else tp[1],
        resource_name=group_id if ErrorCode(code) == ErrorCode.GROUP_AUTHORIZATION_FAILED else None,
    )
    if ErrorCode(code) in COORDINATOR_MOVED:
        error.retriable = True
    return error


def client_group_error(
    client: Any,
    forget_coordinator: Callable[[str], None],
    code: int,
    what: str,
    group_id: str,
    detail: str | None = None,
    tp: tuple[str, int] | None = None,
) -> KafkaClientError:
    """``group_error`` as a client raises it: naming the client's principal (``client.name_principal``), the
    group's cached coordinator forgotten when it moved."""
    error = group_error(code, what, group_id, detail, tp)
    client.name_principal(error)
    if ErrorCode(code) in COORDINATOR_MOVED:
        forget_coordinator(group_id)
    return error


def raise_partition_errors(group_id: str, what: str, topics: Any, error: GroupErrorFactory = group_error) -> None:
    """Raise (``error``) for the first partition of an OffsetCommit/OffsetDelete answer's ``topics`` that failed."""
    for t in topics:
        for p in t.partitions:
            if p.error_code != ErrorCode.NONE:
                tp = (t.name, p.partition_index)
                raise error(p.error_code, what, group_id, f"{t.name}-{p.partition_index}", tp)


def offset_commit_request(
    group_id: str,
    offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
    *,
    generation: int = -1,
    member_id: str = "",
    group_instance_id: str | None = None,
) -> Any:
    """The OffsetCommit body for ``offsets`` (valid at v0-9, which name topics; v0 ignores the membership)."""
    R = API_BY_KEY[ApiKey.OFFSET_COMMIT].Request
    by_topic: dict[str, list[Any]] = {}
    for tp, value in sorted(offsets.items()):
        om = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(int(value))
        by_topic.setdefault(tp.topic, []).append(
            R.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                partition_index=tp.partition,
                committed_offset=om.offset,
                committed_leader_epoch=om.leader_epoch,
                commit_timestamp=-1,
                committed_metadata=om.metadata,
            )
        )
    return R(
        group_id=group_id,
        generation_id_or_member_epoch=generation,
        member_id=member_id,
        group_instance_id=group_instance_id,
        retention_time_ms=-1,
        topics=[R.OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
    )


def offset_fetch_request(
    version: int,
    group_id: str,
    wanted: list[TopicPartition] | None,
    *,
    member_id: str | None = None,
    member_epoch: int = -1,
    require_stable: bool = False,
) -> Any:
    """The OffsetFetch body at ``version`` for ``wanted`` (None: every partition, v2+); v8+ in the batched shape
    with the KIP-848 member id and epoch (v9 checks them)."""
    R = API_BY_KEY[ApiKey.OFFSET_FETCH].Request
    Group = R.OffsetFetchRequestGroup
    if version >= FETCH_BATCHED_FROM:
        topics = None if wanted is None else offset_fetch_topics(wanted, Group.OffsetFetchRequestTopics)
        group = Group(group_id=group_id, member_id=member_id, member_epoch=member_epoch, topics=topics)
        return R(groups=[group], require_stable=require_stable)
    topics = None if wanted is None else offset_fetch_topics(wanted, R.OffsetFetchRequestTopic)
    return R(group_id=group_id, topics=topics, require_stable=require_stable)


def offset_fetch_answer(
    response: Any, version: int, group_id: str, error: GroupErrorFactory = group_error
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The committed offsets of an OffsetFetch answer at ``version``; raises (``error``) on a group or partition
    error."""
    if version >= FETCH_BATCHED_FROM:
        (group,) = response.groups
        if group.error_code != ErrorCode.NONE:
            raise error(group.error_code, "OffsetFetch", group_id)
        return committed_offsets(group_id, group.topics, error, with_epoch=True)
    if version >= 2 and response.error_code != ErrorCode.NONE:
        raise error(response.error_code, "OffsetFetch", group_id)
    return committed_offsets(group_id, response.topics, error, with_epoch=version >= 5)


def committed_offsets(
    group_id: str,
    topics: Any,
    error: GroupErrorFactory = group_error,
    *,
    with_epoch: bool,
    unknown_is_absent: bool = False,
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The committed offsets of an OffsetFetch answer's topics; raises on the first partition error.
    ``unknown_is_absent``: UNKNOWN_TOPIC_OR_PARTITION with offset -1 means "nothing committed" (what
    Kafka's OffsetFetch v0 answers for a missing ZooKeeper node)."""
    out = {}
    for t in topics:
        for p in t.partitions:
            code = p.error_code
            if unknown_is_absent and code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and p.committed_offset < 0:
                continue
            if code != ErrorCode.NONE:
                raise error(code, "OffsetFetch", group_id, f"{t.name}-{p.partition_index}", (t.name, p.partition_index))
            if p.committed_offset >= 0:
                epoch = p.committed_leader_epoch if with_epoch else -1
                out[TopicPartition(t.name, p.partition_index)] = OffsetAndMetadata(
                    p.committed_offset, p.metadata, epoch
                )
    return out


# the pure parts of the group calls, shared with the asyncio admin client (``client.aio.admin``) ---------------
def list_groups_request(states: Iterable[str] | None) -> Any:
    """The ListGroups body (``states``: the lower-cased state filter, ListGroups v4+; None or empty: all)."""
    R = API_BY_KEY[ApiKey.LIST_GROUPS].Request
    return R(states_filter=sorted(states or []), types_filter=[])


def list_groups_answer(response: Any, version: int, states: set[str] | None, node: int) -> list[GroupListing]:
    """The groups broker ``node`` listed, in ``states`` (lower-cased; None: all); raises its error."""
    if response.error_code != ErrorCode.NONE:
        raise error_for_code(response.error_code, "ListGroups", broker=str(node))
    out = []
    for g in response.groups:
        state = g.group_state if version >= 4 else None
        if states is not None and state is not None and state.lower() not in states:
            continue
        out.append(GroupListing(g.group_id, g.protocol_type, state))
    return out


def describe_groups_request(group_id: str) -> Any:
    """The DescribeGroups body for one group."""
    R = API_BY_KEY[ApiKey.DESCRIBE_GROUPS].Request
    return R(groups=[group_id], include_authorized_operations=False)


def describe_groups_answer(
    response: Any, version: int, group_id: str, coordinator: int, error: GroupErrorFactory = group_error
) -> GroupDescription:
    """The ``GroupDescription`` of a DescribeGroups answer for one group; raises (``error``) its error."""
    (g,) = response.groups
    if g.error_code != ErrorCode.NONE:
        raise error(g.error_code, "DescribeGroups", group_id)
    members = tuple(
        MemberDescription(
            m.member_id,
            m.group_instance_id if version >= 4 else None,
            m.client_id,
            m.client_host,
            bytes(m.member_metadata),
            bytes(m.member_assignment),
        )
        for m in g.members
    )
    return GroupDescription(g.group_id, g.group_state, g.protocol_type, g.protocol_data, members, coordinator)


def delete_groups_request(group_id: str) -> Any:
    """The DeleteGroups body for one group."""
    return API_BY_KEY[ApiKey.DELETE_GROUPS].Request(groups_names=[group_id])


def delete_groups_answer(response: Any, group_id: str, error: GroupErrorFactory = group_error) -> None:
    """Raise (``error``) the DeleteGroups answer's error for one group (GROUP_NOT_EMPTY, GROUP_ID_NOT_FOUND)."""
    (result,) = response.results
    if result.error_code != ErrorCode.NONE:
        raise error(result.error_code, "DeleteGroups", group_id)


def offset_delete_request(group_id: str, partitions: Iterable[TopicPartition]) -> Any:
    """The OffsetDelete body for ``partitions`` of ``group_id``."""
    R = API_BY_KEY[ApiKey.OFFSET_DELETE].Request
    by_topic: dict[str, list[Any]] = {}
    for tp in sorted(set(partitions)):
        by_topic.setdefault(tp.topic, []).append(
            R.OffsetDeleteRequestTopic.OffsetDeleteRequestPartition(partition_index=tp.partition)
        )
    return R(
        group_id=group_id, topics=[R.OffsetDeleteRequestTopic(name=t, partitions=ps) for t, ps in by_topic.items()]
    )


def offset_delete_answer(response: Any, group_id: str, error: GroupErrorFactory = group_error) -> None:
    """Raise (``error``) the OffsetDelete answer's group error or its first partition error."""
    if response.error_code != ErrorCode.NONE:
        raise error(response.error_code, "OffsetDelete", group_id)
    raise_partition_errors(group_id, "OffsetDelete", response.topics, error)


def topic_partitions(metadata: Any, names: Iterable[str], what: str) -> set[TopicPartition]:
    """Every partition of ``names`` in the (just refreshed) ``MetadataCache``; raises naming an unknown or
    failed topic."""
    out: set[TopicPartition] = set()
    for name in names:
        info = metadata.topic(name)
        if info is None or info.error_code != ErrorCode.NONE:
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if info is None else info.error_code
            raise error_for_code(code, what, topic=name)
        out.update(TopicPartition(name, p) for p in info.partitions)
    return out


def lag_rows(
    committed: Mapping[TopicPartition, OffsetAndMetadata],
    tps: Iterable[TopicPartition],
    ends: Mapping[TopicPartition, int],
) -> list[PartitionLag]:
    """``group_lag``'s rows, sorted by topic and partition."""
    return [PartitionLag(tp, committed[tp].offset if tp in committed else None, ends[tp]) for tp in sorted(tps)]
