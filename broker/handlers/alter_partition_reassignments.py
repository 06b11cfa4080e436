"""AlterPartitionReassignments (key 45), v0-1: served by the controller (KIP-455 in ZooKeeper mode). Each
partition gets a target replica list (the reassignment starts: the added brokers follow the leader; once all
target replicas are in the ISR the leader moves to a target replica if needed and the removed brokers delete
their replicas) or null (its ongoing reassignment is cancelled: back to the original replicas). The answer
comes once the reassignment has started, not when it completes. Per partition: UNKNOWN_TOPIC_OR_PARTITION
(unknown or being deleted), INVALID_REPLICA_ASSIGNMENT (empty, duplicate, negative or not live brokers),
NO_REASSIGNMENT_IN_PROGRESS (a cancel with nothing to cancel). Top level: NOT_CONTROLLER from any other
broker. Authorization: Alter on the cluster, checked first; without it the top level and every partition
answer CLUSTER_AUTHORIZATION_FAILED (Kafka's ``getErrorResponse``). v1 with ``allow_replication_factor_change``
false: a target replica list whose length differs from the partition's replication factor (its original replicas
during an ongoing reassignment) is INVALID_REPLICATION_FACTOR and not started; the response echoes the option, which
Kafka's admin client checks to tell a broker that ignored it. Gaps: ``timeout_ms`` is not used
(starting a reassignment takes a few registry writes)."""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.ALTER_PARTITION_REASSIGNMENTS
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    R = _API.Response
    if not ctx.authorize_cluster(AclOperation.ALTER):
        code, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, f"{ctx.principal} may not Alter the cluster"
        return R(
            throttle_time_ms=0,
            allow_replication_factor_change=request.allow_replication_factor_change,
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
    allow = request.allow_replication_factor_change
    results = None
    if controller.is_active:
        refused = {} if allow else await _replication_factor_changes(ctx, requests)
        results = await controller.alter_reassignments({tp: r for tp, r in requests.items() if tp not in refused})
        if results is not None:
            results.update(refused)
    if results is None:
        return R(
            throttle_time_ms=0,
            allow_replication_factor_change=allow,
            error_code=ErrorCode.NOT_CONTROLLER,
            error_message=None,
            responses=[],
        )
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
    return R(
        throttle_time_ms=0,
        allow_replication_factor_change=allow,
        error_code=ErrorCode.NONE,
        error_message=None,
        responses=responses,
    )


async def _replication_factor_changes(ctx, requests) -> dict[tuple[str, int], tuple[ErrorCode, str]]:
    """The targets of ``requests`` that would change their partition's replication factor (the current replicas'
    count, or the original replicas' during an ongoing reassignment): INVALID_REPLICATION_FACTOR."""
    targets = {tp: r for tp, r in requests.items() if r is not None}
    if not targets:
        return {}
    wanted: dict[str, list[int]] = {}
    for name, p in targets:
        wanted.setdefault(name, []).append(p)
    ongoing = await ctx.services.controller.list_reassignments(wanted) or []
    factor = {(name, p): len(a.replicas) - len(a.adding) for name, p, a in ongoing}
    topics = ctx.services.metadata.topics
    refused = {}
    for (name, p), target in targets.items():
        current = factor.get((name, p))
        if current is None and name in topics and p in topics[name].replicas:
            current = len(topics[name].replicas[p])
        if current is not None and len(target) != current:
            refused[(name, p)] = (
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"the replication factor of {name}-{p} would change from {current} to {len(target)}, "
                "but allow_replication_factor_change is false",
            )
    return refused
