"""ListOffsets (key 2), v0-11: offsets by time for partitions this broker leads.

Timestamps: -2 earliest (log start offset), -1 latest (high watermark for consumers, the last stable
offset for read_committed consumers (``isolation_level`` 1, v2+), log end for a replica,
``replica_id`` >= 0), -3 (v7, KIP-734) the offset of the record with the largest timestamp,
t >= 0 the earliest offset whose timestamp is >= t below the high watermark (read_committed: below the
last stable offset; offset -1, timestamp -1 when there is none), -4 (v8+, KIP-405) the earliest local offset
(the log start offset: every segment is local here), -5 (v9+, KIP-1005) the latest tiered offset (offset,
timestamp and epoch -1: nothing is tiered here, Kafka's answer without remote storage), -6 (v11+, KIP-1023)
the earliest offset pending upload to remote storage (offset, timestamp and epoch -1 too, as Kafka without remote
storage); other negative timestamps (and -4, -5, -6 below their versions) are INVALID_REQUEST. v10's ``timeout_ms`` (for remote storage reads) is accepted and unused.
v0 answers ``old_style_offsets``: up to ``max_num_offsets`` segment base offsets older than the time,
descending (the 0.8 ``getOffsetsBefore``; consumers never see an offset above the high watermark).
v4+ ``current_leader_epoch`` is fenced as in Fetch.
A topic-partition named twice is INVALID_REQUEST for both (v2+), as Kafka does.
Authorization: Describe on each topic, else its partitions answer TOPIC_AUTHORIZATION_FAILED (offset and
timestamp -1), checked before anything else about them.
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

API_KEY = ApiKey.LIST_OFFSETS
VERSIONS = (0, 11)
_API = API_BY_KEY[API_KEY]
EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -2, -1, -3, -4, -5, -6
READ_COMMITTED = 1
CONSUMER = -1  # replica_id of consumers (-2: a debugging client, answered like a replica)


async def handle(ctx, request):
    b = ctx.services
    v = ctx.version
    Resp = _API.Response
    PartResp = Resp.ListOffsetsTopicResponse.ListOffsetsPartitionResponse
    seen: dict[tuple[str, int], int] = {}
    for t in request.topics:
        for p in t.partitions:
            seen[(t.name, p.partition_index)] = seen.get((t.name, p.partition_index), 0) + 1
    describable = {t.name for t in request.topics if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name)}
    topics = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            entry = PartResp(
                partition_index=p.partition_index,
                error_code=ErrorCode.NONE,
                old_style_offsets=[],
                timestamp=-1,
                offset=-1,
                leader_epoch=-1,
            )
            parts.append(entry)
            if t.name not in describable:
                entry.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            if v >= 2 and seen[(t.name, p.partition_index)] > 1:
                entry.error_code = ErrorCode.INVALID_REQUEST
                continue
            part, code = b.replica_manager.leader_partition(t.name, p.partition_index)
            if part is not None:
                code = part.check_leader_epoch(p.current_leader_epoch)
            if code != ErrorCode.NONE:
                entry.error_code = code
                continue
            plog = part.log
            ts = p.timestamp
            if v == 0:
                entry.old_style_offsets = _old_style(plog, ts, p.max_num_offsets, request.replica_id == CONSUMER)
                continue
            committed = v >= 2 and request.isolation_level == READ_COMMITTED
            visible = plog.last_stable_offset if committed else plog.high_watermark
            # The leader epoch comes with an offset; a lookup that finds none answers -1, -1, -1 (Kafka's).
            if ts == EARLIEST or (ts == EARLIEST_LOCAL and v >= 8):
                entry.offset = plog.log_start_offset
                entry.leader_epoch = part.leader_epoch
            elif ts == LATEST:
                entry.offset = plog.log_end_offset if request.replica_id >= 0 else visible
                entry.leader_epoch = part.leader_epoch
            elif ts == MAX_TIMESTAMP:
                found = plog.offset_for_max_timestamp()
                if found is not None:
                    entry.offset, entry.timestamp = found
                    entry.leader_epoch = part.leader_epoch
            elif (ts == LATEST_TIERED and v >= 9) or (ts == EARLIEST_PENDING_UPLOAD and v >= 11):
                pass  # no tiered storage: -1, -1, -1
            elif ts < 0:
                entry.error_code = ErrorCode.INVALID_REQUEST
            else:
                found = plog.offset_for_timestamp(ts)
                if found is not None and found[0] < visible:
                    entry.offset, entry.timestamp = found
                    entry.leader_epoch = part.leader_epoch
        topics.append(Resp.ListOffsetsTopicResponse(name=t.name, partitions=parts))
    return Resp(throttle_time_ms=0, topics=topics)


def _old_style(plog, ts: int, max_num: int, consumer: bool) -> list[int]:
    """getOffsetsBefore (Kafka's ``fetchOffsetsBefore``): up to ``max_num`` segment base offsets of segments
    last modified at or before the time, plus the log end offset (counted as modified now) when the active
    segment is not empty, descending; -1 (latest) starts from the log end, -2 (earliest) gives the log start. For a consumer
    (``replica_id`` -1), as Kafka's ``Partition.legacyFetchOffsetsForTimestamp``: offsets above the high
    watermark are dropped and the high watermark put first instead (here without repeating it when it
    is itself a segment base offset)."""
    if max_num <= 0:
        return []
    offsets = plog.legacy_offsets_before(ts, max_num)
    if consumer:
        hw = plog.high_watermark
        if any(o > hw for o in offsets):
            offsets = [hw] + [o for o in offsets if o < hw]
    return offsets
