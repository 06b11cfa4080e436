"""``kafkalog configs describe|alter``: Kafka's ``kafka-configs.sh`` for kafkalog (topic, broker, user, client,
client metrics and group configs).

The action as a word or as Kafka's flag: ``configs describe ...`` or ``configs --describe ...``.

The entity: ``--entity-type topics|brokers`` with ``--entity-name N`` (or ``--entity-default`` for the
cluster-wide broker defaults), or the short forms ``--topic T``, ``--broker ID``, ``--broker-defaults``.

``describe`` prints, as Kafka's tool does, the dynamic configs of the entity (topic overrides; a broker's
``/config/brokers/<id>``; the cluster-wide ``<default>``), or with ``--all`` every config with its source::

    Dynamic configs for topic orders are:
      retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000, DEFAULT_CONFIG:log.retention.ms=604800000}

``alter`` sends one IncrementalAlterConfigs: ``--add-config k=v,k2=[a,b]`` SETs each key (a bracketed list is
one comma-separated value), ``--delete-config k,k2`` DELETEs them; the change is written to ZooKeeper and every
broker applies it at once. Exit status 1 with the broker's message when a key or value is refused.

Users (``--entity-type users``, or ``--user NAME``) hold SCRAM credentials, as kafka-configs spells them::

    configs --alter --entity-type users --entity-name alice \
        --add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]'
    configs --alter --entity-type users --entity-name alice --delete-config SCRAM-SHA-512
    configs --describe --entity-type users [--entity-name alice]
      SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192

A credential value is ``[iterations=N,]password=P`` (Kafka's ``(?:iterations=([0-9]*),)?password=(.*)``;
iterations default to 4096). ``alter`` sends one AlterUserScramCredentials to the controller with a random salt
and the salted password computed here (the password never travels and is never printed); ``describe`` sends
DescribeUserScramCredentials (every user with credentials when no name is given; a named user without any
prints nothing, as Kafka's tool).

Client metrics subscriptions (KIP-714, ``--entity-type client-metrics``; ``kafka-client-metrics.sh`` manages the
same resources): ``metrics`` (name prefixes, ``*`` for all), ``interval.ms`` (100..3600000) and ``match``
(``client_id=app.*`` ... regexes)::

    configs --alter --entity-type client-metrics --entity-name producers \
        --add-config 'metrics=[org.apache.kafka.producer.,org.apache.kafka.client.],interval.ms=60000'
    configs --describe --entity-type client-metrics [--entity-name producers]
      Dynamic configs for client-metric producers are:
        interval.ms=60000 sensitive=false synonyms={DYNAMIC_CLIENT_METRICS_CONFIG:interval.ms=60000}

``describe`` without a name describes every subscription (ListClientMetricsResources); a name that is not one
prints "The client-metric 'x' doesn't exist and doesn't have dynamic config.", as Kafka's tool. Deleting every key
of a subscription removes it.

Group configs (``--entity-type groups``, Kafka 4.x's GROUP resources: ``share.auto.offset.reset``,
``share.record.lock.duration.ms``, ``share.delivery.count.limit``, ``share.isolation.level``,
``share.session.timeout.ms``, ``share.heartbeat.interval.ms``, ``consumer.session.timeout.ms``,
``consumer.heartbeat.interval.ms``; the group need not exist yet)::

    configs --alter --entity-type groups --entity-name orders --add-config share.auto.offset.reset=earliest
    configs --describe --entity-type groups --entity-name orders [--all]
      Dynamic configs for group orders are:
        share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest, DEFAULT_CONFIG:share.auto.offset.reset=latest}

``describe`` without a name describes every group ListGroups lists.

Client quotas (KIP-546), as kafka-configs spells them over ``--bootstrap-server``: ``--entity-type users`` and/or
``--entity-type clients``, each followed by ``--entity-name N`` or ``--entity-default`` (paired in order; also
``--user N``, ``--client N``, ``--user-defaults``, ``--client-defaults``)::

    configs --alter --entity-type users --entity-name alice --add-config producer_byte_rate=1048576
    configs --alter --entity-type users --entity-name alice --entity-type clients --entity-default \
        --add-config consumer_byte_rate=2048,request_percentage=50 --delete-config producer_byte_rate
    configs --describe --entity-type users [--entity-name alice]
      Quota configs for user-principal 'alice' are producer_byte_rate=1048576.0

``alter`` sends one AlterClientQuotas (values parsed as doubles; deleting a key the entity does not have is
refused with "Invalid config(s)", as Kafka's tool does); SCRAM and quota keys cannot be altered together.
``describe`` sends DescribeClientQuotas with one component per entity type (a name: that entity; a default:
the ``<default>`` one; no name: every entity of the type) and ``strict`` (Kafka's ``containsOnly``), printing
values as Java prints doubles, then, for users only and no default, the SCRAM credentials as above.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .actions import add_action

ENTITY_TYPES = ("topics", "brokers", "users", "clients", "client-metrics", "groups")
CLIENT_METRICS = "client-metrics"
GROUPS = "groups"
QUOTA_TYPES = ("users", "clients")
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate")
_SCRAM_VALUE = re.compile(r"(?:iterations=([0-9]*),)?password=(.*)", re.DOTALL)
_QUOTA_ENTITY_TYPE = {"users": "user", "clients": "client-id"}


class _AppendName(argparse.Action):
    """``--entity-name N`` and ``--entity-default`` append to one ordered list (``""`` for a default), which pairs
    with the ``--entity-type`` values by position, as kafka-configs pairs them."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: str | None = None):
        names = list(getattr(namespace, "entity_names", None) or [])
        names.append("" if option_string == "--entity-default" else values)
        namespace.entity_names = names
        if option_string != "--entity-default" and not values:
            namespace.empty_name = True


