"""What AlterConfigs and IncrementalAlterConfigs do to one resource: compute its new dynamic config set,
validate it, and write it to the registry (``/config/topics/<t>`` or ``/config/brokers/<id|<default>>`` plus
a ``/config/changes`` notification, which every broker follows live: ``broker.metadata.sync``).

Resources: topics (type 2; the topic must exist), brokers (type 4; name ``""`` is the cluster-wide
default ``<default>``, a number is that broker's own dynamic configs) and client metrics subscriptions (type 16,
KIP-714: ``metrics``, ``interval.ms``, ``match`` in ``/config/client-metrics/<name>``, checked as Kafka's
``ClientMetricsConfigs.validate``: ``broker.telemetry.subscriptions``) and groups (type 32: ``share.*`` and
``consumer.*`` group configs in ``/config/groups/<group>``, checked as Kafka's ``GroupConfig.validate``:
``group_config_defs``; the group need not exist; the altering broker's ``services.group_configs`` cache takes
the new config before the answer, the other brokers' with the notification). Any broker may write any of them.
AlterConfigs replaces the resource's whole dynamic set; IncrementalAlterConfigs changes keys one by one:
SET (0), DELETE (1), APPEND (2) and SUBTRACT (3) (list configs only, e.g. ``cleanup.policy``; APPEND starts
from the current value, the broker default when the resource has no override).

Errors per resource, as Kafka's: unknown topic UNKNOWN_TOPIC_OR_PARTITION; other resource types, a resource
or key named twice, a null value in AlterConfigs, an unknown operation INVALID_REQUEST; an unknown key, a
bad value, a broker key that is not dynamic (``broker.config_admin.dynamic``) or APPEND/SUBTRACT on a non-list
key INVALID_CONFIG. ``validate_only`` checks without writing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from spark_kafkalog.protocol import ErrorCode

from ..cluster.registry import NoSuchTopicError, RegistryError
from ..config import KEYS_BY_NAME, ConfigError
from ..log.config import TOPIC_CONFIG_KEYS
from ..telemetry.subscriptions import CLIENT_METRICS, CONFIG_DEFAULTS, CONFIG_TYPES, InvalidSubscriptionError
from ..telemetry.subscriptions import parse_subscription as parse_client_metrics_subscription
from .dynamic import DEFAULT_ENTITY, check_dynamic_broker_config
from .group_config_defs import validate_group_config

__all__ = ["TOPIC", "BROKER", "GROUP", "SET", "DELETE", "APPEND", "SUBTRACT", "AlterError", "alter_resource"]

TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


class AlterError(Exception):
    """One resource's refusal: an error code and the message for the response."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def broker_entity(name: str) -> str:
    """``""`` -> ``<default>``; a broker id stays as it is; anything else is INVALID_REQUEST."""
    if name in ("", DEFAULT_ENTITY):
        return DEFAULT_ENTITY
    if name.isascii() and name.isdigit():
        return str(int(name))
    raise AlterError(ErrorCode.INVALID_REQUEST, f"broker resource name must be a broker id or empty, not {name!r}")


def _is_list(resource_type: int, key: str) -> bool:
    if resource_type == CLIENT_METRICS:
        return CONFIG_TYPES.get(key) == "list"
    if resource_type == GROUP:
        return False
    spec: Any = TOPIC_CONFIG_KEYS.get(key) if resource_type == TOPIC else KEYS_BY_NAME.get(key)
    return spec is not None and spec.type == "list"


