"""ControlledShutdown (key 7), v1-3: served by the controller. Moves the leadership of every partition the
named broker leads to another live in-sync replica and drops the broker from the ISRs it follows in
(``Controller.controlled_shutdown``); ``remaining_partitions`` lists the replicated partitions it still leads
(no other in-sync replica), so the broker retries. NOT_CONTROLLER from any other broker; BROKER_NOT_AVAILABLE
for a broker id that is not registered. Gaps: v0 is not served; the v2+ broker epoch is not checked
(STALE_BROKER_EPOCH is never answered: brokers do not record the epoch of their registration).
Authorization: ClusterAction on the cluster, checked first, else CLUSTER_AUTHORIZATION_FAILED (the brokers'
principal needs it: put it in ``super.users``)."""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.CONTROLLED_SHUTDOWN
VERSIONS = (1, 3)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    services = ctx.services
    if not ctx.authorize_cluster(AclOperation.CLUSTER_ACTION):
        return _API.Response(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, remaining_partitions=[])
    controller = services.controller
    if not controller.is_active:
        return _API.Response(error_code=ErrorCode.NOT_CONTROLLER, remaining_partitions=[])
    if request.broker_id not in services.metadata.brokers:
        return _API.Response(error_code=ErrorCode.BROKER_NOT_AVAILABLE, remaining_partitions=[])
    remaining = await controller.controlled_shutdown(request.broker_id)
    if remaining is None:  # lost the controllership meanwhile
        return _API.Response(error_code=ErrorCode.NOT_CONTROLLER, remaining_partitions=[])
    R = _API.Response.RemainingPartition
    return _API.Response(
        error_code=ErrorCode.NONE,
        remaining_partitions=[R(topic_name=t, partition_index=p) for t, p in remaining],
    )
