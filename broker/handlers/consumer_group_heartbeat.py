"""ConsumerGroupHeartbeat (key 68), v0-1: the one request of a KIP-848 consumer group member. A member joins
with epoch 0 (v0: an empty member id gets one from the coordinator; v1+: the client generates it, KIP-1082),
heartbeats with its epoch, and leaves with -1 (-2: a static member leaving to come back). The coordinator runs
the reconciliation (``broker.coordinator.consumer``): the answer carries the member's epoch, the heartbeat
interval (``group.consumer.heartbeat.interval.ms``) and, when it changed, the partitions it may own now (by
topic id). The group's records are appended to ``__consumer_offsets`` (acks=all) before the answer.

Errors as Kafka: UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH (rejoin with epoch 0), UNRELEASED_INSTANCE_ID,
FENCED_INSTANCE_ID, INVALID_REQUEST (a malformed heartbeat), UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION,
GROUP_MAX_SIZE_REACHED, INVALID_GROUP_ID (empty group id), GROUP_ID_NOT_FOUND (a member epoch > 0 for a group
that does not exist, or a classic group with members when ``group.consumer.migration.policy`` allows no upgrade),
NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE (the
records could not be written); UNSUPPORTED_VERSION when ``group.coordinator.rebalance.protocols`` lacks
``consumer``. Each error comes with Kafka's kind of message.

Conversion (Kafka's online migration, ``group.consumer.migration.policy``, default ``bidirectional``): joining an
empty classic group makes it a consumer group; joining a classic group with members upgrades it online (its
classic members keep JoinGroup/SyncGroup/Heartbeat, answered from the consumer group's assignment), and the group
goes back to classic when its last consumer-protocol member leaves.

Authorization: READ on the group, checked first (else GROUP_AUTHORIZATION_FAILED); then DESCRIBE on every
subscribed topic name (else TOPIC_AUTHORIZATION_FAILED, as Kafka 4.x); a regular expression
(``subscribed_topic_regex``) matches only topics the principal may DESCRIBE.
"""

from __future__ import annotations

from typing import Final

from broker.api import RequestContext
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from spark_kafkalog.security.acl import AclOperation, ResourceType

from ._groups import client_host, client_id, coordinator, group_authorized, heartbeat_response, subscription_authorized

API_KEY: Final = ApiKey.CONSUMER_GROUP_HEARTBEAT
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response


def _error(code: ErrorCode, message: str | None = None) -> ConsumerGroupHeartbeatResponse:
    return Resp(throttle_time_ms=0, error_code=code, error_message=message, member_epoch=0, heartbeat_interval_ms=0)


async def handle(ctx: RequestContext, request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
    gc = coordinator(ctx)
    if not gc.consumer_protocol_enabled:
        return _error(ErrorCode.UNSUPPORTED_VERSION, "The consumer group protocol is not enabled on this broker.")
    if not group_authorized(ctx, AclOperation.READ, request.group_id):
        return _error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if not subscription_authorized(ctx, request.subscribed_topic_names):
        return _error(
            ErrorCode.TOPIC_AUTHORIZATION_FAILED, "The client is not authorized to describe a subscribed topic."
        )
    try:
        outcome = await gc.consumer_group_heartbeat(
            request,
            version=ctx.version,
            client_id=client_id(ctx),
            client_host=client_host(ctx),
            describable=lambda name: ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name),
        )
    except GroupError as e:
        return _error(e.error_code, str(e) or None)
    return heartbeat_response(Resp, outcome)
