"""The share consumer's settings beyond ``ClientConfig``'s: the acknowledgement mode and the settings it refuses.

``share.acknowledgement.mode`` (``implicit``, the default, or ``explicit``; Kafka's name, also
``share_acknowledgement_mode`` and the ``acknowledgement_mode=`` keyword) is not a ``ClientConfig`` key: ``split_mode``
takes it out of the settings before they are parsed. ``check_share_settings`` refuses, as Kafka's share consumer
does, the classic and consumer-group settings that mean nothing to a share group, naming what decides instead.
Stateless.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import ConfigError

__all__ = ["MODES", "REFUSED", "check_share_settings", "split_mode"]

MODES = ("implicit", "explicit")
_MODE_KEYS = ("share.acknowledgement.mode", "share_acknowledgement_mode")
REFUSED = {
    "auto.offset.reset": "the share group's config share.auto.offset.reset decides where it starts",
    "enable.auto.commit": "a share consumer acknowledges records, it commits no offsets",
    "auto.commit.interval.ms": "a share consumer acknowledges records, it commits no offsets",
    "group.instance.id": "share groups have no static members",
    "isolation.level": "the share group's config share.isolation.level decides",
    "partition.assignment.strategy": "the share group coordinator assigns partitions",
    "group.protocol": "a share consumer always uses the share group protocol",
    "group.remote.assignor": "the share group coordinator assigns partitions",
    "session.timeout.ms": "the share group's config share.session.timeout.ms decides",
    "heartbeat.interval.ms": "the share group's config share.heartbeat.interval.ms decides",
}


def split_mode(
    settings: Mapping[str, Any] | ClientConfig | None, kwargs: dict[str, Any], mode: str | None
) -> tuple[Any, str]:
    """(``settings`` without the acknowledgement mode, the mode): ``mode`` (the keyword) wins over the settings'
    and ``kwargs``' entries, which are taken out either way (``kwargs`` in place). Raises ``ConfigError``."""
    if isinstance(settings, Mapping):
        settings = dict(settings)
        for key in _MODE_KEYS:
            if key in settings:
                mode = settings.pop(key) if mode is None else mode
                settings.pop(key, None)
    for key in _MODE_KEYS:
        if key in kwargs:
            mode = kwargs.pop(key) if mode is None else mode
            kwargs.pop(key, None)
    text = "implicit" if mode is None else str(mode).strip().lower()
    if text not in MODES:
        raise ConfigError(f"setting 'share.acknowledgement.mode' must be 'implicit' or 'explicit', got {text!r}")
    return settings, text


def check_share_settings(config: ClientConfig) -> str:
    """The group id of ``config``; raises ``ConfigError`` for a setting a share consumer refuses, or no group id."""
    for key, why in REFUSED.items():
        if key in config.explicit:
            raise ConfigError(f"setting {key!r} is not supported by a share consumer: {why}")
    if not config.group_id:
        raise ConfigError("a ShareConsumer needs a group id: ShareConsumer(bootstrap_servers, group_id)")
    return config.group_id
