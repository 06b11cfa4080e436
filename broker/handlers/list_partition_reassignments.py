"""ListPartitionReassignments (key 46), v0: served by the controller. Lists the ongoing reassignments (of
the named partitions; every one when ``topics`` is null) with each partition's replicas (target first, then
the original ones), the replicas being added and those being removed; partitions without one, and unknown
topics, are left out. Top level: NOT_CONTROLLER from any other broker. Gaps: no authorization."""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

API_KEY = ApiKey.LIST_PARTITION_REASSIGNMENTS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    controller = ctx.services.controller
    wanted: dict[str, list[int]] | None = None
    if request.topics is not None:
        wanted = {}
        for t in request.topics:
            wanted.setdefault(t.name, []).extend(t.partition_indexes)
    ongoing = None
    if controller.is_active:
        ongoing = await controller.list_reassignments(wanted)
    R = _API.Response
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
