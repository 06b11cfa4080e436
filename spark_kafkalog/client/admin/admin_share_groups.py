"""Share groups (KIP-932) for ``AdminClient`` and ``AIOAdminClient``, as Kafka's ``Admin.describeShareGroups``,
``listShareGroupOffsets``, ``alterShareGroupOffsets`` and ``deleteShareGroupOffsets``.

ShareGroupDescribe (key 77, v1), DescribeShareGroupOffsets (key 90, v0-1), AlterShareGroupOffsets (91) and
DeleteShareGroupOffsets (92) go to the group's coordinator
(FindCoordinator, moves retried as every group call). A description carries the state (Empty, Stable, Dead), the
epochs, the assignor and each member's client, subscription and assigned partitions. Offsets are the start offset
(SPSO) of each share-partition (-1: none chosen yet) with its leader epoch and, from v1, the lag the coordinator
knows (None when it does not). Group-level errors raise ``KafkaClientError`` (GROUP_ID_NOT_FOUND for a group that
is not a share group, NON_EMPTY_GROUP when altering or deleting offsets of a group with members); partition errors
are returned per partition (per topic for deletions). The request and answer functions are pure,
shared by both clients.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from spark_kafkalog.client.admin.admin_errors import AdminOperationError
from spark_kafkalog.client.admin.group_requests import GroupErrorFactory, group_error
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

__all__ = [
    "ShareGroupDescription",
    "ShareGroupMember",
    "SharePartitionOffset",
    "alter_share_offsets_answer",
    "alter_share_offsets_request",
    "delete_share_offsets_answer",
    "delete_share_offsets_request",
    "describe_share_group_answer",
    "describe_share_group_request",
    "describe_share_groups",
    "list_share_group_offsets",
    "raise_failures",
    "share_offsets_answer",
    "share_offsets_request",
]

_DESCRIBE = ApiKey.SHARE_GROUP_DESCRIBE
_OFFSETS = ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS


@dataclass(frozen=True)
class ShareGroupMember:
    member_id: str
    client_id: str
    host: str
    member_epoch: int
    rack_id: str | None
    subscribed_topic_names: tuple[str, ...]
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class ShareGroupDescription:
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple[ShareGroupMember, ...]
    coordinator: int = -1


@dataclass(frozen=True)
class SharePartitionOffset:
    """A share-partition's start offset (-1: not chosen yet), leader epoch, lag (None: unknown) and error."""

    start_offset: int
    leader_epoch: int = -1
    lag: int | None = None
    error: KafkaClientError | None = None


# pure parts -------------------------------------------------------------------------------------------------------
K = TypeVar("K")


def raise_failures(what: str, results: Mapping[K, KafkaClientError | None]) -> None:
    """Raise one ``AdminOperationError`` naming every failed entry of ``results`` (None: succeeded)."""
    errors = {k: e for k, e in results.items() if e is not None}
    if errors:
        raise AdminOperationError(what, errors)


def _check_group(entry: Any, what: str, group_id: str, error: GroupErrorFactory) -> None:
    """Raise (``error``) the group-level error of an answer's ``entry`` (``error_code``, ``error_message``)."""
    if entry.error_code != ErrorCode.NONE:
        raise error(entry.error_code, what, group_id, entry.error_message)


def _outcome(
    code: int, what: str, message: str | None, topic: str, partition: int | None = None
) -> KafkaClientError | None:
    """None for NONE, else the error of a topic's or partition's ``code``."""
    if code == ErrorCode.NONE:
        return None
    return error_for_code(code, what, topic=topic, partition=partition, detail=message)


def describe_share_group_request(group_id: str) -> Any:
    return API_BY_KEY[_DESCRIBE].Request(group_ids=[group_id], include_authorized_operations=False)


def describe_share_group_answer(
    response: Any, group_id: str, coordinator: int, error: GroupErrorFactory = group_error
) -> ShareGroupDescription:
    """The description in a ShareGroupDescribe answer for one group; raises (``error``) its error."""
    (g,) = response.groups
    _check_group(g, "ShareGroupDescribe", group_id, error)
    members = tuple(
        ShareGroupMember(
            m.member_id,
            m.client_id,
            m.client_host,
            m.member_epoch,
            m.rack_id,
            tuple(m.subscribed_topic_names),
            tuple(sorted(TopicPartition(t.topic_name, p) for t in m.assignment.topic_partitions for p in t.partitions)),
        )
        for m in g.members
    )
    return ShareGroupDescription(
        g.group_id, g.group_state, g.group_epoch, g.assignment_epoch, g.assignor_name, members, coordinator
    )


def share_offsets_request(group_id: str, partitions: Iterable[TopicPartition] | None) -> Any:
    """DescribeShareGroupOffsets for one group: every partition with share state (None) or the ones named."""
    Req = API_BY_KEY[_OFFSETS].Request
    G = Req.DescribeShareGroupOffsetsRequestGroup
    if partitions is None:
        return Req(groups=[G(group_id=group_id, topics=None)])
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(set(partitions)):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    topics = [G.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps) for t, ps in by_topic.items()]
    return Req(groups=[G(group_id=group_id, topics=topics)])


