"""Config administration for ``AdminClient``: DescribeConfigs (key 32), AlterConfigs (33) and
IncrementalAlterConfigs (44).

Resources are ``ConfigResource(type, name)``: ``TOPIC`` (2) by topic name, ``BROKER`` (4) by broker id, or
``""`` for the cluster-wide dynamic defaults, ``CLIENT_METRICS`` (16) by subscription name (KIP-714), ``GROUP`` (32)
by group id (a consumer or share group's own configs). A broker resource with an id is sent to that broker (Kafka's
routing; it describes its own configs), everything else to any broker. ``alter_configs`` replaces each
resource's dynamic set; ``incremental_alter_configs`` takes ``AlterConfigOp``s (SET, DELETE, APPEND,
SUBTRACT). Per-resource failures raise one ``AdminOperationError`` keyed by resource. Thread-safe like
``KafkaClient``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from spark_kafkalog.client.admin.admin_steps import AdminRequest, AdminSteps, fixed
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

__all__ = [
    "AlterConfigOp",
    "ConfigEntry",
    "ConfigResource",
    "TOPIC",
    "BROKER",
    "CLIENT_METRICS",
    "GROUP",
    "SET",
    "DELETE",
    "APPEND",
    "SUBTRACT",
    "SOURCE_NAMES",
    "describe_configs",
    "describe_configs_steps",
    "alter_configs",
    "alter_configs_steps",
    "run_steps",
    "list_client_metrics_resources_steps",
    "Steps",
]

TOPIC, BROKER, CLIENT_METRICS, GROUP = 2, 4, 16, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
SOURCE_NAMES = {
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "DYNAMIC_CLIENT_METRICS_CONFIG",
    8: "DYNAMIC_GROUP_CONFIG",
}
_DESCRIBE = int(ApiKey.DESCRIBE_CONFIGS)
_ALTER = int(ApiKey.ALTER_CONFIGS)
_INCREMENTAL = int(ApiKey.INCREMENTAL_ALTER_CONFIGS)
_LIST_CLIENT_METRICS = int(ApiKey.LIST_CLIENT_METRICS_RESOURCES)

Send = Callable[..., tuple[int, Any]]
"""``KafkaClient.send_request`` behind retries: (api key, body, node_id=) -> (version, response)."""

T = TypeVar("T")
Steps = Generator[tuple[int, Any, "int | None"], tuple[int, Any], T]
"""A call as requests: yields ``(api key, body, node id or None)``, is sent ``(version, response)`` back and
returns its result - driven by ``run_steps`` (blocking) or the asyncio admin client (``client.aio.admin``)."""


def run_steps(steps: Steps[T], send: Send) -> T:
    """Drive ``steps`` with the blocking ``send``."""
    try:
        api_key, body, node = next(steps)
        while True:
            api_key, body, node = steps.send(send(api_key, body, node_id=node))
    except StopIteration as done:
        return done.value


class ConfigResource(NamedTuple):
    type: int
    name: str


class AlterConfigOp(NamedTuple):
    name: str
    value: str | None = None
    op: int = SET


@dataclass(frozen=True)
class ConfigEntry:
    """One described config: its value (None when sensitive or unset), source (``SOURCE_NAMES``) and the
    synonyms ``(name, value, source)`` in precedence order."""

    name: str
    value: str | None
    source: int
    read_only: bool
    sensitive: bool
    synonyms: tuple[tuple[str, str | None, int], ...] = ()

    @property
    def source_name(self) -> str:
        return SOURCE_NAMES.get(self.source, f"UNKNOWN({self.source})")


def _node(resource: ConfigResource) -> int | None:
    return int(resource.name) if resource.type == BROKER and resource.name.isdigit() else None


def describe_configs(
    send: Send, resources: Iterable[ConfigResource], keys: Iterable[str] | None, synonyms: bool
) -> tuple[dict[ConfigResource, list[ConfigEntry]], dict[ConfigResource, KafkaClientError]]:
    """One DescribeConfigs per target broker; returns (entries by resource, failures by resource)."""
    return run_steps(describe_configs_steps(resources, keys, synonyms), send)


def describe_configs_steps(
    resources: Iterable[ConfigResource], keys: Iterable[str] | None, synonyms: bool
) -> Steps[tuple[dict[ConfigResource, list[ConfigEntry]], dict[ConfigResource, KafkaClientError]]]:
    """``describe_configs`` as ``Steps``."""
    R = API_BY_KEY[_DESCRIBE].Request
    wanted = None if keys is None else list(keys)
    out: dict[ConfigResource, list[ConfigEntry]] = {}
    errors: dict[ConfigResource, KafkaClientError] = {}
    by_node: dict[int | None, list[ConfigResource]] = {}
    for r in resources:
        r = ConfigResource(*r)
        by_node.setdefault(_node(r), []).append(r)
    for node, group in by_node.items():
        body = R(
            resources=[
                R.DescribeConfigsResource(resource_type=r.type, resource_name=r.name, configuration_keys=wanted)
                for r in group
            ],
            include_synonyms=synonyms,
            include_documentation=False,
        )
        _, response = yield _DESCRIBE, body, node
        for result in response.results:
            res = ConfigResource(result.resource_type, result.resource_name)
            if result.error_code:
                errors[res] = error_for_code(result.error_code, "DescribeConfigs", detail=result.error_message)
                continue
            out[res] = [
                ConfigEntry(
                    e.name,
                    e.value,
                    e.config_source if e.config_source >= 0 else (5 if e.is_default else 4),
                    e.read_only,
                    e.is_sensitive,
                    tuple((s.name, s.value, s.source) for s in e.synonyms),
                )
                for e in result.configs
            ]
    return out, errors


def alter_configs(
    send: Send,
    changes: Mapping[ConfigResource, Mapping[str, str] | Iterable[AlterConfigOp]],
    *,
    incremental: bool,
    validate_only: bool,
) -> dict[ConfigResource, KafkaClientError]:
    """AlterConfigs (``{resource: {name: value}}``) or IncrementalAlterConfigs (``{resource: [ops]}``);
    returns the failed resources."""
    return run_steps(alter_configs_steps(changes, incremental=incremental, validate_only=validate_only), send)


def alter_configs_steps(
    changes: Mapping[ConfigResource, Mapping[str, str] | Iterable[AlterConfigOp]],
    *,
    incremental: bool,
    validate_only: bool,
) -> Steps[dict[ConfigResource, KafkaClientError]]:
    """``alter_configs`` as ``Steps``."""
    api = _INCREMENTAL if incremental else _ALTER
    R = API_BY_KEY[api].Request
    by_node: dict[int | None, list[Any]] = {}
    for res, configs in changes.items():
        res = ConfigResource(*res)
        if incremental:
            ops = [AlterConfigOp(*o) for o in configs]
            items = [
                R.AlterConfigsResource.AlterableConfig(name=o.name, config_operation=o.op, value=o.value) for o in ops
            ]
        else:
            assert isinstance(configs, Mapping)
            items = [R.AlterConfigsResource.AlterableConfig(name=k, value=v) for k, v in configs.items()]
        by_node.setdefault(_node(res), []).append(
            R.AlterConfigsResource(resource_type=res.type, resource_name=res.name, configs=items)
        )
    errors: dict[ConfigResource, KafkaClientError] = {}
    what = "IncrementalAlterConfigs" if incremental else "AlterConfigs"
    for node, group in by_node.items():
        _, response = yield api, R(resources=group, validate_only=validate_only), node
        for r in response.responses:
            if r.error_code:
                errors[ConfigResource(r.resource_type, r.resource_name)] = error_for_code(
                    r.error_code, what, detail=r.error_message
                )
    return errors


def list_client_metrics_resources_steps() -> AdminSteps[list[str]]:
    """The client metrics subscriptions (KIP-714 ``CLIENT_METRICS`` resources), sorted: one
    ListClientMetricsResources (v0) to any broker; a refusal (CLUSTER_AUTHORIZATION_FAILED) raises."""
    body = API_BY_KEY[_LIST_CLIENT_METRICS].Request()
    _, response, peer = yield AdminRequest(_LIST_CLIENT_METRICS, fixed(body), "ListClientMetricsResources")
    if response.error_code:
        raise error_for_code(response.error_code, "ListClientMetricsResources", broker=peer)
    return sorted(r.name for r in response.client_metrics_resources)
