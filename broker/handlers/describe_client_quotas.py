"""DescribeClientQuotas (key 48), v0-1 (KIP-546; `kafka-configs --describe --entity-type users|clients`): the
quota entities a filter selects, with their quota values, read from ZooKeeper (``/config/users``,
``/config/clients``, ``/config/users/<u>/clients``) as Kafka's ZooKeeper-mode brokers read them; any broker
answers. Filter semantics and refusals: ``broker.config_admin.client_quotas`` (INVALID_REQUEST for an empty,
repeated or null-exact component or ip with user/client-id, UNSUPPORTED_VERSION for an unknown entity type;
``entries`` null then). Needs DescribeConfigs on the cluster, else CLUSTER_AUTHORIZATION_FAILED. The registry
unreachable: UNKNOWN_SERVER_ERROR. Gaps: ip entities are never stored, so an ip filter selects nothing.
"""

from __future__ import annotations

from broker.cluster.registry import RegistryError
from broker.config_admin.client_quotas import ClientQuotaError, FilterComponent, select_entities
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.DESCRIBE_CLIENT_QUOTAS
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]


def _error(code: int, message: str) -> object:
    return _API.Response(throttle_time_ms=0, error_code=code, error_message=message, entries=None)


async def handle(ctx, request):
    services = ctx.services
    if not ctx.authorize_cluster(AclOperation.DESCRIBE_CONFIGS):
        return _error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    components = [FilterComponent(c.entity_type, c.match_type, c.match) for c in request.components]
    try:
        configs = await services.run_blocking(services.registry.quota_configs)
        selected = select_entities(configs, components, request.strict)
    except ClientQuotaError as exc:
        return _error(exc.code, exc.message)
    except RegistryError as exc:
        return _error(ErrorCode.UNKNOWN_SERVER_ERROR, f"Could not read the client quotas: {exc}")
    R = _API.Response
    entries = [
        R.EntryData(
            entity=[R.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in entity],
            values=[R.EntryData.ValueData(key=k, value=v) for k, v in sorted(values.items())],
        )
        for entity, values in sorted(selected.items(), key=lambda item: [(t, n or "") for t, n in item[0]])
    ]
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, entries=entries)