def add_parser(sub: Any) -> None:
    pc = sub.add_parser("configs", help="describe or alter topic, broker, user and client configs (kafka-configs)")
    add_action(pc, ("describe", "alter"))
    pc.add_argument("--bootstrap-server", required=True)
    pc.add_argument("--entity-type", choices=ENTITY_TYPES, action="append", help="twice: users and clients")
    pc.add_argument("--entity-name", action=_AppendName, help="the name of the preceding --entity-type")
    pc.add_argument(
        "--entity-default", action=_AppendName, nargs=0, help="the default entity of the preceding --entity-type"
    )
    pc.add_argument("--topic", help="same as --entity-type topics --entity-name T")
    pc.add_argument("--broker", help="same as --entity-type brokers --entity-name ID")
    pc.add_argument("--broker-defaults", action="store_true", help="same as --entity-type brokers --entity-default")
    pc.add_argument("--user", help="same as --entity-type users --entity-name NAME")
    pc.add_argument("--client", help="same as --entity-type clients --entity-name ID")
    pc.add_argument("--user-defaults", action="store_true", help="same as --entity-type users --entity-default")
    pc.add_argument("--client-defaults", action="store_true", help="same as --entity-type clients --entity-default")
    pc.add_argument("--all", action="store_true", help="describe: every config with its source, not only dynamic ones")
    pc.add_argument(
        "--add-config",
        help="alter: k=v,k2=[a,b] (a bracketed list is one value); users: SCRAM-SHA-256=[iterations=8192,password=P] "
        "or quotas (producer_byte_rate=1048576,...)",
    )
    pc.add_argument("--delete-config", help="alter: k,k2")
    pc.set_defaults(func=cmd_configs, entity_names=None)


class UsageError(Exception):
    """The arguments do not name one entity or one change; the message says what is missing."""


@dataclass(frozen=True)
class Entity:
    """What a configs command is about: ``kind`` ``topics`` or ``brokers`` with ``name`` (``""``: the cluster-wide
    broker defaults), or ``kind`` ``quotas`` with ``parts``: ``("users" | "clients", name)`` pairs in command-line
    order, a name being ``""`` for the default entity and None for every entity of the type (describe only)."""

    kind: str
    name: str = ""
    parts: tuple[tuple[str, str | None], ...] = ()

    @property
    def types(self) -> list[str]:
        return [t for t, _ in self.parts]