def share_offsets_answer(
    response: Any, version: int, group_id: str, error: GroupErrorFactory = group_error
) -> dict[TopicPartition, SharePartitionOffset]:
    """The offsets of a DescribeShareGroupOffsets answer for one group; raises (``error``) a group error."""
    (g,) = response.groups
    _check_group(g, "DescribeShareGroupOffsets", group_id, error)
    out = {}
    for t in g.topics:
        for p in t.partitions:
            tp = TopicPartition(t.topic_name, p.partition_index)
            failure = _outcome(p.error_code, "DescribeShareGroupOffsets", p.error_message, tp.topic, tp.partition)
            if failure is not None:
                out[tp] = SharePartitionOffset(-1, error=failure)
            else:
                lag = p.lag if version >= 1 and p.lag >= 0 else None
                out[tp] = SharePartitionOffset(p.start_offset, p.leader_epoch, lag)
    return dict(sorted(out.items()))


def alter_share_offsets_request(group_id: str, offsets: dict[TopicPartition, int]) -> Any:
    Req = API_BY_KEY[ApiKey.ALTER_SHARE_GROUP_OFFSETS].Request
    T = Req.AlterShareGroupOffsetsRequestTopic
    by_topic: dict[str, list[Any]] = {}
    for tp, offset in sorted(offsets.items()):
        by_topic.setdefault(tp.topic, []).append(
            T.AlterShareGroupOffsetsRequestPartition(partition_index=tp.partition, start_offset=offset)
        )
    return Req(group_id=group_id, topics=[T(topic_name=t, partitions=ps) for t, ps in by_topic.items()])


def alter_share_offsets_answer(
    response: Any, group_id: str, error: GroupErrorFactory = group_error
) -> dict[TopicPartition, KafkaClientError | None]:
    """Each partition's outcome (None: altered); raises (``error``) the request's error."""
    _check_group(response, "AlterShareGroupOffsets", group_id, error)
    return {
        TopicPartition(t.topic_name, p.partition_index): _outcome(
            p.error_code, "AlterShareGroupOffsets", p.error_message, t.topic_name, p.partition_index
        )
        for t in response.responses
        for p in t.partitions
    }


def delete_share_offsets_request(group_id: str, topics: Iterable[str]) -> Any:
    Req = API_BY_KEY[ApiKey.DELETE_SHARE_GROUP_OFFSETS].Request
    T = Req.DeleteShareGroupOffsetsRequestTopic
    return Req(group_id=group_id, topics=[T(topic_name=t) for t in dict.fromkeys(topics)])


def delete_share_offsets_answer(
    response: Any, group_id: str, error: GroupErrorFactory = group_error
) -> dict[str, KafkaClientError | None]:
    """Each topic's outcome (None: deleted); raises (``error``) the request's error."""
    _check_group(response, "DeleteShareGroupOffsets", group_id, error)
    return {
        t.topic_name: _outcome(t.error_code, "DeleteShareGroupOffsets", t.error_message, t.topic_name)
        for t in response.responses
    }


# the blocking client's calls (``GroupAdmin``) -------------------------------------------------------------------------
def describe_share_groups(groups: Any, group_ids: Iterable[str]) -> dict[str, ShareGroupDescription]:
    """Each share group's description, in the order asked (``groups``: the ``AdminClient``'s ``GroupAdmin``)."""
    out = {}
    for group_id in dict.fromkeys(group_ids):

        def check(response: Any, version: int, group_id: str = group_id) -> ShareGroupDescription:
            return describe_share_group_answer(response, group_id, groups.coordinator(group_id), groups._error)

        out[group_id] = groups._group_call(
            group_id,
            _DESCRIBE,
            lambda version, group_id=group_id: describe_share_group_request(group_id),
            check,
            "ShareGroupDescribe",
        )
    return out


def list_share_group_offsets(
    groups: Any, group_id: str, partitions: Iterable[TopicPartition] | None = None
) -> dict[TopicPartition, SharePartitionOffset]:
    wanted = None if partitions is None else list(partitions)
    return groups._group_call(
        group_id,
        _OFFSETS,
        lambda version: share_offsets_request(group_id, wanted),
        lambda response, version: share_offsets_answer(response, version, group_id, groups._error),
        "DescribeShareGroupOffsets",
    )


def alter_share_group_offsets(
    groups: Any, group_id: str, offsets: dict[TopicPartition, int]
) -> dict[TopicPartition, KafkaClientError | None]:
    return groups._group_call(
        group_id,
        ApiKey.ALTER_SHARE_GROUP_OFFSETS,
        lambda version: alter_share_offsets_request(group_id, offsets),
        lambda response, version: alter_share_offsets_answer(response, group_id, groups._error),
        "AlterShareGroupOffsets",
    )


def delete_share_group_offsets(groups: Any, group_id: str, topics: Iterable[str]) -> dict[str, KafkaClientError | None]:
    names = list(topics)
    return groups._group_call(
        group_id,
        ApiKey.DELETE_SHARE_GROUP_OFFSETS,
        lambda version: delete_share_offsets_request(group_id, names),
        lambda response, version: delete_share_offsets_answer(response, group_id, groups._error),
        "DeleteShareGroupOffsets",
    )
