"""ShareAcknowledge (key 79), v1-2: acknowledge records a share consumer was delivered, without fetching (KIP-932).

Session rules (``broker.share.share_session``): epoch 0 is INVALID_SHARE_SESSION_EPOCH, an unknown session
SHARE_SESSION_NOT_FOUND, an epoch other than the expected one INVALID_SHARE_SESSION_EPOCH (whole-request
errors); -1 acknowledges, then closes the session and releases what the member still holds. Each partition's
``acknowledgement_batches`` are validated (``_share.validate_acks``: INVALID_REQUEST) and applied all or nothing
by its share partition on this leader (INVALID_RECORD_STATE for offsets not acquired by the member), written to
the share coordinator before the answer. Per-partition errors: UNKNOWN_TOPIC_ID, TOPIC_AUTHORIZATION_FAILED,
UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (with ``current_leader`` and ``node_endpoints``).
v2: ``is_renew_ack`` allows type 4 (renew the acquisition lock) and the answer carries
``acquisition_lock_timeout_ms`` (KIP-1222).
UNSUPPORTED_VERSION while ``group.share.enable`` is false (ApiVersions does not offer the API then).
Authorization (Kafka's ``handleShareAcknowledgeRequest``): Read on the group (else GROUP_AUTHORIZATION_FAILED for
the request), Read on each topic.
"""

from __future__ import annotations

from typing import Any, Final

from broker.api import RequestContext
from broker.share.share_session import FINAL_EPOCH, ShareSessionError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from . import _share

API_KEY: Final = ApiKey.SHARE_ACKNOWLEDGE
VERSIONS = (1, 2)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
_Topic = Resp.ShareAcknowledgeTopicResponse
_Part = _Topic.PartitionData


def _error(code: ErrorCode, message: str | None = None, lock_ms: int = 0) -> Any:
    return Resp(throttle_time_ms=0, error_code=code, error_message=message, acquisition_lock_timeout_ms=lock_ms)


async def handle(ctx: RequestContext, request: Any) -> Any:
    mgr = ctx.services.share_partitions
    refused = _share.request_refused(ctx, request, "ShareAcknowledge")
    if refused is not None:
        return _error(*refused)
    group_id = request.group_id or ""
    lock_ms = mgr.settings(group_id).record_lock_duration_ms
    try:
        mgr.sessions.acknowledge_epoch(group_id, request.member_id, request.share_session_epoch)
    except ShareSessionError as e:
        return _error(e.code, str(e), lock_ms)
    renew = ctx.version >= 2 and request.is_renew_ack
    readable: dict[str, bool] = {}
    leaders: set[int] = set()
    topics = []
    for t in request.topics:
        name = _share.topic_name(ctx, t.topic_id)
        parts = []
        for p in t.partitions:
            entry = _Part(partition_index=p.partition_index, error_code=ErrorCode.NONE)
            parts.append(entry)
            code, msg = await _share.acknowledge_partition(
                ctx, group_id, request.member_id, t.topic_id, name, p, readable, renew
            )
            entry.error_code = code
            entry.error_message = msg
            if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                leader, epoch = _share.leader_of(ctx, name, p.partition_index)
                entry.current_leader = _Part.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
                leaders.add(leader)
        topics.append(_Topic(topic_id=t.topic_id, partitions=parts))
    if request.share_session_epoch == FINAL_EPOCH:
        await mgr.close_session(group_id, request.member_id)
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        acquisition_lock_timeout_ms=lock_ms,
        responses=topics,
        node_endpoints=_share.node_endpoints(ctx, leaders, Resp.NodeEndpoint),
    )