def entity(args: argparse.Namespace) -> Entity:
    """The entity the arguments name (see ``Entity``); UsageError saying what is wrong."""
    types = list(args.entity_type or [])
    names = list(getattr(args, "entity_names", None) or [])
    for flag, kind in (("topic", "topics"), ("client", "clients"), ("user", "users"), ("broker", "brokers")):
        if getattr(args, flag, None) is not None:
            types.append(kind)
            names.append(getattr(args, flag))
    for flag, kind in (("client_defaults", "clients"), ("user_defaults", "users"), ("broker_defaults", "brokers")):
        if getattr(args, flag, False):
            types.append(kind)
            names.append("")
    if not types:
        if names:
            raise UsageError("--entity-name and --entity-default need --entity-type topics|brokers|users|clients")
        raise UsageError(
            "configs needs one entity: --topic T, --broker ID, --broker-defaults, --user NAME, --client ID, or "
            "--entity-type with --entity-name/--entity-default"
        )
    if len(names) > len(types):
        raise UsageError("more entity names than entity types were given")
    if set(types) <= set(QUOTA_TYPES):
        if len(set(types)) != len(types):
            raise UsageError(f"--entity-type {types[0]} given twice: combine at most one users and one clients")
        if args.action != "describe" and len(names) != len(types):
            raise UsageError(f"configs alter of {' and '.join(types)} needs --entity-name or --entity-default for each")
        if getattr(args, "empty_name", False) or "" in (getattr(args, "user", None), getattr(args, "client", None)):
            raise UsageError("an entity name must not be empty (--entity-default names the default entity)")
        return Entity("quotas", parts=tuple((t, names[i] if i < len(names) else None) for i, t in enumerate(types)))
    if len(types) != 1:
        raise UsageError(
            "configs needs one entity: --topic T, --broker ID, --broker-defaults, --user NAME, --client ID, or "
            "--entity-type with --entity-name/--entity-default; only users and clients combine"
        )
    kind = types[0]
    if kind in (CLIENT_METRICS, GROUPS):
        what = "a subscription" if kind == CLIENT_METRICS else "a group"
        if "" in names or getattr(args, "empty_name", False):
            raise UsageError(f"--entity-type {kind} needs --entity-name ({what} has no default)")
        if not names and args.action != "describe":
            raise UsageError(f"configs alter of {kind} needs --entity-name")
        return Entity(kind, names[0] if names else "")
    if not names:
        raise UsageError("--entity-type needs exactly one of --entity-name and --entity-default")
    name = names[0]
    if kind == "topics" and not name:
        raise UsageError("--entity-default applies to --entity-type brokers, users and clients; a topic needs a name")
    if kind == "brokers" and name and not name.isdigit():
        raise UsageError(f"broker entity name must be a broker id, not {name!r}")
    return Entity(kind, name)


