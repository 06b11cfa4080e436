"""Kafka's znode layout: the paths and the node encodings a ZooKeeper-mode Kafka cluster uses (pure; no I/O).

Paths are relative to the chroot of ``zookeeper.connect``. The JSON of broker, assignment and partition-state
nodes is in the value types of ``broker.cluster.registry`` (``BrokerInfo``, ``TopicAssignment``,
``PartitionState``), with the whole layout in that module's docstring; this module encodes the remaining
nodes::

    /cluster/id                      {"version":"1","id":"<22-char base64url>"}
    /controller                      {"version":1,"brokerid":1,"timestamp":"<epoch ms>"}   (or a bare "1", pre-0.8.2)
    /controller_epoch                decimal integer, "0" before any election
    /config/topics/<t>               {"version":1,"config":{"cleanup.policy":"compact"}}
    /config/changes/config_change_<10-digit seq>                 {"version":2,"entity_path":"topics/<t>"}
    /config/brokers/<id> and /config/brokers/<default>           {"version":1,"config":{"log.retention.ms":"5"}}
    /config/users/<sanitized user>   {"version":1,"config":{"SCRAM-SHA-256":"salt=..,stored_key=..,server_key=..,
                                     iterations=8192","producer_byte_rate":"1024"}}   SCRAM credentials and quotas;
                                     the change notice's entity path is "users/<sanitized user>" (data may be
                                     null when only the user's client-id quota children exist)
    /consumers/<g>/offsets/<t>/<p>   decimal offset, e.g. "42"
    /latest_producer_id_block        null (kafkalog allocates producer ids without it; Kafka's controller
                                     reads a block {"version":1,"broker":1,"block_start":"0","block_end":"999"}
                                     from any data that is not null, so the node must not hold b"")

ACLs (Kafka's ``ZkAclStore``; ``<Type>`` is ``ResourceType.kafka_name``: Topic, Group, Cluster, TransactionalId,
DelegationToken, User; names containing "/" are refused)::

    /kafka-acl/<Type>/<name>                         LITERAL patterns (``*`` included)
    /kafka-acl-extended/prefixed/<Type>/<prefix>     PREFIXED patterns (lowercase "prefixed")
        {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}
        (PascalCase operation and permission names: DescribeConfigs, IdempotentWrite, ClusterAction; a node
        is deleted when its last ACL goes)
    /kafka-acl-changes/acl_changes_<10-digit seq>              TOPIC:foo   (literal; the enum constant, UTF-8)
    /kafka-acl-extended-changes/acl_changes_<10-digit seq>
        {"version":1,"resourceType":"TOPIC","name":"foo","patternType":"PREFIXED"}

JSON is written compact (no spaces), as Kafka writes it. Decoders raise ValueError naming the node and quoting
(at most 200 characters of) the data. Everything here is a pure function or a constant: thread-safe.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING

from spark_kafkalog.protocol.topic_name import validate_topic_name
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)

if TYPE_CHECKING:
    from broker.cluster.registry import TopicAssignment

__all__ = [
    "PERSISTENT_PATHS",
    "BROKER_IDS",
    "TOPICS",
    "CONTROLLER",
    "CONTROLLER_EPOCH",
    "CLUSTER_ID",
    "DELETE_TOPICS",
    "CONFIG_CHANGE_PREFIX",
    "PRODUCER_ID_BLOCK",
    "check_topic",
    "check_group",
    "broker_path",
    "topic_path",
    "partitions_path",
    "partition_path",
    "partition_state_path",
    "topic_config_path",
    "broker_config_path",
    "USERS_CONFIG",
    "sanitize_entity_name",
    "desanitize_entity_name",
    "user_config_path",
    "config_change_sequence",
    "CONFIG_CHANGES",
    "BROKER_DEFAULT_ENTITY",
    "deletion_path",
    "consumer_offset_path",
    "encode_cluster_id",
    "decode_cluster_id",
    "encode_controller",
    "decode_controller",
    "encode_controller_epoch",
    "decode_controller_epoch",
    "encode_topic_config",
    "decode_topic_config",
    "decode_entity_config",
    "decode_user_config",
    "apply_config_updates",
    "encode_config_change",
    "decode_config_change",
    "encode_offset",
    "decode_offset",
    "check_replacement",
    "ACL_ROOTS",
    "ACL_CHANGE_DIRS",
    "ACL_CHANGE_PREFIX",
    "ACL_CHANGE_EXPIRY_S",
    "acl_store_path",
    "acl_type_path",
    "acl_path",
    "acl_change_dir",
    "acl_change_sequence",
    "acl_required_paths",
    "parse_acl_store",
    "encode_acls",
    "decode_acls",
    "encode_acl_change",
    "decode_acl_change",
]

# Persistent paths every Kafka broker creates at start-up (KafkaZkClient.createTopLevelPaths), with null data.
PERSISTENT_PATHS = (
    "/consumers",
    "/brokers/ids",
    "/brokers/topics",
    "/brokers/seqid",
    "/config/changes",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/admin/delete_topics",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
    "/cluster",
)
BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
CLUSTER_ID = "/cluster/id"
DELETE_TOPICS = "/admin/delete_topics"
CONFIG_CHANGES = "/config/changes"
CONFIG_CHANGE_PREFIX = "/config/changes/config_change_"
PRODUCER_ID_BLOCK = "/latest_producer_id_block"
USERS_CONFIG = "/config/users"
BROKER_DEFAULT_ENTITY = "<default>"
"""The entity name of the cluster-wide dynamic broker defaults (``/config/brokers/<default>``)."""


def _dumps(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


# -- names and paths -----------------------------------------------------------------------------------


def check_topic(name: str) -> str:
    """``name`` when it is a legal topic name; ``InvalidTopicNameError`` (a ValueError) otherwise."""
    return validate_topic_name(name)


def check_group(group: str) -> str:
    """``group`` when it can be one path component; ValueError naming it otherwise."""
    if not isinstance(group, str) or not group or "/" in group or group in (".", ".."):
        raise ValueError(f"invalid consumer group name {group!r} for a ZooKeeper path")
    return group


def _check_partition(partition: int) -> int:
    if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
        raise ValueError(f"partition must be a non-negative int, got {partition!r}")
    return partition


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS}/{int(broker_id)}"


def topic_path(topic: str) -> str:
    """The topic's assignment node (the caller checks the name: children read from ZooKeeper are not)."""
    return f"{TOPICS}/{topic}"


