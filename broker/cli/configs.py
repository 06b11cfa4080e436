"""``kafkalog configs describe|alter``: Kafka's ``kafka-configs.sh`` for kafkalog (topic, broker and user configs).

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
prints nothing, as Kafka's tool). Quota keys of users are not served yet: refused with a usage error.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from .actions import add_action

ENTITY_TYPES = ("topics", "brokers", "users")
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
_SCRAM_VALUE = re.compile(r"(?:iterations=([0-9]*),)?password=(.*)", re.DOTALL)


def add_parser(sub: Any) -> None:
    pc = sub.add_parser("configs", help="describe or alter topic, broker and user configs (kafka-configs)")
    add_action(pc, ("describe", "alter"))
    pc.add_argument("--bootstrap-server", required=True)
    pc.add_argument("--entity-type", choices=ENTITY_TYPES)
    pc.add_argument("--entity-name")
    pc.add_argument("--entity-default", action="store_true", help="the cluster-wide broker defaults")
    pc.add_argument("--topic", help="same as --entity-type topics --entity-name T")
    pc.add_argument("--broker", help="same as --entity-type brokers --entity-name ID")
    pc.add_argument("--broker-defaults", action="store_true", help="same as --entity-type brokers --entity-default")
    pc.add_argument("--user", help="same as --entity-type users --entity-name NAME")
    pc.add_argument("--all", action="store_true", help="describe: every config with its source, not only dynamic ones")
    pc.add_argument(
        "--add-config",
        help="alter: k=v,k2=[a,b] (a bracketed list is one value); users: SCRAM-SHA-256=[iterations=8192,password=P]",
    )
    pc.add_argument("--delete-config", help="alter: k,k2")
    pc.set_defaults(func=cmd_configs)


class UsageError(Exception):
    """The arguments do not name one entity or one change; the message says what is missing."""


def entity(args: argparse.Namespace) -> tuple[str, str]:
    """(``topics`` | ``brokers`` | ``users``, name); ``""`` names the cluster-wide broker defaults, and, for users
    (``describe`` only), every user."""
    chosen = []
    if args.topic is not None:
        chosen.append(("topics", args.topic))
    if args.broker is not None:
        chosen.append(("brokers", args.broker))
    if args.broker_defaults:
        chosen.append(("brokers", ""))
    if args.user is not None:
        chosen.append(("users", args.user))
    if args.entity_type == "users" and args.entity_default:
        raise UsageError("user defaults hold quotas only, which kafkalog does not serve yet")
    if args.entity_type == "users" and args.entity_name is None:
        if args.action != "describe":
            raise UsageError("configs alter of users needs --entity-name NAME")
        chosen.append(("users", ""))
    elif args.entity_type is not None:
        if args.entity_default == (args.entity_name is not None):
            raise UsageError("--entity-type needs exactly one of --entity-name and --entity-default")
        if args.entity_default and args.entity_type != "brokers":
            raise UsageError("--entity-default applies to --entity-type brokers only")
        chosen.append((args.entity_type, "" if args.entity_default else args.entity_name))
    elif args.entity_name is not None or args.entity_default:
        raise UsageError("--entity-name and --entity-default need --entity-type topics|brokers")
    if len(chosen) != 1:
        raise UsageError(
            "configs needs one entity: --topic T, --broker ID, --broker-defaults, --user NAME, or --entity-type "
            "with --entity-name/--entity-default"
        )
    kind, name = chosen[0]
    if kind == "brokers" and name and not name.isdigit():
        raise UsageError(f"broker entity name must be a broker id, not {name!r}")
    if kind == "topics" and not name:
        raise UsageError("a topic entity needs a name")
    if kind == "users" and not name and (args.user is not None or args.entity_name is not None):
        raise UsageError("a user entity name must not be empty")
    return kind, name


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
            raise UsageError(
                f"--add-config: users take {' and '.join(SCRAM_MECHANISMS)} credentials only, not {key!r} "
                "(user quotas are not served yet)"
            )
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
    if kind == "topics":
        return f"topic {name}"
    return f"broker {name}" if name else "brokers in the cluster"


def _describe(admin: Any, kind: str, name: str, show_all: bool) -> None:
    from spark_kafkalog.client.admin.admin_configs import SOURCE_NAMES, ConfigResource

    res = ConfigResource(2 if kind == "topics" else 4, name)
    entries = admin.describe_resource_configs([res], synonyms=True)[res]
    only = None if show_all else (1 if kind == "topics" else 2 if name else 3)  # Kafka's ConfigCommand filter
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

    res = ConfigResource(2 if kind == "topics" else 4, name)
    ops = [AlterConfigOp(k, v, SET) for k, v in add.items()] + [AlterConfigOp(k, None, DELETE) for k in delete]
    admin.incremental_alter_configs({res: ops})
    if kind == "brokers" and not name:
        print("Completed updating default config for brokers in the cluster.")
    else:
        print(f"Completed updating config for {_label(kind, name)}.")


def cmd_configs(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError

    try:
        kind, name = entity(args)
        if kind == "users" and args.all:
            raise UsageError("--all applies to topics and brokers")
        if args.action == "describe":
            if args.add_config is not None or args.delete_config is not None:
                raise UsageError("--add-config and --delete-config go with configs alter")
        else:
            if args.all:
                raise UsageError("--all goes with configs describe")
            add: dict[str, Any] = (
                parse_scram_credentials(args.add_config or "")
                if kind == "users"
                else parse_add_config(args.add_config or "")
            )
            delete = [k.strip() for k in (args.delete_config or "").split(",") if k.strip()]
            if kind == "users" and any(k not in SCRAM_MECHANISMS for k in delete):
                raise UsageError(f"--delete-config: users have {' and '.join(SCRAM_MECHANISMS)} credentials only")
            if not add and not delete:
                raise UsageError("configs alter needs --add-config k=v,... and/or --delete-config k,...")
            both = sorted(set(add) & set(delete))
            if both:
                raise UsageError(f"{both[0]} is both added and deleted")
    except UsageError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 2
    try:
        with AdminClient(args.bootstrap_server) as admin:
            if kind == "users":
                if args.action == "describe":
                    _describe_users(admin, name)
                else:
                    _alter_users(admin, name, add, delete)
            elif args.action == "describe":
                _describe(admin, kind, name, args.all)
            else:
                _alter(admin, kind, name, add, delete)
        return 0
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
