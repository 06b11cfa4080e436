"""OffsetFetch (key 9), v0-10: a group's committed offsets (-1 with empty metadata when none).

v0 reads ZooKeeper's ``/consumers/<group>/offsets/<topic>/<partition>`` on any broker, without the group
coordinator (Kafka 0.8.2's storage; the node holds the offset as decimal ASCII, no metadata):
UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist and, as Kafka 0.8.2-2.x, with offset -1 for a
partition without a node (nothing committed), INVALID_GROUP_ID for a group id that cannot be one path
component, UNKNOWN_SERVER_ERROR when ZooKeeper is unreachable. v1+ ask the group's coordinator, which answers from its cache of ``__consumer_offsets``
(never ZooKeeper). v2+: null topics means every partition the group committed, and group errors
(NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) go into the top-level error code; v0-1 carry them per
partition. v8+ ask for several groups at once: one ``groups`` entry per requested group, in request order,
each with its own error code (a failed group has no topics) and its own null-topics meaning. v9's
``member_id``/``member_epoch`` are for KIP-848 consumer groups: unless the member id is null/empty with epoch -1
(admin tools), the member must be in the group (UNKNOWN_MEMBER_ID) at that epoch (STALE_MEMBER_EPOCH), the
group's error; classic groups ignore them, as Kafka does.
``require_stable`` (v7+): a partition with a transactional offset (TxnOffsetCommit) whose transaction has
not ended is answered UNSTABLE_OFFSET_COMMIT (retriable), as Kafka. Committed metadata is answered as
committed, byte for byte, except to clients that read it as a C string (``_groups``: confluent-kafka-python
gets a terminating NUL added).
v10 (Kafka 4.x's consumers) names topics by id, in and out: a requested id is named from this broker's metadata
after the group is authorized, an id no topic has is UNKNOWN_TOPIC_ID for each requested partition (after the
group's other topics); a null-topics answer leaves out topics that no longer exist (they have no id).

Authorization (Kafka's ``fetchOffsets``; v8+ per group): DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED
(top-level from v2, per requested partition below, the group's entry from v8); then DESCRIBE on each
requested topic, else its partitions TOPIC_AUTHORIZATION_FAILED with offset -1 (checked before existence, and
the coordinator is asked only for the others); a null-topics (every partition) request silently leaves out the
topics the principal may not describe.
"""

from __future__ import annotations

from broker.cluster.zk_layout import check_group
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import authorized_topics, coordinator, group_authorized, metadata_for_client
from ._topic_ids import name_topics_by_id, topic_id_of

API_KEY = ApiKey.OFFSET_FETCH
VERSIONS = (0, 10)
TOPIC_IDS_FROM = 10
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
Topic = Resp.OffsetFetchResponseTopic
Part = Topic.OffsetFetchResponsePartition
Group = Resp.OffsetFetchResponseGroup
GroupTopic = Group.OffsetFetchResponseTopics
GroupPart = GroupTopic.OffsetFetchResponsePartitions
_BATCHED_FROM = 8


def _part(index: int, offset: int = -1, epoch: int = -1, metadata: str = "", code=ErrorCode.NONE, cls=Part):
    return cls(
        partition_index=index, committed_offset=offset, committed_leader_epoch=epoch, metadata=metadata, error_code=code
    )


def _requested(topics) -> list[tuple[str, int]] | None:
    return None if topics is None else [(t.name, p) for t in topics for p in t.partition_indexes]


def _denied(ctx, tps) -> set[tuple[str, int]]:
    """The partitions of ``tps`` whose topic the principal may not describe."""
    describable = authorized_topics(ctx, AclOperation.DESCRIBE, (t for t, _ in tps))
    return {tp for tp in tps if tp[0] not in describable}


def _fetch(ctx, group_id: str, requested, require_stable: bool):
    """(offsets found, partitions answered UNSTABLE_OFFSET_COMMIT, partitions answered
    TOPIC_AUTHORIZATION_FAILED) of an authorized group; raises ``GroupError``. ``found`` keeps the request's
    order and holds the denied partitions (as None); a null-topics request leaves undescribable topics out."""
    denied = _denied(ctx, requested) if requested is not None else set()
    asked = None if requested is None else [tp for tp in requested if tp not in denied]
    fetched = coordinator(ctx).fetch_offsets(group_id, asked)
    unstable = _unstable(ctx, group_id, fetched, requested is None) if require_stable else set()
    if requested is None:
        hidden = _denied(ctx, list(fetched))
        found = {tp: c for tp, c in fetched.items() if tp not in hidden}
        unstable -= hidden
    else:
        found = {tp: None if tp in denied else fetched.get(tp) for tp in requested}
    return found, unstable, denied