def _split_config_list(text: str) -> list[str]:
    """``a=1,b=[x,y]`` -> ``["a=1", "b=[x,y]"]``: commas inside brackets do not split."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if depth != 0:
        raise UsageError("--add-config: unbalanced [ ]")
    parts.append(cur)
    return [p for p in parts if p.strip()]


def parse_scram_credentials(text: str) -> dict[str, tuple[int, str]]:
    """``SCRAM-SHA-256=[iterations=8192,password=p],SCRAM-SHA-512=[password=p]`` ->
    ``{"SCRAM-SHA-256": (8192, "p"), "SCRAM-SHA-512": (4096, "p")}``. The password is everything after
    ``password=`` inside the brackets (commas included). Errors never quote a password."""
    out: dict[str, tuple[int, str]] = {}
    for part in _split_config_list(text):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            raise UsageError(f"--add-config: {key!r} is not key=value")
        if key not in SCRAM_MECHANISMS:
            raise UsageError(f"--add-config: SCRAM credentials are {' and '.join(SCRAM_MECHANISMS)}, not {key!r}")
        if key in out:
            raise UsageError(f"--add-config: {key} given twice")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            value = value[1:-1]
        m = _SCRAM_VALUE.fullmatch(value)
        if m is None:
            raise UsageError(f"--add-config: {key} needs [iterations=N,]password=P")
        iterations = int(m.group(1)) if m.group(1) else 4096
        if not 4096 <= iterations <= 16384:
            raise UsageError(f"--add-config: {key} iterations {iterations} is outside 4096..16384")
        if not m.group(2):
            raise UsageError(f"--add-config: {key} needs a non-empty password")
        out[key] = (iterations, m.group(2))
    return out


def parse_add_config(text: str) -> dict[str, str]:
    """``a=1,b=[x,y],c=2`` -> ``{"a": "1", "b": "x,y", "c": "2"}`` (kafka-configs' syntax)."""
    out: dict[str, str] = {}
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if depth != 0:
        raise UsageError(f"--add-config {text!r}: unbalanced [ ]")
    parts.append(cur)
    for part in parts:
        if not part.strip():
            continue
        if "=" not in part:
            raise UsageError(f"--add-config: {part!r} is not key=value")
        key, value = part.split("=", 1)
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            value = ",".join(v.strip() for v in value[1:-1].split(","))
        out[key.strip()] = value
    return out


def _describe_users(admin: Any, name: str) -> None:
    found = admin.describe_user_scram_credentials([name] if name else None, missing_ok=True)
    for user, infos in found.items():
        creds = ", ".join(f"{i.mechanism}=iterations={i.iterations}" for i in infos)
        print(f"SCRAM credential configs for user-principal '{user}' are {creds}")


def _alter_users(admin: Any, name: str, add: dict[str, tuple[int, str]], delete: list[str]) -> None:
    from spark_kafkalog.client.admin.admin_scram import UserScramCredentialDeletion, UserScramCredentialUpsertion

    alterations: list[Any] = [
        UserScramCredentialUpsertion(name, mechanism, password, iterations)
        for mechanism, (iterations, password) in add.items()
    ]
    alterations += [UserScramCredentialDeletion(name, mechanism) for mechanism in delete]
    admin.alter_user_scram_credentials(alterations)
    print(f"Completed updating config for user {name}.")


def _label(kind: str, name: str) -> str:
    if kind == CLIENT_METRICS:
        return f"client-metric {name}"
    if kind == GROUPS:
        return f"group {name}"
    if kind == "topics":
        return f"topic {name}"
    return f"broker {name}" if name else "brokers in the cluster"


_RESOURCE_TYPE = {"topics": 2, "brokers": 4, CLIENT_METRICS: 16, GROUPS: 32}


def _describe_client_metrics(admin: Any, name: str, show_all: bool) -> None:
    """Every subscription (no name), or the one named: Kafka's ConfigCommand checks the name is listed first."""
    names = admin.list_client_metrics_resources()
    if name and name not in names and not show_all:
        print(f"The client-metric '{name}' doesn't exist and doesn't have dynamic config.")
        return
    for n in [name] if name else names:
        _describe(admin, CLIENT_METRICS, n, show_all)


def _describe(admin: Any, kind: str, name: str, show_all: bool) -> None:
    from spark_kafkalog.client.admin.admin_configs import SOURCE_NAMES, ConfigResource

    res = ConfigResource(_RESOURCE_TYPE[kind], name)
    entries = admin.describe_resource_configs([res], synonyms=True)[res]
    # Kafka's ConfigCommand filter: the source of the resource's own dynamic configs
    own = {"topics": 1, CLIENT_METRICS: 7, GROUPS: 8}
    only = None if show_all else own.get(kind, 2 if name else 3)
    if kind == "brokers" and not name:
        print("Default configs for brokers in the cluster are:")
    else:
        print(f"{'All' if show_all else 'Dynamic'} configs for {_label(kind, name)} are:")
    for e in entries:
        if only is not None and e.source != only:
            continue
        value = "null" if e.value is None else e.value
        syn = ", ".join(f"{SOURCE_NAMES.get(s, s)}:{n}={'null' if v is None else v}" for n, v, s in e.synonyms)
        print(f"  {e.name}={value} sensitive={str(e.sensitive).lower()} synonyms={{{syn}}}")


def _alter(admin: Any, kind: str, name: str, add: dict[str, str], delete: list[str]) -> None:
    from spark_kafkalog.client.admin.admin_configs import DELETE, SET, AlterConfigOp, ConfigResource

    res = ConfigResource(_RESOURCE_TYPE[kind], name)
    ops = [AlterConfigOp(k, v, SET) for k, v in add.items()] + [AlterConfigOp(k, None, DELETE) for k in delete]
    admin.incremental_alter_configs({res: ops})
    if kind == "brokers" and not name:
        print("Completed updating default config for brokers in the cluster.")
    else:
        print(f"Completed updating config for {_label(kind, name)}.")


def java_double(value: float) -> str:
    """Java's ``Double.toString`` (kafka-configs prints quota values with it): ``1048576.0``, ``0.5``,
    ``1.0E7`` (scientific from 10^7 and below 10^-3), from the shortest digits that round-trip."""
    if value == 0 or value != value or value in (float("inf"), float("-inf")):
        return {0.0: "0.0"}.get(value, "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity"))
    if 1e-3 <= abs(value) < 1e7:
        text = repr(float(value))
        return text if "e" not in text else format(Decimal(text), "f")
    sign, digits, exponent = Decimal(repr(float(value))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) + int(exponent) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


