"""ShareFetch (key 78), v1-2: a share consumer's fetch through its share session (KIP-932).

Session rules (``broker.share.share_session``): epoch 0 opens the session (acknowledgements in it are
INVALID_REQUEST; a full cache SHARE_SESSION_LIMIT_REACHED), -1 acknowledges, then closes the session and releases
the member's acquired records without fetching, any other epoch must be the expected one
(INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_NOT_FOUND); the request's partitions join the session and
``forgotten_topics_data`` leave it. A session ends too when the connection that last used it closes.

Order (Kafka's ``handleShareFetchRequest``): UNSUPPORTED_VERSION while ``group.share.enable`` is false, Read on the group (else GROUP_AUTHORIZATION_FAILED for the request),
the session, the acknowledgements (validated as ``_share.validate_acks``, applied and written to the share
coordinator; the result is the partition's ``acknowledge_error_code``), then the fetch of every partition of the
session: per-partition UNKNOWN_TOPIC_ID, TOPIC_AUTHORIZATION_FAILED (Read on the topic),
UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (with ``current_leader`` and ``node_endpoints``, KIP-951),
and the share partition's load errors. Records are acquired from each partition's next fetch offset
(``broker.share.share_fetch_read``: batch headers only, up to the high watermark, or the last stable offset for
``share.isolation.level=read_committed``) until ``max_records`` offsets (a whole batch may exceed it; v2
``share_acquire_mode`` 1, record-limit, never does; another mode is INVALID_REQUEST) or ``max_bytes`` (the first batch whole, KIP-74); the
answer's ``records`` are the whole batches holding acquired offsets, ``acquired_records`` the acquired ranges
with their delivery counts, ``acquisition_lock_timeout_ms`` the group's record lock duration. The session's
partitions are read in an order rotated by the session epoch (Kafka's ``PartitionRotateStrategy``), so limits
reached early do not always starve the same partitions.

Long poll: when nothing was acquired and no partition failed, the request waits up to ``max_wait_ms`` for new
data (the partitions' high watermark) or for records becoming available again (release, lock expiry), then
reads again; a client that disconnects ends the wait. v2 ``is_renew_ack`` (KIP-1222): the request only
acknowledges (type 4 renews locks) and answers at once without fetching.
An opening request answers every partition it named; later ones only the partitions with records, an error or
an acknowledgement result. Gaps: ``batch_size`` is not used to split acquired ranges; ``min_bytes`` counts
acquired batch bytes.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Final

from broker.api import RequestContext
from broker.replication.notifier import wait_any
from broker.share.share_session import ShareSessionError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from . import _share

API_KEY: Final = ApiKey.SHARE_FETCH
VERSIONS = (1, 2)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
_Topic = Resp.ShareFetchableTopicResponse
_Part = _Topic.PartitionData
RECORD_LIMIT_MODE = 1
ACQUIRE_MODES = (0, RECORD_LIMIT_MODE)  # batch-optimized, record-limit


def _error(code: ErrorCode, message: str | None = None, lock_ms: int = 0) -> Any:
    return Resp(throttle_time_ms=0, error_code=code, error_message=message, acquisition_lock_timeout_ms=lock_ms)


class _Answer:
    """The partitions of the answer, in first-touched order, and what each must show."""

    def __init__(self) -> None:
        self.parts: dict[tuple[uuid.UUID, int], Any] = {}
        self.shown: set[tuple[uuid.UUID, int]] = set()
        self.leaders: set[int] = set()

    def entry(self, key: tuple[uuid.UUID, int]) -> Any:
        e = self.parts.get(key)
        if e is None:
            e = self.parts[key] = _Part(
                partition_index=key[1],
                error_code=ErrorCode.NONE,
                acknowledge_error_code=ErrorCode.NONE,
                current_leader=_Part.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1),
                records=b"",
                acquired_records=[],
            )
        return e

    def not_leader(self, ctx: Any, entry: Any, topic: str | None) -> None:
        leader, epoch = _share.leader_of(ctx, topic, entry.partition_index)
        entry.current_leader = _Part.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
        self.leaders.add(leader)

    def response(self, ctx: Any, lock_ms: int) -> Any:
        topics: list[Any] = []
        for key, e in self.parts.items():
            if key not in self.shown:
                continue
            if not topics or topics[-1].topic_id != key[0]:
                topics.append(_Topic(topic_id=key[0], partitions=[]))
            topics[-1].partitions.append(e)
        return Resp(
            throttle_time_ms=0,
            error_code=ErrorCode.NONE,
            acquisition_lock_timeout_ms=lock_ms,
            responses=topics,
            node_endpoints=_share.node_endpoints(ctx, self.leaders, Resp.NodeEndpoint),
        )


async def handle(ctx: RequestContext, request: Any) -> Any:
    mgr = ctx.services.share_partitions
    refused = _share.request_refused(ctx, request, "ShareFetch")
    if refused is not None:
        return _error(*refused)
    group_id = request.group_id or ""
    member_id = request.member_id
    lock_ms = mgr.settings(group_id).record_lock_duration_ms
    if ctx.version >= 2 and request.share_acquire_mode not in ACQUIRE_MODES:
        return _error(ErrorCode.INVALID_REQUEST, f"unknown share_acquire_mode {request.share_acquire_mode}", lock_ms)
    has_acks = any(p.acknowledgement_batches for t in request.topics for p in t.partitions)
    try:
        context = mgr.sessions.new_fetch_context(
            group_id,
            member_id,
            request.share_session_epoch,
            [(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions],
            [(f.topic_id, p) for f in request.forgotten_topics_data for p in f.partitions],
            has_acknowledgements=has_acks,
            connection_id=ctx.connection_id,
        )
    except ShareSessionError as e:
        return _error(e.code, str(e), lock_ms)
    answer = _Answer()
    readable: dict[str, bool] = {}
    renew = ctx.version >= 2 and request.is_renew_ack
    await _acknowledge(ctx, request, group_id, member_id, answer, readable, renew)
    if context.kind == "final":
        await mgr.close_session(group_id, member_id)
        return answer.response(ctx, lock_ms)
    mgr.watch_connection(ctx.connection_id, ctx.disconnected)
    if context.kind == "initial":
        answer.shown.update(context.partitions)
    if renew:
        return answer.response(ctx, lock_ms)
    record_limit = ctx.version >= 2 and request.share_acquire_mode == RECORD_LIMIT_MODE
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(request.max_wait_ms, 0) / 1000
    while True:
        total, failed, waiting = await _fetch_all(
            ctx, request, group_id, member_id, context.partitions, answer, readable, record_limit
        )
        remaining = deadline - loop.time()
        gone = ctx.disconnected is not None and ctx.disconnected.done()
        if total >= max(request.min_bytes, 1) or failed or remaining <= 0 or not waiting:
            break
        if ctx.services.stopping or gone:
            break
        await wait_any(waiting, remaining, abandon=ctx.disconnected)
    return answer.response(ctx, lock_ms)


async def _acknowledge(
    ctx: Any, request: Any, group_id: str, member_id: str, answer: _Answer, readable: dict[str, bool], renew: bool
) -> None:
    for t in request.topics:
        name = _share.topic_name(ctx, t.topic_id)
        for p in t.partitions:
            if not p.acknowledgement_batches:
                continue
            key = (t.topic_id, p.partition_index)
            entry = answer.entry(key)
            answer.shown.add(key)
            code, msg = await _share.acknowledge_partition(
                ctx, group_id, member_id, t.topic_id, name, p, readable, renew
            )
            entry.acknowledge_error_code = code
            entry.acknowledge_error_message = msg
            if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                answer.not_leader(ctx, entry, name)


async def _fetch_all(
    ctx: Any,
    request: Any,
    group_id: str,
    member_id: str,
    partitions: tuple[tuple[uuid.UUID, int], ...],
    answer: _Answer,
    readable: dict[str, bool],
    record_limit: bool,
) -> tuple[int, bool, list[Any]]:
    """One pass over the session's partitions: (bytes acquired, any partition failed, notifiers to wait on)."""
    mgr = ctx.services.share_partitions
    records_left = request.max_records if request.max_records > 0 else 500
    bytes_left = request.max_bytes
    min_one = True
    total = 0
    failed = False
    waiting: list[Any] = []
    shift = request.share_session_epoch % len(partitions) if partitions else 0
    for topic_id, p in partitions[shift:] + partitions[:shift]:  # rotated: no partition always goes first
        key = (topic_id, p)
        entry = answer.entry(key)
        name = _share.topic_name(ctx, topic_id)
        code = _share.partition_error(ctx, name, p, readable)
        if code == ErrorCode.NONE and (records_left <= 0 or (bytes_left <= 0 and not min_one)):
            continue
        msg = None
        got = None
        if code == ErrorCode.NONE:
            assert name is not None
            got = await mgr.acquire(
                group_id,
                member_id,
                name,
                topic_id,
                p,
                max_records=records_left,
                max_bytes=bytes_left,
                min_one_batch=min_one,
                record_limit=record_limit,
            )
            code, msg = got.error, got.message
        if code != ErrorCode.NONE:
            entry.error_code, entry.error_message = code, msg
            answer.shown.add(key)
            failed = True
            if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                answer.not_leader(ctx, entry, name)
            continue
        assert got is not None and name is not None
        part = ctx.services.replica_manager.get_partition(name, p)
        if part is not None:
            waiting.append(part.data_notifier)
        waiting.append(mgr.notifier(name, p))
        if not got.acquired:
            continue
        entry.records = (entry.records or b"") + got.records
        entry.acquired_records.extend(
            _Part.AcquiredRecords(
                first_offset=a.first_offset, last_offset=a.last_offset, delivery_count=a.delivery_count
            )
            for a in got.acquired
        )
        answer.shown.add(key)
        size = len(got.records)
        total += size
        bytes_left -= size
        records_left -= sum(a.last_offset - a.first_offset + 1 for a in got.acquired)
        if size:
            min_one = False
    return total, failed, waiting
