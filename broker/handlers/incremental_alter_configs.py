"""IncrementalAlterConfigs (key 44), v0-1: change dynamic configs key by key: SET (0), DELETE (1), APPEND (2)
and SUBTRACT (3) (the last two for list configs such as cleanup.policy), of topics (type 2: the topic's
overrides in ``/config/topics/<t>``) and brokers (type 4: name empty for the cluster-wide ``<default>``, or a
broker id; only the log-level defaults such as ``log.retention.ms`` are dynamic) and client metrics
subscriptions (type 16, KIP-714: ``metrics`` and ``match`` lists, ``interval.ms``; ``/config/client-metrics/<name>``,
checked as Kafka's ``ClientMetricsConfigs.validate``; deleting every key removes the subscription) and groups (type
32: ``share.auto.offset.reset``, ``share.record.lock.duration.ms`` and Kafka's other group configs in
``/config/groups/<group>``, checked as Kafka's ``GroupConfig.validate``; the group need not exist). Written to ZooKeeper with a
``/config/changes`` notification by whichever broker receives the request; every broker applies it live.
validate_only checks without writing. Errors per resource (``broker.config_admin.alter``): INVALID_CONFIG (also
APPEND/SUBTRACT on a non-list key), UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST (other resource types, a
resource or key named twice, an unknown operation).
Authorization: AlterConfigs on the cluster for a broker, broker-logger or client metrics resource (else
CLUSTER_AUTHORIZATION_FAILED), on the topic for a topic (else TOPIC_AUTHORIZATION_FAILED, before its
existence), on the group for a group (else GROUP_AUTHORIZATION_FAILED), per resource after the named-twice check; refused resources carry no message.
"""

from __future__ import annotations

from broker.config_admin.alter import alter_resources
from broker.handlers._config_auth import config_authorization_error
from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.INCREMENTAL_ALTER_CONFIGS
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    responses = await alter_resources(
        ctx.services,
        request,
        Resp,
        lambda res: [(c.name, c.config_operation, c.value) for c in res.configs],
        incremental=True,
        refused=lambda rtype, name: config_authorization_error(ctx, AclOperation.ALTER_CONFIGS, rtype, name),
    )
    return Resp(throttle_time_ms=0, responses=responses)
