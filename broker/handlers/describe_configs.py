"""DescribeConfigs (key 32), v0-4: topic configs (every topic-level key with its value and source: topic
override as the registry holds it now, this broker's or the cluster-wide dynamic broker config,
``server.properties`` or default) and
this broker's configs (dynamic values from ``/config/brokers/<id>`` and ``<default>`` first; read-only
unless dynamic), and client metrics subscriptions (type 16, KIP-714: ``metrics``, ``interval.ms``, ``match``, set
or default, as the registry holds them now; an unknown name describes the defaults, an empty one is
INVALID_REQUEST, as Kafka) and groups (type 32: every group config, ``share.auto.offset.reset`` and the like, set
in ``/config/groups/<group>`` or the broker's default, as the registry holds them now; a group that does not
exist describes the defaults, an empty name is INVALID_REQUEST). ``configuration_keys`` null means all. v0 reports ``is_default``; v1+ ``config_source``
and, when asked, synonyms; v3+ type and documentation. A broker resource must name this broker; an empty
name lists the cluster-wide dynamic defaults (as Kafka does); other resource types (broker loggers, ...) are
INVALID_REQUEST.
Authorization (Kafka's ``ConfigHelper``): DescribeConfigs on the cluster for a broker, broker-logger or
client metrics resource, else CLUSTER_AUTHORIZATION_FAILED "Cluster authorization failed."; on the topic for a topic, else
TOPIC_AUTHORIZATION_FAILED "Topic authorization failed.", before its existence; on the group for a group, else
GROUP_AUTHORIZATION_FAILED "Group authorization failed."; per resource, no configs.
"""

from __future__ import annotations

from broker.cluster.registry import NoSuchTopicError
from broker.config import ConfigError
from broker.config_admin.describe import (
    describe_broker_configs,
    describe_client_metrics_configs,
    describe_default_broker_configs,
    describe_group_configs,
    describe_topic_configs,
)
from broker.config_admin.dynamic import DEFAULT_ENTITY, DynamicBrokerConfig
from broker.handlers._config_auth import config_authorization_error
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.DESCRIBE_CONFIGS
VERSIONS = (0, 4)
_API = API_BY_KEY[API_KEY]
TOPIC, BROKER, CLIENT_METRICS, GROUP = 2, 4, 16, 32
_DENIED_MESSAGE = {
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
}  # Kafka's exception messages


async def handle(ctx, request):
    b = ctx.services
    Resp = _API.Response
    Result = Resp.DescribeConfigsResult
    Entry = Result.DescribeConfigsResourceResult
    results = []
    dynamic = await _dynamic_config(b)
    for res in request.resources:
        out = Result(
            error_code=ErrorCode.NONE,
            error_message=None,
            resource_type=res.resource_type,
            resource_name=res.resource_name,
            configs=[],
        )
        results.append(out)
        denied = config_authorization_error(ctx, AclOperation.DESCRIBE_CONFIGS, res.resource_type, res.resource_name)
        if denied is not None:
            out.error_code, out.error_message = denied, _DENIED_MESSAGE[denied]
            continue
        if res.resource_type == TOPIC:
            overrides = await _topic_overrides(b, res.resource_name)
            if overrides is None:
                out.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                out.error_message = f"topic {res.resource_name!r} does not exist"
                continue
            described = describe_topic_configs(b, overrides, dynamic)
        elif res.resource_type == BROKER:
            if res.resource_name == "":
                described = describe_default_broker_configs(dynamic)
            elif res.resource_name == str(b.broker_id):
                described = describe_broker_configs(b, dynamic)
            else:
                out.error_code = ErrorCode.INVALID_REQUEST
                out.error_message = f"this is broker {b.broker_id}; ask broker {res.resource_name} for its configs"
                continue
        elif res.resource_type == CLIENT_METRICS:
            if not res.resource_name:
                out.error_code = ErrorCode.INVALID_REQUEST
                out.error_message = "Client metrics subscription name must not be empty"
                continue
            described = describe_client_metrics_configs(
                await b.run_blocking(b.registry.client_metrics_config, res.resource_name)
            )
        elif res.resource_type == GROUP:
            if not res.resource_name:
                out.error_code = ErrorCode.INVALID_REQUEST
                out.error_message = "Group name must not be empty"
                continue
            described = describe_group_configs(b, await b.run_blocking(b.registry.group_config, res.resource_name))
        else:
            out.error_code = ErrorCode.INVALID_REQUEST
            out.error_message = (
                f"resource type {res.resource_type} is not supported (2 topic, 4 broker, 16 client metrics, 32 group)"
            )
            continue
        wanted = None if res.configuration_keys is None else set(res.configuration_keys)
        for d in described:
            if wanted is not None and d.name not in wanted:
                continue
            out.configs.append(
                Entry(
                    name=d.name,
                    value=None if d.sensitive else d.value,
                    read_only=d.read_only,
                    is_default=d.is_default,
                    config_source=d.source,
                    is_sensitive=d.sensitive,
                    synonyms=[
                        Entry.DescribeConfigsSynonym(name=n, value=None if d.sensitive else v, source=s)
                        for n, v, s in d.synonyms
                    ]
                    if request.include_synonyms
                    else [],
                    config_type=d.type,
                    documentation=d.doc if request.include_documentation else None,
                )
            )
    return Resp(throttle_time_ms=0, results=results)


async def _topic_overrides(b, name: str) -> dict[str, str] | None:
    """The topic's overrides as the registry holds them now (as Kafka reads ``/config/topics/<t>``), so a
    DescribeConfigs right after an AlterConfigs answered by any broker sees it; None for an unknown topic."""
    if name not in b.metadata.topics:
        return None
    try:
        return await b.run_blocking(b.registry.topic_config, name)
    except NoSuchTopicError:
        return None


async def _dynamic_config(b) -> DynamicBrokerConfig:
    """This broker's dynamic broker configs as the registry holds them now (invalid ones are left out)."""
    dynamic = DynamicBrokerConfig(b.config)
    default = await b.run_blocking(b.registry.broker_config, DEFAULT_ENTITY)
    own = await b.run_blocking(b.registry.broker_config, str(b.broker_id))
    try:
        dynamic.update(default, own)
    except ConfigError:
        pass
    return dynamic
