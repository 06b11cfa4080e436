"""Fetch (key 1), v0-18: read record batches from partitions this broker leads (or follows, KIP-392), with long polling.

A sessionless or full request's answer lists every requested partition (an incremental one's, only what
changed; see fetch sessions below). Data comes from the log as a file region sent with ``sendfile``; read_uncommitted consumers read up to the high watermark,
read_committed consumers (``isolation_level`` 1, v4+) up to the last stable offset (the first offset of
the oldest ongoing transaction, at most the high watermark) and get ``aborted_transactions``: the
producer id and first offset of every aborted transaction the data may hold (from the segments'
``.txnindex``), for the client to drop; ``last_stable_offset`` is in every v4+ answer. A follower
(``replica_id`` >= 0, a broker in the partition's replicas) reads up to the log end, isolation ignored.
A follower's fetch offset is its log end offset: every pass records it in the
leader's replica state (``Partition.update_follower_fetch``), which may advance the high watermark and
lets the replica manager add the follower back to the ISR; a broker id that is not a replica of the
partition gets NOT_LEADER_OR_FOLLOWER. Follower long polls also wake on every append and high watermark move,
and a follower whose last answer carried an older high watermark is answered at once (so followers serving
consumers, KIP-392, know it within a round trip); consumer long polls wake when the high watermark moves.

Limits: per partition ``partition_max_bytes``, overall ``max_bytes`` (v3+); from v3 the first partition
with data may exceed both so a batch larger than the limits still makes progress (KIP-74); v0-2 are
hard limits. Long poll: when fewer than ``min_bytes`` are ready, the request waits up to ``max_wait_ms``
for new data on any requested partition, then reads again; a client that disconnects ends its wait at once. Before v4 batches are down-converted to
message sets of magic 0 (v0-1) or 1 (v2-3); zstd data cannot be and yields UNSUPPORTED_COMPRESSION_TYPE.

Topic ids (v13+, KIP-516): topics are named by id in requests, ``forgotten_topics_data`` and answers; an id the
broker does not know answers UNKNOWN_TOPIC_ID (before the Read check: the id names nothing), and a partition
a session cached under an older id of its topic (deleted and created again) INCONSISTENT_TOPIC_ID. v15+ carries
the follower's id in ``replica_state`` (KIP-903); v16+ answers ``node_endpoints``, the endpoints (request's
listener) of the leaders named in NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH answers (KIP-951); v17's
follower directory id is accepted and ignored (one log directory per partition here); so is v18's tagged
``high_watermark`` a replica reports (KIP-1166, meant for KRaft's own fetch: a consumer sends Long.MAX_VALUE,
and kafkalog's long poll does not wait on it).
Fetch sessions (v7+, KIP-227, ``broker.replication.fetch_session``): epoch 0 is a full request that creates a
session when ``max.incremental.fetch.session.cache.slots`` (default 1000) has room or Kafka's eviction rules
free one (stale sessions first, then smaller ones; a follower's session may displace a consumer's); epoch -1
answers in full without a session and closes the named one; an incremental request (session id, epoch n)
adds and updates its partitions, drops ``forgotten_topics_data``, reads the whole session and answers only the
partitions with records or a changed high watermark, last stable offset, log start offset or an error.
Errors for the whole request: FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, and
FETCH_SESSION_TOPIC_ID_ERROR for a session continued at a version that names topics the other way. A
throttled incremental answer keeps its session id. Figures: ``kafka_server_fetchsessioncache_*``.
v9+ ``current_leader_epoch`` fences stale or newer leaders (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH).
Authorization (Kafka's ``handleFetchRequest``): a consumer needs Read on each topic, else its partitions
answer TOPIC_AUTHORIZATION_FAILED, checked after topic ids are resolved and before the topic's existence; a follower (``replica_id`` >= 0)
needs ClusterAction on the cluster, else every partition answers TOPIC_AUTHORIZATION_FAILED (Kafka's
answer; CVE-2018-1288) and no follower state is recorded. Decided once per request, before the long poll.
Quotas (KIP-219): with a ``consumer_byte_rate`` configured, a consumer's answer (not a follower's) records its
record bytes; over the quota they are un-recorded and the answer is *empty* (no topics), carrying
``throttle_time_ms``, and the connection is muted for it (Kafka's ``getThrottledResponse``).
A consumer's ``max_bytes`` (and ``min_bytes``) is capped at the bytes its quota allows over the window
(bound × (``quota.window.num`` − 1) × ``quota.window.size.seconds``, Kafka's ``getMaxValueInQuotaWindow``), so
one fetch is never certain to be throttled (and un-recorded) again and again.
Follower fetching (KIP-392, ``broker.replication.follower_fetch``): a consumer's Fetch v11+ may read from a follower
replica too, up to the follower's high watermark (the leader's, from its last Fetch answer) or last stable offset; a
follower no longer in the ISR answers NOT_LEADER_OR_FOLLOWER, so the client returns to the leader. Before v11, and
for replica fetches, only the leader serves. With ``replica.selector.class`` set, the leader asks it (the client's
``rack_id``) for a preferred read replica: when that is another broker, the partition answers no records, the
leader's offsets and ``preferred_read_replica``, and the Fetch answers at once. Consumer answers a follower gives
are counted in ``kafkalog_follower_fetch_requests_total`` and ``_bytes_total``.
Gaps: no diverging-epoch answer (v12) yet.
"""

