"""DescribeCluster (key 60), v0-2: cluster id, controller and live brokers (the admin clients' view).
Only broker endpoints (``endpoint_type`` 1) exist; asking for controller endpoints (2) is
UNSUPPORTED_ENDPOINT_TYPE. Each broker is given by its endpoint of the listener the request came in on;
brokers without that listener are left out (Kafka's ``getAliveBrokerNodes(listenerName)``). No ACL is
needed. ``cluster_authorized_operations``: with ``include_cluster_authorized_operations`` the cluster's
authorized-operations bitfield, 0 without Describe on the cluster; otherwise -2147483648 ("not requested").
v2 (KIP-1073): every broker listed is ``is_fenced`` false and ``include_fenced_brokers`` adds none: a
kafkalog broker is in the cluster's metadata only while its registration is live (there is no fenced state).
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import CLUSTER_NAME, AclOperation, ResourceType

API_KEY = ApiKey.DESCRIBE_CLUSTER
VERSIONS = (0, 2)
_API = API_BY_KEY[API_KEY]
NOT_REQUESTED = -2147483648


async def handle(ctx, request):
    b = ctx.services
    Resp = _API.Response
    if ctx.version >= 1 and request.endpoint_type != 1:
        return Resp(
            throttle_time_ms=0,
            error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            error_message=f"endpoint type {request.endpoint_type} is not served; only brokers (1)",
            endpoint_type=request.endpoint_type,
            cluster_id=b.registry.cluster_id,
            brokers=[],
        )
    cache = b.metadata
    brokers = [
        Resp.DescribeClusterBroker(broker_id=bid, host=ep[0], port=ep[1], rack=info.rack)
        for bid, info in sorted(cache.brokers.items())
        if (ep := info.listener_endpoint(ctx.listener)) is not None
    ]
    cluster_ops = NOT_REQUESTED
    if request.include_cluster_authorized_operations:
        cluster_ops = (
            ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME)
            if ctx.authorize_cluster(AclOperation.DESCRIBE)
            else 0
        )
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        endpoint_type=1,
        cluster_id=b.registry.cluster_id,
        controller_id=cache.controller_id if cache.controller_id is not None else -1,
        brokers=brokers,
        cluster_authorized_operations=cluster_ops,
    )
