"""ShareGroupHeartbeat (key 76), v1: the one membership request of a KIP-932 share group member. A member joins
with epoch 0 and the member id it generated (an empty id is INVALID_REQUEST), heartbeats with its epoch and
leaves with -1. The coordinator (``broker.coordinator.group_share_protocol``) initializes the share state of
newly subscribed partitions, runs the "simple" assignor (a partition may go to several members) and answers
the member's epoch, the heartbeat interval (``group.share.heartbeat.interval.ms``) and, on a join, a full
request or a change, the partitions it may share-fetch now (by topic id). The group's records are appended
to ``__consumer_offsets`` (acks=all) before the answer.

Errors as Kafka 4.4: INVALID_REQUEST (empty member id, epoch < -1, no subscription on join, empty rack id),
UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED (``group.share.max.size``), INVALID_GROUP_ID,
GROUP_ID_NOT_FOUND (a classic or consumer group of that id: "Group <id> is not a share group."; an epoch > 0 for
a group that does not exist), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE (the
records could not be written); UNSUPPORTED_VERSION when ``group.share.enable`` is false (ApiVersions does not
offer the API then).

Authorization: READ on the group first (else GROUP_AUTHORIZATION_FAILED); then DESCRIBE on every subscribed
topic (else TOPIC_AUTHORIZATION_FAILED), as Kafka's ``handleShareGroupHeartbeat``.
"""

from __future__ import annotations

from typing import Final

from broker.api import RequestContext
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.share_group_heartbeat import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse
from spark_kafkalog.security.acl import AclOperation

from ._groups import client_host, client_id, coordinator, group_authorized, heartbeat_response, subscription_authorized

API_KEY: Final = ApiKey.SHARE_GROUP_HEARTBEAT
VERSIONS = (1, 1)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response


def _error(code: ErrorCode, message: str | None = None) -> ShareGroupHeartbeatResponse:
    return Resp(throttle_time_ms=0, error_code=code, error_message=message, member_epoch=0, heartbeat_interval_ms=0)


async def handle(ctx: RequestContext, request: ShareGroupHeartbeatRequest) -> ShareGroupHeartbeatResponse:
    gc = coordinator(ctx)
    if not gc.share_groups_enabled:
        return _error(ErrorCode.UNSUPPORTED_VERSION, "Share groups are not enabled on this broker.")
    if not group_authorized(ctx, AclOperation.READ, request.group_id):
        return _error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if not subscription_authorized(ctx, request.subscribed_topic_names):
        return _error(
            ErrorCode.TOPIC_AUTHORIZATION_FAILED, "The client is not authorized to describe a subscribed topic."
        )
    if not request.member_id:  # Kafka 4.4 answers this before the coordinator, without a message
        return _error(ErrorCode.INVALID_REQUEST)
    try:
        outcome = await gc.share_group_heartbeat(request, client_id=client_id(ctx), client_host=client_host(ctx))
    except GroupError as e:
        return _error(e.error_code, str(e) or None)
    return heartbeat_response(Resp, outcome)