from __future__ import annotations

import asyncio

from broker.replication import follower_fetch
from broker.replication.notifier import wait_any
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records import UnsupportedCompressionError, batch_to_legacy
from spark_kafkalog.security.acl import AclOperation, ResourceType

from . import _fetch_context

API_KEY = ApiKey.FETCH
VERSIONS = (0, 18)
_API = API_BY_KEY[API_KEY]
READ_COMMITTED = 1
_Aborted = _API.Response.FetchableTopicResponse.PartitionData.AbortedTransaction


async def handle(ctx, request):
    v = ctx.version
    if v >= _fetch_context.REPLICA_STATE_MIN_VERSION:  # v15+: the follower's id is in replica_state (KIP-903)
        request.replica_id = request.replica_state.replica_id
    context = _fetch_context.fetch_context(ctx, request)  # topic ids resolved, session rules applied

    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(request.max_wait_ms, 0) / 1000
    readable = readable_topics(ctx, request, {it.topic for it in context.items if it.topic is not None})
    quota_bytes = None  # consumer_byte_rate: at most what the quota window allows (getMaxValueInQuotaWindow)
    if ctx.services.quotas.fetch.enabled and request.replica_id < 0:
        quota_bytes = ctx.services.quotas.fetch_max_bytes(ctx.principal, ctx.header.client_id)
    min_bytes = request.min_bytes if quota_bytes is None else min(request.min_bytes, quota_bytes)
    while True:
        responses, total, any_error, partitions = _read_all(ctx, request, context, readable, quota_bytes)
        remaining = deadline - loop.time()
        gone = ctx.disconnected is not None and ctx.disconnected.done()  # nobody left to answer
        if total >= min_bytes or any_error or remaining <= 0 or not partitions or ctx.services.stopping or gone:
            if ctx.services.quotas.fetch.enabled and request.replica_id < 0:
                throttle_ms = _record_quota(ctx, total)
                if throttle_ms:
                    return _fetch_context.throttled_answer(context, throttle_ms)
            response = _fetch_context.answer(ctx, context, [p for t in responses for p in t.partitions])
            responses = response.responses  # an incremental session's answer: only what changed
            if total:
                _count_bytes_out(ctx.services.metrics, responses, follower=request.replica_id >= 0)
            if request.replica_id < 0 and v >= follower_fetch.PREFERRED_REPLICA_MIN_VERSION:
                follower_fetch.record_served(ctx.services.metrics, ctx.services.replica_manager, responses)
            return response
        notifiers = [p.append_notifier if request.replica_id >= 0 else p.data_notifier for p in partitions]
        await wait_any(notifiers, remaining, abandon=ctx.disconnected)


def _record_quota(ctx, total: int) -> int:
    """Record ``total`` bytes for ``consumer_byte_rate``; over the quota, un-record them, mute the connection and
    return the throttle time (the caller answers empty)."""
    quotas = ctx.services.quotas
    throttle_ms = quotas.record_fetch(ctx.principal, ctx.header.client_id, total)
    if throttle_ms:
        quotas.unrecord_fetch(ctx.principal, ctx.header.client_id, total)
        ctx.throttle(throttle_ms)
    return throttle_ms


def _count_bytes_out(metrics, responses, *, follower: bool) -> None:
    for topic in responses:
        size = sum(len(p.records) for p in topic.partitions if p.records is not None)
        if size:
            metrics.fetched(topic.topic, size, follower=follower)


def readable_topics(ctx, request, names: set[str]) -> set[str] | None:
    """The topics of ``names`` this fetch may read: a follower's all, or None without ClusterAction on the
    cluster (then every partition answers TOPIC_AUTHORIZATION_FAILED), a consumer's those it has Read on."""
    if request.replica_id >= 0:
        return names if ctx.authorize_cluster(AclOperation.CLUSTER_ACTION) else None
    return {n for n in names if ctx.authorize(AclOperation.READ, ResourceType.TOPIC, n)}


