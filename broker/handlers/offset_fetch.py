"""OffsetFetch (key 9), v0-7: a group's committed offsets (-1 with empty metadata when none).

v0 reads ZooKeeper's ``/consumers/<group>/offsets/<topic>/<partition>`` on any broker (Kafka 0.8.1's
storage); v1+ ask the group's coordinator, which answers from its cache of ``__consumer_offsets``. v2+:
null topics means every partition the group committed, and group errors (NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS) go into the top-level error code; v0-1 carry them per partition.
Gaps: ``require_stable`` (v7) has nothing to wait for (no transactional offsets); v8+ (several groups per
request) is not declared.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ._groups import coordinator

API_KEY = ApiKey.OFFSET_FETCH
VERSIONS = (0, 7)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
Topic = Resp.OffsetFetchResponseTopic
Part = Topic.OffsetFetchResponsePartition


def _part(index: int, offset: int = -1, epoch: int = -1, metadata: str = "", code=ErrorCode.NONE):
    return Part(
        partition_index=index, committed_offset=offset, committed_leader_epoch=epoch, metadata=metadata, error_code=code
    )


async def handle(ctx, request):
    requested = None
    if request.topics is not None:
        requested = [(t.name, p) for t in request.topics for p in t.partition_indexes]
    if ctx.version == 0:
        return await _fetch_from_zookeeper(ctx, request.group_id, requested or [])
    try:
        found = coordinator(ctx).fetch_offsets(request.group_id, requested)
    except GroupError as e:
        if ctx.version >= 2:
            return Resp(throttle_time_ms=0, topics=[], error_code=e.error_code)
        found = {tp: None for tp in requested or []}
        return Resp(throttle_time_ms=0, topics=_topics(found, e.error_code), error_code=e.error_code)
    return Resp(throttle_time_ms=0, topics=_topics(found), error_code=ErrorCode.NONE)


def _topics(found, code=ErrorCode.NONE):
    by_topic: dict[str, list] = {}
    for (topic, partition), c in found.items():
        entry = _part(partition, code=code) if c is None else _part(partition, c.offset, c.leader_epoch, c.metadata)
        by_topic.setdefault(topic, []).append(entry)
    return [Topic(name=name, partitions=parts) for name, parts in by_topic.items()]


async def _fetch_from_zookeeper(ctx, group_id: str, requested):
    b = ctx.services
    found: dict = {}
    for topic, partition in requested:
        try:
            offset = await b.run_blocking(b.registry.fetch_consumer_offset, group_id, topic, partition)
        except Exception as e:  # the registry is unreachable
            ctx.log.warning("OffsetFetch v0 of group %s from ZooKeeper failed: %s", group_id, e)
            found.setdefault(topic, []).append(_part(partition, code=ErrorCode.UNKNOWN_SERVER_ERROR))
            continue
        found.setdefault(topic, []).append(_part(partition, -1 if offset is None else offset))
    return Resp(throttle_time_ms=0, topics=[Topic(name=t, partitions=ps) for t, ps in found.items()], error_code=0)