def _split(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def apply_ops(
    resource_type: int, current: Mapping[str, str], ops: Sequence[tuple[str, int, str | None]], default_of: Any
) -> dict[str, str]:
    """IncrementalAlterConfigs: ``current`` with ``(name, operation, value)`` applied in order.

    ``default_of(name)`` gives the value APPEND/SUBTRACT start from when ``name`` is not overridden."""
    new = dict(current)
    for name, op, value in ops:
        if op == SET:
            if value is None:
                raise AlterError(ErrorCode.INVALID_REQUEST, f"{name}: SET needs a value")
            new[name] = value
        elif op == DELETE:
            new.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            if not _is_list(resource_type, name):
                raise AlterError(
                    ErrorCode.INVALID_CONFIG,
                    f"{name}: {'APPEND' if op == APPEND else 'SUBTRACT'} applies to list configs only",
                )
            items = _split(new[name] if name in new else default_of(name))
            if op == APPEND:
                items += [v for v in _split(value) if v not in items]
            else:
                items = [v for v in items if v not in _split(value)]
            new[name] = ",".join(items)
        else:
            raise AlterError(ErrorCode.INVALID_REQUEST, f"{name}: unknown config operation {op}")
    return new


async def alter_resource(
    services: Any,
    resource_type: int,
    name: str,
    configs: Sequence[tuple[str, int, str | None]],
    *,
    incremental: bool,
    validate_only: bool,
) -> None:
    """Alter one resource; ``configs`` are ``(name, operation, value)`` (the operation is ignored unless
    ``incremental``: AlterConfigs replaces the whole set). Raises ``AlterError`` for a refusal; returns once the
    registry holds the change."""
    b = services
    dup = [k for k, n in Counter(c[0] for c in configs).items() if n > 1]
    if dup:
        raise AlterError(ErrorCode.INVALID_REQUEST, f"config {dup[0]!r} is named more than once")
    if resource_type == TOPIC:
        if name not in b.metadata.topics:
            raise AlterError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        try:
            current = await b.run_blocking(b.registry.topic_config, name)
        except NoSuchTopicError:
            raise AlterError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist") from None

        def default_of(key: str) -> str:
            entries = {e.name: e.value for e in b.log_config_for({}).describe({})}
            return entries.get(key, "")

    elif resource_type == BROKER:
        entity = broker_entity(name)
        current = await b.run_blocking(b.registry.broker_config, entity)

        def default_of(key: str) -> str:
            spec = KEYS_BY_NAME.get(key)
            value = b.config.originals.get(key) if key in b.config.originals else (spec and spec.default)
            if isinstance(value, (list, tuple)):
                return ",".join(value)
            return "" if value is None else str(value)

    elif resource_type == CLIENT_METRICS:
        if not name:
            raise AlterError(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty")
        current = await b.run_blocking(b.registry.client_metrics_config, name)

        def default_of(key: str) -> str:
            return CONFIG_DEFAULTS.get(key, "")

    elif resource_type == GROUP:
        if not name:
            raise AlterError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
        current = await b.run_blocking(b.registry.group_config, name)

        def default_of(key: str) -> str:
            return ""  # no group config is a list: APPEND/SUBTRACT are refused before this is asked

    else:
        raise AlterError(
            ErrorCode.INVALID_REQUEST,
            f"resource type {resource_type} cannot be altered (2 topic, 4 broker, 16 client metrics, 32 group)",
        )
    if incremental:
        new = apply_ops(resource_type, current, configs, default_of)
    else:
        nulls = [k for k, _, v in configs if v is None]
        if nulls:
            raise AlterError(ErrorCode.INVALID_REQUEST, f"{nulls[0]}: AlterConfigs does not take a null value")
        new = {k: v for k, _, v in configs if v is not None}
    try:
        if resource_type == TOPIC:
            b.log_config_for(new)
        elif resource_type == CLIENT_METRICS:
            parse_client_metrics_subscription(name, new)
        elif resource_type == GROUP:
            validate_group_config(new, b.config)
        else:
            check_dynamic_broker_config(new)
    except ConfigError as e:
        raise AlterError(ErrorCode.INVALID_CONFIG, str(e)) from None
    except InvalidSubscriptionError as e:
        raise AlterError(e.code, str(e)) from None
    if validate_only:
        return
    try:
        if resource_type == TOPIC:
            await b.run_blocking(b.registry.set_topic_config, name, new)
        elif resource_type == CLIENT_METRICS:
            updates: dict[str, str | None] = {k: None for k in current if k not in new}
            await b.run_blocking(b.registry.alter_client_metrics_config, name, updates | new)
        elif resource_type == GROUP:
            gone: dict[str, str | None] = {k: None for k in current if k not in new}
            written = await b.run_blocking(b.registry.alter_group_config, name, gone | new)
            b.group_configs.written(name, written)  # read-your-writes: this broker's cache has it before the answer
        else:
            await b.run_blocking(b.registry.set_broker_config, broker_entity(name), new)
    except NoSuchTopicError:
        raise AlterError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist") from None
    except RegistryError as e:
        raise AlterError(ErrorCode.UNKNOWN_SERVER_ERROR, f"could not write the config: {e}") from None


async def alter_resources(
    services: Any, request: Any, response_cls: Any, ops_of: Any, *, incremental: bool, refused: Any = None
) -> list:
    """AlterConfigs / IncrementalAlterConfigs over every resource of ``request``: one
    ``response_cls.AlterConfigsResourceResponse`` per resource, in order; ``ops_of(resource)`` gives its
    ``(key, operation, value)`` list. A resource named twice is INVALID_REQUEST (both times); then
    ``refused(resource_type, name)`` (when given) may name the authorization error that answers it, with no
    message, as Kafka's ``configsAuthorizationApiError``."""
    named = Counter((r.resource_type, r.resource_name) for r in request.resources)
    responses = []
    for res in request.resources:
        out = response_cls.AlterConfigsResourceResponse(
            error_code=ErrorCode.NONE,
            error_message=None,
            resource_type=res.resource_type,
            resource_name=res.resource_name,
        )
        responses.append(out)
        try:
            if named[(res.resource_type, res.resource_name)] > 1:
                raise AlterError(ErrorCode.INVALID_REQUEST, f"resource {res.resource_name!r} is named more than once")
            denied = refused(res.resource_type, res.resource_name) if refused is not None else None
            if denied is not None:
                out.error_code = denied
                continue
            await alter_resource(
                services,
                res.resource_type,
                res.resource_name,
                ops_of(res),
                incremental=incremental,
                validate_only=request.validate_only,
            )
        except AlterError as e:
            out.error_code, out.error_message = e.code, e.message
    return responses
