"""AlterPartitionReassignments (key 45), v0: served by the controller (KIP-455 in ZooKeeper mode). Each
partition gets a target replica list (the reassignment starts: the added brokers follow the leader; once all
target replicas are in the ISR the leader moves to a target replica if needed and the removed brokers delete
their replicas) or null (its ongoing reassignment is cancelled: back to the original replicas). The answer
comes once the reassignment has started, not when it completes. Per partition: UNKNOWN_TOPIC_OR_PARTITION
(unknown or being deleted), INVALID_REPLICA_ASSIGNMENT (empty, duplicate, negative or not live brokers),
NO_REASSIGNMENT_IN_PROGRESS (a cancel with nothing to cancel). Top level: NOT_CONTROLLER from any other
broker. Authorization: Alter on the cluster, checked first; without it the top level and every partition
answer CLUSTER_AUTHORIZATION_FAILED (Kafka's ``getErrorResponse``). Gaps: ``timeout_ms`` is not used
(starting a reassignment takes a few registry writes)."""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.ALTER_PARTITION_REASSIGNMENTS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    R = _API.Response
    if not ctx.authorize_cluster(AclOperation.ALTER):
        code, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, f"{ctx.principal} may not Alter the cluster"
        return R(
            throttle_time_ms=0,
            error_code=code,
            error_message=message,
            responses=[
                R.ReassignableTopicResponse(
                    name=t.name,
                    partitions=[
                        R.ReassignableTopicResponse.ReassignablePartitionResponse(
                            partition_index=p.partition_index, error_code=code, error_message=message
                        )
                        for p in t.partitions
                    ],
                )
                for t in request.topics
            ],
        )
    controller = ctx.services.controller
    requests = {}
    for t in request.topics:
        for p in t.partitions:
            requests[(t.name, p.partition_index)] = None if p.replicas is None else tuple(p.replicas)
    results = None
    if controller.is_active:
        results = await controller.alter_reassignments(requests)
    if results is None:
        return R(throttle_time_ms=0, error_code=ErrorCode.NOT_CONTROLLER, error_message=None, responses=[])
    responses = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            code, message = results[(t.name, p.partition_index)]
            parts.append(
                R.ReassignableTopicResponse.ReassignablePartitionResponse(
                    partition_index=p.partition_index, error_code=code, error_message=message
                )
            )
        responses.append(R.ReassignableTopicResponse(name=t.name, partitions=parts))
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, responses=responses)