def _quota_entity_text(entries: tuple[tuple[str, str | None], ...]) -> str:
    """Kafka's ConfigCommand: ``user-principal 'alice', client-id 'app'`` / ``the default client-id``."""
    labels = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
    names = dict(entries)
    return ", ".join(
        (f"{labels[t]} '{names[t]}'" if names[t] is not None else f"the default {labels[t]}")
        for t in ("user", "client-id", "ip")
        if t in names
    )


def _quota_components(e: Entity) -> list[Any]:
    from spark_kafkalog.client.admin import ClientQuotaFilterComponent as C

    out = []
    for kind, name in e.parts:
        t = _QUOTA_ENTITY_TYPE[kind]
        out.append(
            C.of_entity_type(t) if name is None else C.of_default_entity(t) if name == "" else C.of_entity(t, name)
        )
    return out


def _describe_quotas(admin: Any, e: Entity) -> None:
    found = admin.describe_client_quotas(_quota_components(e), strict=True)
    for quota_entity in sorted(found, key=lambda q: [(t, n or "") for t, n in q.entries]):
        values = ", ".join(f"{k}={java_double(v)}" for k, v in sorted(found[quota_entity].items()))
        print(f"Quota configs for {_quota_entity_text(quota_entity.entries)} are {values}")
    # SCRAM credentials only for users, and not for the default user (Kafka's ConfigCommand)
    if "clients" not in e.types and all(n != "" for _, n in e.parts):
        _describe_users(admin, e.parts[0][1] or "")


def _quota_changes(e: Entity, add_text: str, delete: list[str]) -> tuple[dict[str, Any], list[str], bool]:
    """``(additions, deletions, scram)``: SCRAM credentials (users only) or quota values as doubles, as
    kafka-configs splits and checks them; UsageError with its messages."""
    parts = _split_config_list(add_text)
    keys = [p.partition("=")[0].strip() for p in parts]
    scram_add = [p for p, k in zip(parts, keys, strict=True) if k in SCRAM_MECHANISMS]
    unknown_add = [k for k in keys if k not in SCRAM_MECHANISMS and k not in QUOTA_KEYS]
    unknown_delete = [k for k in delete if k not in SCRAM_MECHANISMS and k not in QUOTA_KEYS]
    scram_delete = [k for k in delete if k in SCRAM_MECHANISMS]
    quota_add = [p for p, k in zip(parts, keys, strict=True) if k in QUOTA_KEYS]
    quota_delete = [k for k in delete if k in QUOTA_KEYS]
    if e.types != ["users"]:
        if unknown_add or scram_add:
            bad = unknown_add + [k for k in keys if k in SCRAM_MECHANISMS]
            raise UsageError(
                f"Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: {', '.join(bad)}"
            )
        if unknown_delete or scram_delete:
            raise UsageError(
                f"Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: {', '.join(unknown_delete + scram_delete)}"
            )
    else:
        if unknown_add:
            raise UsageError(
                f"Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: {', '.join(unknown_add)}"
            )
        if unknown_delete:
            raise UsageError(
                f"Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: {', '.join(unknown_delete)}"
            )
        if scram_add or scram_delete:
            if e.parts[0][1] == "":
                raise UsageError(
                    "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server."
                )
            if quota_add or quota_delete:
                raise UsageError(
                    "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server."
                )
            return parse_scram_credentials(",".join(scram_add)), scram_delete, True
    values: dict[str, Any] = {}
    for part in quota_add:
        key, _, text = part.partition("=")
        key, text = key.strip(), text.strip()
        try:
            values[key] = float(text)
        except ValueError:
            raise UsageError(f"Cannot parse quota configuration value for {key}: {text}") from None
    return values, quota_delete, False


