"""Fetch's topic ids (KIP-516) and fetch sessions (KIP-227), for the Fetch handler.

``fetch_context`` turns a request into the partitions to read (``FetchItem``: topic name, topic id,
partition, what was asked), resolving v13+ topic ids through the metadata cache (an unknown id keeps no
name), and asks the broker's ``FetchSessionCache`` (``broker.replication.fetch_session``) for the
request's context: sessionless, full (may create a session), incremental (the whole session is read) or a
session error. ``topic_error`` applies Kafka's per-partition order of checks before a partition is read;
``answer`` builds the response from the partition results: the partitions the context keeps, grouped by
consecutive topic (by id from v13, by name before), the session id and error, and from v16 the endpoints
of the leaders named in NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH answers (KIP-951).

The follower's id is ``replica_id`` up to v14 and ``replica_state.replica_id`` from v15 (KIP-903).
"""

from __future__ import annotations

import uuid
from typing import Any, NamedTuple

from broker.replication.fetch_session import FetchContext, FetchItem, PartitionRequest
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

ZERO_UUID = uuid.UUID(int=0)
TOPIC_IDS_MIN_VERSION = 13
REPLICA_STATE_MIN_VERSION = 15
NODE_ENDPOINTS_MIN_VERSION = 16
_Resp = API_BY_KEY[ApiKey.FETCH].Response
_LEADER_MOVED = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH)


def follower_id(request: Any, version: int) -> int:
    """The fetching broker's id, or -1 for a consumer."""
    if version >= REPLICA_STATE_MIN_VERSION:
        return request.replica_state.replica_id
    return request.replica_id


def fetch_context(ctx: Any, request: Any) -> FetchContext:
    """The partitions this request reads and how it is answered (session rules in ``fetch_session``)."""
    v = ctx.version
    metadata = ctx.services.metadata
    by_id = v >= TOPIC_IDS_MIN_VERSION
    items: list[FetchItem] = []
    for t in request.topics:
        if by_id:  # the zero id names no topic (topics made without an id have it)
            name, tid = (metadata.topic_by_id(t.topic_id) if t.topic_id != ZERO_UUID else None), t.topic_id
        else:
            name, tid = t.topic, ZERO_UUID
        for fp in t.partitions:
            asked = PartitionRequest(
                fetch_offset=fp.fetch_offset,
                partition_max_bytes=fp.partition_max_bytes,
                log_start_offset=fp.log_start_offset,
                current_leader_epoch=fp.current_leader_epoch,
                last_fetched_epoch=fp.last_fetched_epoch,
            )
            items.append(FetchItem(name, tid, fp.partition, asked))
    forgotten = [
        (None, f.topic_id, p) if by_id else (f.topic, ZERO_UUID, p)
        for f in request.forgotten_topics_data
        for p in f.partitions
    ]
    return ctx.services.fetch_sessions.new_context(
        v,
        request.session_id,
        request.session_epoch,
        privileged=follower_id(request, v) >= 0,
        items=items,
        forgotten=forgotten,
        topic_name=lambda tid: metadata.topic_by_id(tid) if tid != ZERO_UUID else None,
    )


def topic_error(metadata: Any, item: FetchItem, readable: set[str], *, cluster_denied: bool) -> ErrorCode:
    """The error a partition answers before its log is looked at, in Kafka's order: a follower without
    ClusterAction gets TOPIC_AUTHORIZATION_FAILED everywhere; an unknown topic id UNKNOWN_TOPIC_ID (whoever
    asks); a consumer without Read on the topic TOPIC_AUTHORIZATION_FAILED; a topic id that is not the
    current one of the named topic (the topic was deleted and created again since the session cached it)
    INCONSISTENT_TOPIC_ID."""
    if cluster_denied:
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if item.topic is None:
        return ErrorCode.UNKNOWN_TOPIC_ID
    if item.topic not in readable:
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if item.topic_id != ZERO_UUID:
        current = metadata.topics.get(item.topic)
        if current is not None and current.topic_id != item.topic_id:
            return ErrorCode.INCONSISTENT_TOPIC_ID
    return ErrorCode.NONE


class TopicItems(NamedTuple):
    """Consecutive partitions of one topic, in request (or session) order."""

    topic: str | None
    topic_id: uuid.UUID
    partitions: list[FetchItem]


def by_topic(items: list[FetchItem]) -> list[TopicItems]:
    """``items`` grouped by consecutive topic."""
    out: list[TopicItems] = []
    for it in items:
        if not out or (out[-1].topic_id, out[-1].topic) != (it.topic_id, it.topic):
            out.append(TopicItems(it.topic, it.topic_id, []))
        out[-1].partitions.append(it)
    return out


def group_by_topic(items: list[FetchItem], results: list[Any], keep: list[int] | None = None) -> list[Any]:
    """``FetchableTopicResponse``s of the kept results, a new one whenever the topic changes (Kafka's
    ``FetchResponse.of``); ``topic`` holds the name (or "" for an unknown id) at every version."""
    topics: list[Any] = []
    last = None
    for i in range(len(results)) if keep is None else keep:
        it = items[i]
        ident = (it.topic_id, it.topic)
        if ident != last:
            topics.append(_Resp.FetchableTopicResponse(topic=it.topic or "", topic_id=it.topic_id, partitions=[]))
            last = ident
        topics[-1].partitions.append(results[i])
    return topics


def answer(ctx: Any, context: FetchContext, results: list[Any]) -> Any:
    """The Fetch response of ``results`` (one per ``context.items``) under the context's session rules."""
    code, session_id, keep = context.respond(results)
    responses = group_by_topic(context.items, results, keep)
    node_endpoints = []
    if ctx.version >= NODE_ENDPOINTS_MIN_VERSION:
        node_endpoints = leader_endpoints(ctx, [results[i] for i in keep])
    return _Resp(
        throttle_time_ms=0, error_code=code, session_id=session_id, responses=responses, node_endpoints=node_endpoints
    )


def throttled_answer(context: FetchContext, throttle_ms: int) -> Any:
    """The empty answer of a Fetch over its byte-rate quota (an incremental session keeps its id)."""
    code, session_id = context.throttled()
    return _Resp(throttle_time_ms=throttle_ms, error_code=code, session_id=session_id, responses=[])


def leader_endpoints(ctx: Any, results: list[Any]) -> list[Any]:
    """Endpoints (on the request's listener) of the leaders that partitions answering NOT_LEADER_OR_FOLLOWER
    or FENCED_LEADER_EPOCH name in ``current_leader`` (KIP-951), by node id."""
    brokers = ctx.services.metadata.brokers
    ids = sorted(
        {
            r.current_leader.leader_id
            for r in results
            if r.error_code in _LEADER_MOVED and r.current_leader.leader_id >= 0
        }
    )
    out = []
    for node_id in ids:
        info = brokers.get(node_id)
        ep = info.listener_endpoint(ctx.listener) if info is not None else None
        if ep is not None:
            out.append(_Resp.NodeEndpoint(node_id=node_id, host=ep[0], port=ep[1], rack=info.rack))
    return out
