"""Where group configs (``GROUP`` config resources, type 32: a consumer or share group's own
``share.record.lock.duration.ms`` and the like) live in ZooKeeper (pure; no I/O).

Kafka keeps them only in KRaft (``ConfigRecord``s of type ``GROUP``, KIP-848/KIP-932). kafkalog keeps one config
entity per group in the format and place of Kafka's other ``ConfigEntityZNode`` entities
(``/config/<entity type>/<name>``, Kafka's ``ConfigType.GROUP`` = ``groups`` as the type), with a change
notification naming ``groups/<name>`` after each write (paths relative to the chroot; the name sanitized with
``sanitize_entity_name``, which leaves ``[A-Za-z0-9._-]`` as it is)::

    /config/groups/<sanitized group id>     {"version":1,"config":{"share.auto.offset.reset":"earliest",
                                             "share.record.lock.duration.ms":"15000"}}
    /config/changes/config_change_<seq>      {"version":2,"entity_path":"groups/<sanitized group id>"}

A group whose keys were all deleted keeps its node with an empty config and is not listed. Thread-safe (pure
functions and constants).
"""

from __future__ import annotations

from .zk_layout import desanitize_entity_name, sanitize_entity_name

__all__ = ["GROUPS_CONFIG", "GROUPS_SEGMENT", "group_config_path", "group_entity_path", "parse_group_entity_path"]

GROUPS_SEGMENT = "groups"
GROUPS_CONFIG = f"/config/{GROUPS_SEGMENT}"


def group_entity_path(group_id: str) -> str:
    """``groups/<sanitized group id>``, the entity path of change notifications; ValueError for an empty id."""
    if not isinstance(group_id, str) or not group_id:
        raise ValueError(f"a group config needs a non-empty group id, got {group_id!r}")
    return f"{GROUPS_SEGMENT}/{sanitize_entity_name(group_id)}"


def group_config_path(group_id: str) -> str:
    """``/config/groups/<sanitized group id>``."""
    return f"/config/{group_entity_path(group_id)}"


def parse_group_entity_path(entity_path: str) -> str | None:
    """The group id a change notification's entity path names; None for another entity type or a name that does
    not desanitize."""
    segment, _, sanitized = entity_path.partition("/")
    if segment != GROUPS_SEGMENT or not sanitized or "/" in sanitized:
        return None
    try:
        return desanitize_entity_name(sanitized) or None
    except UnicodeDecodeError:
        return None