def partitions_path(topic: str) -> str:
    return f"{TOPICS}/{topic}/partitions"


def partition_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{_check_partition(partition)}"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{_check_partition(partition)}/state"


def topic_config_path(topic: str) -> str:
    return f"/config/topics/{topic}"


def broker_config_path(entity: str) -> str:
    """``/config/brokers/<id>`` or ``/config/brokers/<default>``; ValueError for any other entity name."""
    if entity != BROKER_DEFAULT_ENTITY and not (entity.isdigit() and entity.isascii()):
        raise ValueError(f"broker config entity must be a broker id or {BROKER_DEFAULT_ENTITY}, not {entity!r}")
    return f"/config/brokers/{entity}"


def sanitize_entity_name(name: str) -> str:
    """Kafka's ``Sanitizer.sanitize``: the name as one path component, Java's ``URLEncoder`` (UTF-8) with "*" as
    ``%2A`` and space as ``%20`` (not "+"): only ``[A-Za-z0-9._-]`` stay as they are (``a@b.c`` -> ``a%40b.c``).
    ``<default>`` (the default entity of quotas) is kept as it is, as Kafka keeps it."""
    if name == BROKER_DEFAULT_ENTITY:
        return name
    return "".join(
        ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
        for ch in name
    )


def desanitize_entity_name(sanitized: str) -> str:
    """Kafka's ``Sanitizer.desanitize`` (``URLDecoder``: ``%XX`` sequences as UTF-8, "+" as a space)."""
    return urllib.parse.unquote_plus(sanitized, errors="strict")


def user_config_path(user: str) -> str:
    """``/config/users/<sanitized user>``; ValueError for an empty name."""
    if not isinstance(user, str) or not user:
        raise ValueError(f"a user entity needs a non-empty name, got {user!r}")
    return f"{USERS_CONFIG}/{sanitize_entity_name(user)}"