def _read_all(ctx, request, context, readable: set[str] | None, quota_bytes: int | None = None):
    b = ctx.services
    v = ctx.version
    Resp = _API.Response
    hard_limit = v <= 2
    remaining = request.max_bytes if v >= 3 else 0x7FFFFFFF
    if quota_bytes is not None:
        remaining = min(remaining, quota_bytes)
    min_one = not hard_limit
    follower = request.replica_id >= 0
    now_ms = b.replica_manager.now_ms() if follower else 0
    committed = v >= 4 and request.isolation_level == READ_COMMITTED
    total = 0
    any_error = False
    waiting_on = []
    responses = []
    for topic in _fetch_context.by_topic(context.items):
        entries = []
        for fp in topic.partitions:
            entry = Resp.FetchableTopicResponse.PartitionData(
                partition_index=fp.partition,
                error_code=ErrorCode.NONE,
                high_watermark=-1,
                records=b"",
                aborted_transactions=[] if committed else None,
            )
            entries.append(entry)
            code = _fetch_context.topic_error(b.metadata, fp, readable or set(), cluster_denied=readable is None)
            if code != ErrorCode.NONE:  # before existence: an unauthorized client learns nothing
                entry.error_code = code
                any_error = True
                continue
            part, code = b.replica_manager.partition_to_read(
                topic.topic, fp.partition, from_follower=follower, version=v
            )
            if part is not None:
                code = part.check_leader_epoch(fp.current_leader_epoch)
            if code == ErrorCode.NONE and follower:
                if part.update_follower_fetch(request.replica_id, fp.fetch_offset, now_ms, fp.log_start_offset):
                    b.replica_manager.maybe_expand_isr(part, request.replica_id)
                else:
                    code = ErrorCode.NOT_LEADER_OR_FOLLOWER
            if code != ErrorCode.NONE:
                entry.error_code = code
                any_error = True
                if part is None:
                    st = b.metadata.partition_state(topic.topic, fp.partition)
                    if st is not None:
                        entry.current_leader = Resp.FetchableTopicResponse.PartitionData.LeaderIdAndEpoch(
                            leader_id=st.leader, leader_epoch=st.leader_epoch
                        )
                continue
            if not follower and v >= follower_fetch.PREFERRED_REPLICA_MIN_VERSION:
                preferred = follower_fetch.preferred_read_replica(
                    b.replica_manager,
                    b.metadata.brokers,
                    part,
                    rack_id=request.rack_id,
                    listener=ctx.listener,
                    fetch_offset=fp.fetch_offset,
                )
                if preferred >= 0:  # no data: the client reads from ``preferred``; answer at once, as Kafka
                    follower_fetch.redirect(entry, part, preferred)
                    any_error = True
                    continue
            plog = part.log
            hw = plog.high_watermark
            lso = plog.last_stable_offset
            limit = max(min(fp.partition_max_bytes, remaining), 0)
            max_offset = None if follower else lso if committed else hw
            data = plog.read(fp.fetch_offset, limit, max_offset=max_offset, min_one_batch=min_one)
            entry.high_watermark = hw
            entry.last_stable_offset = lso
            entry.log_start_offset = data.log_start_offset
            if follower and part.take_high_watermark_news(request.replica_id, hw):
                any_error = True  # answer now: the follower learns the new high watermark (KIP-392 reads)
            if data.error != ErrorCode.NONE:
                entry.error_code = data.error
                any_error = True
                continue
            waiting_on.append(part)
            region = data.records
            if region is None or len(region) == 0:
                continue
            if v < 4:
                if not follower and not plog.config.message_downconversion_enable:
                    entry.error_code = ErrorCode.UNSUPPORTED_VERSION  # message.downconversion.enable=false
                    any_error = True
                    continue
                try:
                    converted = batch_to_legacy(region.read_bytes(), 0 if v <= 1 else 1)
                except UnsupportedCompressionError:
                    entry.error_code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
                    any_error = True
                    continue
                entry.records = converted
                size = len(converted)
            else:
                entry.records = region
                size = len(region)
                if committed and not follower:
                    entry.aborted_transactions = [
                        _Aborted(producer_id=pid, first_offset=first)
                        for pid, first in plog.collect_aborted_transactions(fp.fetch_offset, lso)
                    ]
            total += size
            remaining -= size
            if size:
                min_one = False
        responses.append(
            Resp.FetchableTopicResponse(topic=topic.topic or "", topic_id=topic.topic_id, partitions=entries)
        )
    return responses, total, any_error, waiting_on