async def handle(ctx, request):
    if ctx.version >= _BATCHED_FROM:
        return Resp(
            throttle_time_ms=0,
            groups=[
                _fetch_group(ctx, g.group_id, g.topics, request.require_stable, _member(ctx, g)) for g in request.groups
            ],
        )
    requested = _requested(request.topics)
    if not group_authorized(ctx, AclOperation.DESCRIBE, request.group_id):
        return _group_error(ctx, requested, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if ctx.version == 0:
        return await _fetch_from_zookeeper(ctx, request.group_id, requested or [])
    try:
        found, unstable, denied = _fetch(ctx, request.group_id, requested, getattr(request, "require_stable", False))
    except GroupError as e:
        return _group_error(ctx, requested, e.error_code)
    topics = _topics(ctx, found, unstable=unstable, denied=denied)
    return Resp(throttle_time_ms=0, topics=topics, error_code=ErrorCode.NONE)


def _group_error(ctx, requested, code: ErrorCode):
    """A v0-7 answer for a group error: top-level from v2; below, every requested partition carries it."""
    if ctx.version >= 2:
        return Resp(throttle_time_ms=0, topics=[], error_code=code)
    found = dict.fromkeys(requested or [])
    return Resp(throttle_time_ms=0, topics=_topics(ctx, found, code), error_code=code)


def _unstable(ctx, group_id: str, found, every_partition: bool) -> set[tuple[str, int]]:
    """Partitions of ``found`` with pending transactional offsets (with ``every_partition``, added to
    ``found`` when it lacks them)."""
    pending = coordinator(ctx).unstable_offsets(group_id)
    if every_partition:
        for tp in pending:
            found.setdefault(tp, None)
    return pending & set(found)


def _member(ctx, g) -> tuple[str | None, int] | None:
    """v9+'s (member id, member epoch) of a requested group, for the KIP-848 check; None below v9."""
    return (g.member_id, g.member_epoch) if ctx.version >= 9 else None


def _fetch_group(ctx, group_id: str, topics, require_stable: bool = False, member=None):
    """One v8+ ``groups`` entry."""
    if not group_authorized(ctx, AclOperation.DESCRIBE, group_id):
        return Group(group_id=group_id, topics=[], error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if ctx.version >= TOPIC_IDS_FROM:
        return _fetch_group_by_id(ctx, group_id, topics, require_stable, member)
    try:
        if member is not None:
            coordinator(ctx).validate_offset_fetch(group_id, *member)
        found, unstable, denied = _fetch(ctx, group_id, _requested(topics), require_stable)
    except GroupError as e:
        return Group(group_id=group_id, topics=[], error_code=e.error_code)
    topics = _topics(ctx, found, topic_cls=GroupTopic, part_cls=GroupPart, unstable=unstable, denied=denied)
    return Group(group_id=group_id, topics=topics)


def _fetch_group_by_id(ctx, group_id: str, topics, require_stable: bool, member):
    """One v10+ ``groups`` entry: topics named by id (the group is authorized)."""
    metadata = ctx.services.metadata
    unknown = set() if topics is None else name_topics_by_id(metadata, topics)
    known = None if topics is None else [t for t in topics if t.topic_id not in unknown]
    try:
        if member is not None:
            coordinator(ctx).validate_offset_fetch(group_id, *member)
        found, unstable, denied = _fetch(ctx, group_id, _requested(known), require_stable)
    except GroupError as e:
        return Group(group_id=group_id, topics=[], error_code=e.error_code)
    answered = []
    for t in _topics(ctx, found, topic_cls=GroupTopic, part_cls=GroupPart, unstable=unstable, denied=denied):
        tid = topic_id_of(metadata, t.name)
        if tid is not None:  # a null-topics answer's topic deleted since its commit has no id: left out
            t.topic_id = tid
            answered.append(t)
    for t in topics or ():
        if t.topic_id in unknown:
            parts = [_part(p, code=ErrorCode.UNKNOWN_TOPIC_ID, cls=GroupPart) for p in t.partition_indexes]
            answered.append(GroupTopic(topic_id=t.topic_id, partitions=parts))
    return Group(group_id=group_id, topics=answered)


def _topics(ctx, found, code=ErrorCode.NONE, topic_cls=Topic, part_cls=Part, unstable=frozenset(), denied=frozenset()):
    by_topic: dict[str, list] = {}
    for (topic, partition), c in found.items():
        if (topic, partition) in denied:
            entry = _part(partition, code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, cls=part_cls)
        elif (topic, partition) in unstable:
            entry = _part(partition, code=ErrorCode.UNSTABLE_OFFSET_COMMIT, cls=part_cls)
        elif c is None:
            entry = _part(partition, code=code, cls=part_cls)
        else:
            entry = _part(partition, c.offset, c.leader_epoch, metadata_for_client(ctx, c.metadata), cls=part_cls)
        by_topic.setdefault(topic, []).append(entry)
    return [topic_cls(name=name, partitions=parts) for name, parts in by_topic.items()]


async def _fetch_from_zookeeper(ctx, group_id: str, requested):
    b = ctx.services
    found: dict = {}
    try:
        check_group(group_id)
        group_ok = True
    except ValueError:
        group_ok = False
    denied = _denied(ctx, requested)
    for topic, partition in requested:
        known = b.metadata.topics.get(topic)
        if (topic, partition) in denied:
            entry = _part(partition, code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        elif known is None or partition not in known.replicas:
            entry = _part(partition, code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        elif not group_ok:
            entry = _part(partition, code=ErrorCode.INVALID_GROUP_ID)
        else:
            entry = await _read_zookeeper_offset(ctx, group_id, topic, partition)
        found.setdefault(topic, []).append(entry)
    return Resp(throttle_time_ms=0, topics=[Topic(name=t, partitions=ps) for t, ps in found.items()], error_code=0)


async def _read_zookeeper_offset(ctx, group_id: str, topic: str, partition: int):
    b = ctx.services
    try:
        offset = await b.run_blocking(b.registry.fetch_consumer_offset, group_id, topic, partition)
    except Exception as e:  # the registry is unreachable, or the node is not a decimal
        ctx.log.warning("OffsetFetch v0 of group %s from ZooKeeper failed: %s", group_id, e)
        return _part(partition, code=ErrorCode.UNKNOWN_SERVER_ERROR)
    if offset is None:  # no node: Kafka 0.8.2-2.x answer -1 with UNKNOWN_TOPIC_OR_PARTITION
        return _part(partition, code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    return _part(partition, offset)