def _alter_quotas(admin: Any, e: Entity, add: dict[str, float], delete: list[str]) -> None:
    from spark_kafkalog.client import KafkaClientError
    from spark_kafkalog.client.admin import ClientQuotaAlteration, ClientQuotaEntity, QuotaOp

    entity_ = ClientQuotaEntity(tuple((_QUOTA_ENTITY_TYPE[t], n or None) for t, n in e.parts))
    if delete:  # as kafka-configs: only keys the entity has can be deleted
        old = admin.describe_client_quotas(_quota_components(e), strict=True).get(entity_, {})
        invalid = [k for k in delete if k not in old]
        if invalid:
            raise KafkaClientError(f"Invalid config(s): {','.join(invalid)}")
    ops = tuple(QuotaOp(k, v) for k, v in add.items()) + tuple(QuotaOp(k, None) for k in delete)
    admin.alter_client_quotas([ClientQuotaAlteration(entity_, ops)])
    kind, name = e.parts[0]
    if name:
        print(f"Completed updating config for {kind[:-1]} {name}.")
    else:
        print(f"Completed updating default config for {kind} in the cluster.")


def cmd_configs(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError

    try:
        e = entity(args)
        if e.kind == "quotas" and args.all:
            raise UsageError("--all applies to topics and brokers")
        scram = False
        add: dict[str, Any] = {}
        delete: list[str] = []
        if args.action == "describe":
            if args.add_config is not None or args.delete_config is not None:
                raise UsageError("--add-config and --delete-config go with configs alter")
        else:
            if args.all:
                raise UsageError("--all goes with configs describe")
            delete = [k.strip() for k in (args.delete_config or "").split(",") if k.strip()]
            if e.kind == "quotas":
                add, delete, scram = _quota_changes(e, args.add_config or "", delete)
            else:
                add = parse_add_config(args.add_config or "")
            if not add and not delete:
                raise UsageError("configs alter needs --add-config k=v,... and/or --delete-config k,...")
            both = sorted(set(add) & set(delete))
            if both:
                raise UsageError(f"{both[0]} is both added and deleted")
    except UsageError as exc:
        print(f"kafkalog: {exc}", file=sys.stderr)
        return 2
    try:
        with AdminClient(args.bootstrap_server) as admin:
            if e.kind == "quotas":
                if args.action == "describe":
                    _describe_quotas(admin, e)
                elif scram:
                    _alter_users(admin, e.parts[0][1] or "", add, delete)
                else:
                    _alter_quotas(admin, e, add, delete)
            elif args.action == "describe" and e.kind == CLIENT_METRICS:
                _describe_client_metrics(admin, e.name, args.all)
            elif args.action == "describe" and e.kind == GROUPS and not e.name:
                for (
                    g
                ) in admin.list_groups():  # every group of the cluster (a config of a group not there is not listed)
                    _describe(admin, GROUPS, g.group_id, args.all)
            elif args.action == "describe":
                _describe(admin, e.kind, e.name, args.all)
            else:
                _alter(admin, e.kind, e.name, add, delete)
        return 0
    except KafkaClientError as exc:
        print(f"kafkalog: {exc}", file=sys.stderr)
        return 1
