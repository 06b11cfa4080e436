"""AlterClientQuotas (key 49), v0-1 (KIP-546; `kafka-configs --alter --entity-type users|clients
--add-config producer_byte_rate=...`): sets or removes quota keys of user, client-id and user/client-id
entities in ZooKeeper (``/config/users/<u>``, ``/config/clients/<c>``, ``/config/users/<u>/clients/<c>``,
``<default>`` for a null name; a user's SCRAM credentials are kept), each write leaving the change notice
(``users/alice/clients/app``) every broker's quota manager applies. Any broker serves it, as Kafka's
ZooKeeper-mode brokers write ZooKeeper themselves. ``validate_only`` checks without writing.

One result per entry, in request order, with the entity as sent. Per entry: CLUSTER_AUTHORIZATION_FAILED
without AlterConfigs on the cluster (every entry); INVALID_REQUEST for an empty entity or name, an unknown or
repeated entity type, ip entities (refused with user/client-id as by Kafka; alone because kafkalog keeps no
ip quotas), an unknown key, a fractional byte rate or a value that is not positive
(``broker.config_admin.client_quotas``); UNKNOWN_SERVER_ERROR when the registry write fails. An entry with an
error writes nothing.
"""

from __future__ import annotations

from broker.cluster.registry import RegistryError
from broker.config_admin.client_quotas import ClientQuotaError, alteration_entity, alteration_updates
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.ALTER_CLIENT_QUOTAS
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    services = ctx.services
    R = _API.Response
    authorized = ctx.authorize_cluster(AclOperation.ALTER_CONFIGS)
    results = []
    for entry in request.entries:
        code: int = ErrorCode.NONE
        message: str | None = None
        if not authorized:
            code, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
        else:
            try:
                entity = alteration_entity((e.entity_type, e.entity_name) for e in entry.entity)
                updates = alteration_updates((op.key, op.value, op.remove) for op in entry.ops)
                if not request.validate_only:
                    await services.run_blocking(services.registry.alter_quota_config, entity, updates)
            except ClientQuotaError as exc:
                code, message = exc.code, exc.message
            except (RegistryError, ValueError) as exc:
                code, message = ErrorCode.UNKNOWN_SERVER_ERROR, f"Could not alter the client quotas: {exc}"
        results.append(
            R.EntryData(
                error_code=code,
                error_message=message,
                entity=[
                    R.EntryData.EntityData(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity
                ],
            )
        )
    return R(throttle_time_ms=0, entries=results)
