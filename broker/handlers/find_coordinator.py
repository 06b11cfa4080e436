"""FindCoordinator (key 10), v0-6: the broker coordinating a group (key type 0): the leader of the group's
``__consumer_offsets`` partition, which is created (compacted, ``offsets.topic.num.partitions``) on the first
lookup. COORDINATOR_NOT_AVAILABLE (retriable) while it has no leader. Key type 1 (a transactional id): the leader
of the id's ``__transaction_state`` partition (created, compacted, ``transaction.state.log.num.partitions``, on
the first lookup); COORDINATOR_NOT_AVAILABLE while it has no leader or that leader (this broker) is still loading
it. Key type 2 (v6+, KIP-932; a share-partition ``"group:topic_id:partition"``, the topic id in Kafka's base64):
the leader of the key's ``__share_group_state`` partition (created on the first lookup; COORDINATOR_NOT_AVAILABLE
while it has no leader or is still loading); a malformed key, or key type 2 below v6, is INVALID_REQUEST. Other
key types are INVALID_REQUEST. v0-3 look up one ``key``; v4+ every key of ``coordinator_keys``, each answered in
its own ``coordinators`` entry with its own error (KIP-699), in request order. The coordinator is given by its
endpoint of the listener the request came in on; one without that listener is COORDINATOR_NOT_AVAILABLE (as
Kafka, whose lookup by listener finds no node).

Authorization (Kafka's ``getCoordinator``), per key and before anything else: a group key needs DESCRIBE on the
group (else GROUP_AUTHORIZATION_FAILED), a transactional id DESCRIBE on the transactional id (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), a share key CLUSTER_ACTION on the cluster (else
CLUSTER_AUTHORIZATION_FAILED), answered with no node (-1, "", -1).
"""

from __future__ import annotations

from typing import Final

from broker.api import RequestContext
from broker.share.records import InvalidCoordinatorKey, parse_coordinator_key
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, group_authorized
from ._txns import txn_id_authorized

API_KEY: Final = ApiKey.FIND_COORDINATOR
VERSIONS = (0, 6)
_API = API_BY_KEY[API_KEY]
_BATCHED_FROM = 4
_SHARE_FROM = 6


async def _lookup(ctx, key_type: int, key: str) -> tuple[ErrorCode, str | None, int, str, int]:
    """(error, message, node id, host, port) of the coordinator of ``key``."""
    if key_type == 0 and not group_authorized(ctx, AclOperation.DESCRIBE, key):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, f"{ctx.principal} may not describe group {key!r}", -1, "", -1
    if key_type == 1 and not txn_id_authorized(ctx, AclOperation.DESCRIBE, key):
        message = f"{ctx.principal} may not describe transactional id {key!r}"
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, message, -1, "", -1
    if key_type == 2:
        if not ctx.authorize_cluster(AclOperation.CLUSTER_ACTION):
            return (
                ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                f"{ctx.principal} may not find share coordinators",
                -1,
                "",
                -1,
            )
        if ctx.version < _SHARE_FROM:
            return ErrorCode.INVALID_REQUEST, f"key type 2 (share) needs FindCoordinator v{_SHARE_FROM}+", -1, "", -1
        try:
            parse_coordinator_key(key)
        except InvalidCoordinatorKey as e:
            return ErrorCode.INVALID_REQUEST, str(e), -1, "", -1
        if ctx.services.stopping:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, "this broker runs no share coordinator now", -1, "", -1
        code, node = await ctx.services.share_coordinator.find_coordinator(key)
    elif key_type == 1:
        tc = ctx.services.txn_coordinator
        if not key:
            return ErrorCode.INVALID_REQUEST, "the transactional id is empty", -1, "", -1
        if ctx.services.stopping:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, "this broker runs no transaction coordinator now", -1, "", -1
        code, node = await tc.find_coordinator(key)
    elif key_type != 0:
        message = f"unknown coordinator key type {key_type} (0 group, 1 transaction, 2 share)"
        return ErrorCode.INVALID_REQUEST, message, -1, "", -1
    else:
        if not key:
            return ErrorCode.INVALID_GROUP_ID, "the group id is empty", -1, "", -1
        if ctx.services.stopping:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, "this broker runs no group coordinator now", -1, "", -1
        code, node = await coordinator(ctx).find_coordinator(key)
    info = ctx.services.metadata.brokers.get(node)
    if code != ErrorCode.NONE or info is None:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{key!r} has no coordinator yet", -1, "", -1
    endpoint = info.listener_endpoint(ctx.listener)
    if endpoint is None:
        message = f"the coordinator of {key!r}, broker {node}, has no listener {ctx.listener}"
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, message, -1, "", -1
    return ErrorCode.NONE, None, node, endpoint[0], endpoint[1]


async def handle(ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    Resp = _API.Response
    if ctx.version < _BATCHED_FROM:
        code, message, node, host, port = await _lookup(ctx, request.key_type, request.key)
        return Resp(throttle_time_ms=0, error_code=code, error_message=message, node_id=node, host=host, port=port)
    coordinators: list[FindCoordinatorResponse.Coordinator] = []
    for key in request.coordinator_keys:
        code, message, node, host, port = await _lookup(ctx, request.key_type, key)
        coordinators.append(
            Resp.Coordinator(key=key, node_id=node, host=host, port=port, error_code=code, error_message=message)
        )
    return Resp(throttle_time_ms=0, coordinators=coordinators)
