"""ListClientMetricsResources (key 74, Kafka 4.1+: ListConfigResources), v0 (KIP-714): the names of the client
metrics subscriptions (``CLIENT_METRICS`` config resources with at least one key set) as the registry holds them
now (so a list right after an IncrementalAlterConfigs answered by any broker sees it), sorted. v1 (KIP-1142: every config resource type) is not served; Kafka 4.x admin clients list client metrics
resources at v0.
Authorization: DescribeConfigs on the cluster, else CLUSTER_AUTHORIZATION_FAILED (as Kafka).
"""

from __future__ import annotations

from broker.cluster.registry import RegistryError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.LIST_CLIENT_METRICS_RESOURCES
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    if not ctx.authorize_cluster(AclOperation.DESCRIBE_CONFIGS):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, client_metrics_resources=[])
    b = ctx.services
    try:
        names = sorted(await b.run_blocking(b.registry.client_metrics_configs))
    except RegistryError as e:
        ctx.log.warning("ListClientMetricsResources: could not read the subscriptions: %s", e)
        return Resp(throttle_time_ms=0, error_code=ErrorCode.UNKNOWN_SERVER_ERROR, client_metrics_resources=[])
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        client_metrics_resources=[Resp.ClientMetricsResource(name=n) for n in names],
    )