def config_change_sequence(child: str) -> int | None:
    """The sequence number of a ``config_change_<10 digits>`` child of ``/config/changes`` (None: another node)."""
    prefix = CONFIG_CHANGE_PREFIX.rsplit("/", 1)[1]
    digits = child[len(prefix) :] if child.startswith(prefix) else ""
    return int(digits) if digits.isdigit() and digits.isascii() else None


def deletion_path(topic: str) -> str:
    return f"{DELETE_TOPICS}/{topic}"


def consumer_offset_path(group: str, topic: str, partition: int) -> str:
    """``/consumers/<group>/offsets/<topic>/<partition>``; group and topic names are checked."""
    return f"/consumers/{check_group(group)}/offsets/{check_topic(topic)}/{int(partition)}"


# -- encodings -----------------------------------------------------------------------------------------


def encode_cluster_id(cluster_id: str) -> bytes:
    return _dumps({"version": "1", "id": cluster_id})


def decode_cluster_id(data: bytes, *, what: str = CLUSTER_ID) -> str:
    try:
        return str(json.loads(data)["id"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{what}: malformed cluster id node {data!r:.200}") from exc


def encode_controller(broker_id: int, timestamp_ms: int | None = None) -> bytes:
    """The ``/controller`` node of ``broker_id`` (timestamp: now unless given)."""
    if timestamp_ms is None:
        timestamp_ms = int(time.time() * 1000)
    return _dumps({"version": 1, "brokerid": int(broker_id), "timestamp": str(timestamp_ms)})


def decode_controller(data: bytes) -> int:
    """The broker id of a ``/controller`` node: JSON, or the bare id written before Kafka 0.8.2."""
    try:
        return int(json.loads(data)["brokerid"])
    except (ValueError, KeyError, TypeError):
        pass
    try:
        return int(data)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{CONTROLLER}: malformed controller node {data!r:.200}") from exc


def encode_controller_epoch(epoch: int) -> bytes:
    return str(int(epoch)).encode()


def decode_controller_epoch(data: bytes | None) -> int:
    """The epoch in ``/controller_epoch`` (an empty node counts as 0)."""
    try:
        return int(data or b"0")
    except ValueError as exc:
        raise ValueError(f"{CONTROLLER_EPOCH}: malformed controller epoch {data!r:.200}") from exc


def encode_topic_config(config: Mapping[str, object]) -> bytes:
    """``/config/topics/<t>``: every key and value as a string."""
    return _dumps({"version": 1, "config": {str(k): str(v) for k, v in config.items()}})


def decode_topic_config(topic: str, data: bytes) -> dict[str, str]:
    return decode_entity_config(topic_config_path(topic), data)


def decode_entity_config(path: str, data: bytes) -> dict[str, str]:
    """The ``config`` map of a ``/config/<type>/<entity>`` node (same format for topics and brokers)."""
    try:
        obj = json.loads(data)
        return {str(k): str(v) for k, v in obj["config"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: malformed config node {data!r:.200}") from exc


def decode_user_config(path: str, data: bytes | None) -> dict[str, str]:
    """The ``config`` map of a ``/config/users/<u>`` node; null or empty data (a node Kafka created only as the
    parent of ``/config/users/<u>/clients/<id>``) is an empty config."""
    return decode_entity_config(path, data) if data else {}


def apply_config_updates(config: Mapping[str, str], updates: Mapping[str, str | None]) -> dict[str, str]:
    """``config`` with each key of ``updates`` set (a string) or removed (None); every other key kept."""
    out = dict(config)
    for key, value in updates.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = str(value)
    return out


def encode_config_change(topic: str, entity_type: str = "topics") -> bytes:
    """The notification a config change of ``topic`` (or of another entity: ``brokers/<id>``) leaves under
    ``/config/changes`` (version 2)."""
    return _dumps({"version": 2, "entity_path": f"{entity_type}/{topic}"})


def decode_config_change(data: bytes | None, *, what: str = CONFIG_CHANGES) -> str:
    """The entity path of a change notice: version 2 ``{"version":2,"entity_path":"users/alice"}``, or version 1
    ``{"version":1,"entity_type":"topics","entity_name":"t"}`` (Kafka before 1.1)."""
    try:
        obj = json.loads(data or b"")
        if obj.get("version") == 1:
            return f"{obj['entity_type']}/{obj['entity_name']}"
        return str(obj["entity_path"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{what}: malformed config change notification {data!r:.200}") from exc


def encode_offset(offset: int) -> bytes:
    return str(int(offset)).encode()


def decode_offset(data: bytes, *, what: str = "consumer offset") -> int:
    try:
        return int(data)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{what}: malformed offset {data!r:.200}") from exc


def check_replacement(current: TopicAssignment, new: TopicAssignment) -> None:
    """ValueError unless ``new`` may replace ``current`` in place (``ClusterRegistry.replace_assignment``):
    the same topic name, topic id and partition ids; only replicas and adding/removing replicas change."""
    if (new.name, new.topic_id, sorted(new.partitions)) != (current.name, current.topic_id, sorted(current.partitions)):
        raise ValueError(
            f"assignment of topic {current.name!r}: a replacement may change replicas only, not the name, topic id "
            f"or partition ids ({sorted(current.partitions)} -> {sorted(new.partitions)})"
        )


# -- ACLs ----------------------------------------------------------------------------------------------

ACL_ROOTS = {PatternType.LITERAL: "/kafka-acl", PatternType.PREFIXED: "/kafka-acl-extended/prefixed"}
"""The node under which each pattern type's ACLs live (Kafka: ``LiteralAclStore`` / ``ExtendedAclStore``)."""
ACL_CHANGE_DIRS = {False: "/kafka-acl-changes", True: "/kafka-acl-extended-changes"}
"""Change notification directory by ``extended`` (False: literal patterns, True: every other pattern type)."""
ACL_CHANGE_PREFIX = "acl_changes_"
ACL_CHANGE_EXPIRY_S = 15 * 60
"""Age after which ACL change notifications are deleted (Kafka's ``ZkNodeChangeNotificationListener``)."""

_ACL_RESOURCE_TYPES = tuple(t for t in ResourceType if t not in (ResourceType.UNKNOWN, ResourceType.ANY))


def acl_store_path(pattern_type: PatternType) -> str:
    """``/kafka-acl`` or ``/kafka-acl-extended/prefixed``; ValueError for a pattern type no ACL can have."""
    try:
        return ACL_ROOTS[pattern_type]
    except KeyError:
        raise ValueError(f"ACLs are stored for LITERAL and PREFIXED patterns only, not {pattern_type.name}") from None


def acl_type_path(pattern_type: PatternType, resource_type: ResourceType) -> str:
    """``/kafka-acl/Topic`` ...; ValueError for ANY or UNKNOWN."""
    if resource_type not in _ACL_RESOURCE_TYPES:
        raise ValueError(f"no ACL can be stored for resource type {resource_type.name}")
    return f"{acl_store_path(pattern_type)}/{resource_type.kafka_name}"


def acl_path(pattern: ResourcePattern) -> str:
    """The node of one resource pattern's ACLs; ValueError for an empty name, a name containing "/" (Kafka
    refuses it), "." or "..", or a type or pattern type no ACL can have."""
    name = pattern.name
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        raise ValueError(f"invalid ACL resource name {name!r}: it must be non-empty and contain no '/'")
    return f"{acl_type_path(pattern.pattern_type, pattern.resource_type)}/{name}"


def acl_change_dir(pattern_type: PatternType) -> str:
    """Where a change of ``pattern_type``'s ACLs is announced (``/kafka-acl-changes`` for LITERAL)."""
    acl_store_path(pattern_type)
    return ACL_CHANGE_DIRS[pattern_type is not PatternType.LITERAL]


def acl_change_sequence(child: str) -> int | None:
    """The sequence number of an ``acl_changes_<10 digits>`` child (None: another node)."""
    digits = child[len(ACL_CHANGE_PREFIX) :] if child.startswith(ACL_CHANGE_PREFIX) else ""
    return int(digits) if digits.isdigit() and digits.isascii() else None


def acl_required_paths() -> tuple[str, ...]:
    """The nodes Kafka's ``AclAuthorizer`` creates at start-up (``createAclPaths``): each store with one child
    per resource type, and both change directories."""
    paths = [acl_type_path(p, t) for p in ACL_ROOTS for t in _ACL_RESOURCE_TYPES]
    return (*paths, *ACL_CHANGE_DIRS.values())


def parse_acl_store(pattern_type: PatternType, type_child: str, name: str) -> ResourcePattern | None:
    """The pattern of ``<store>/<type_child>/<name>`` (None when ``type_child`` is no resource type known here)."""
    try:
        resource_type = ResourceType.parse(type_child)
    except ValueError:
        return None
    if resource_type not in _ACL_RESOURCE_TYPES:
        return None
    return ResourcePattern(resource_type, name, pattern_type)


def encode_acls(entries: frozenset[AccessControlEntry] | set[AccessControlEntry]) -> bytes:
    """A resource node's JSON, entries in sorted order (principal, host, operation, permission), as Kafka writes
    it: ``{"version":1,"acls":[{"principal":..,"permissionType":"Allow","operation":"Read","host":"*"}]}``."""
    return _dumps(
        {
            "version": 1,
            "acls": [
                {
                    "principal": e.principal,
                    "permissionType": e.permission_type.kafka_name,
                    "operation": e.operation.kafka_name,
                    "host": e.host,
                }
                for e in sorted(entries)
            ],
        }
    )


def decode_acls(data: bytes | None, *, what: str = "ACL node") -> frozenset[AccessControlEntry]:
    """The entries of a resource node (null or empty data: none). Operation and permission names in any of
    Kafka's spellings (``DescribeConfigs``, ``DESCRIBE_CONFIGS``); ValueError naming ``what`` when malformed or
    when an entry names an operation or permission type no ACL can hold (ANY, UNKNOWN)."""
    if not data:
        return frozenset()
    try:
        obj = json.loads(data)
        entries = []
        for acl in obj["acls"]:
            entry = AccessControlEntry(
                str(acl["principal"]),
                str(acl["host"]),
                AclOperation.parse(str(acl["operation"])),
                AclPermissionType.parse(str(acl["permissionType"])),
            )
            if entry.operation in (AclOperation.ANY, AclOperation.UNKNOWN) or entry.permission_type not in (
                AclPermissionType.ALLOW,
                AclPermissionType.DENY,
            ):
                raise ValueError(f"entry {acl} has no concrete operation and permission")
            entries.append(entry)
        return frozenset(entries)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{what}: malformed ACL node {data!r:.200} ({exc})") from exc


def encode_acl_change(pattern: ResourcePattern) -> bytes:
    """The notice a change of ``pattern``'s ACLs leaves: ``TOPIC:foo`` for a literal pattern (Kafka's
    ``LiteralAclChangeStore``: the ResourceType constant, ":", the name), JSON for any other
    (``ExtendedAclChangeStore``): ``{"version":1,"resourceType":"TOPIC","name":"foo","patternType":"PREFIXED"}``."""
    acl_path(pattern)
    if pattern.pattern_type is PatternType.LITERAL:
        return f"{pattern.resource_type.name}:{pattern.name}".encode()
    return _dumps(
        {
            "version": 1,
            "resourceType": pattern.resource_type.name,
            "name": pattern.name,
            "patternType": pattern.pattern_type.name,
        }
    )


def decode_acl_change(data: bytes | None, *, extended: bool, what: str = "ACL change notification") -> ResourcePattern:
    """The pattern a notice names (``extended``: from ``/kafka-acl-extended-changes``). Type names in any of
    Kafka's spellings (``TOPIC``, ``Topic``); ValueError naming ``what`` when malformed or naming a pattern
    no ACL can have."""
    try:
        if extended:
            obj = json.loads(data or b"")
            if int(obj.get("version", 1)) > 1:
                raise ValueError(f"unsupported version {obj['version']}")
            pattern = ResourcePattern(
                ResourceType.parse(str(obj["resourceType"])),
                str(obj["name"]),
                PatternType.parse(str(obj["patternType"])),
            )
        else:
            type_name, sep, name = (data or b"").decode("utf-8").partition(":")
            if not sep:
                raise ValueError("expected <ResourceType>:<name>")
            pattern = ResourcePattern(ResourceType.parse(type_name), name, PatternType.LITERAL)
        acl_path(pattern)
        if (pattern.pattern_type is PatternType.LITERAL) == extended:
            raise ValueError(f"a {pattern.pattern_type.name} pattern in the wrong change directory")
        return pattern
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{what}: malformed ACL change notification {data!r:.200} ({exc})") from exc
