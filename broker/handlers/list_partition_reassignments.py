"""ListPartitionReassignments (key 46), v0: served by the controller. Lists the ongoing reassignments (of
the named partitions; every one when ``topics`` is null) with each partition's replicas (target first, then
the original ones), the replicas being added and those being removed; partitions without one, and unknown
topics, are left out. Top level: NOT_CONTROLLER from any other broker. Authorization: Describe on the
cluster, checked first; without it the top-level error is CLUSTER_AUTHORIZATION_FAILED and the named
partitions come back bare (Kafka's ``getErrorResponse``)."""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.LIST_PARTITION_REASSIGNMENTS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    R = _API.Response
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        T = R.OngoingTopicReassignment
        return R(
            throttle_time_ms=0,
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            error_message=f"{ctx.principal} may not Describe the cluster",
            topics=[
                T(
                    name=t.name,
                    partitions=[
                        T.OngoingPartitionReassignment(
                            partition_index=i, replicas=[], adding_replicas=[], removing_replicas=[]
                        )
                        for i in t.partition_indexes
                    ],
                )
                for t in request.topics or []
            ],
        )
    controller = ctx.services.controller
    wanted: dict[str, list[int]] | None = None
    if request.topics is not None:
        wanted = {}
        for t in request.topics:
            wanted.setdefault(t.name, []).extend(t.partition_indexes)
    ongoing = None
    if controller.is_active:
        ongoing = await controller.list_reassignments(wanted)
    if ongoing is None:
        return R(throttle_time_ms=0, error_code=ErrorCode.NOT_CONTROLLER, error_message=None, topics=[])
    T = R.OngoingTopicReassignment
    topics: dict[str, list] = {}
    for name, p, assignment in ongoing:
        topics.setdefault(name, []).append(
            T.OngoingPartitionReassignment(
                partition_index=p,
                replicas=list(assignment.replicas),
                adding_replicas=list(assignment.adding),
                removing_replicas=list(assignment.removing),
            )
        )
    return R(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        topics=[T(name=n, partitions=ps) for n, ps in topics.items()],
    )
