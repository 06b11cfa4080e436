"""``kafkalog topics``: Kafka's ``kafka-topics.sh`` for kafkalog (and any Kafka cluster), over the wire with
``AdminClient``.

    kafkalog topics create|list|describe|delete|alter --bootstrap-server HOST:PORT ... [--if-not-exists]
                     (or Kafka's --create, --list, --describe, --delete, --alter)

``create`` takes ``--partitions``/``--replication-factor`` (-1: the broker's defaults) and repeatable
``--config KEY=VALUE``; ``--if-not-exists`` succeeds quietly when the topic exists. ``alter`` grows a topic to
``--partitions`` in all. ``describe`` prints kafka-topics' lines (``Topic: ... TopicId: ... Configs: ...`` and
one line per partition), or with ``--under-replicated-partitions``/``--unavailable-partitions`` only the
partitions those filters select (``partition_listed``). A failure prints one line ``kafkalog: <error>`` (exit 1).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import broker.cli.actions as cli_actions

__all__ = ["add_parser", "cmd_topics", "partition_listed", "usage_error"]


def add_parser(sub: Any) -> None:
    tp = sub.add_parser("topics", help="create, list, describe, alter or delete topics (kafka-topics)")
    cli_actions.add_action(tp, ("create", "list", "describe", "delete", "alter"))
    tp.add_argument("--bootstrap-server", required=True)
    tp.add_argument("--topic")
    tp.add_argument("--partitions", type=int, default=-1)
    tp.add_argument("--replication-factor", type=int, default=-1)
    tp.add_argument("--config", action="append", metavar="KEY=VALUE", help="topic config (repeatable)")
    tp.add_argument("--if-not-exists", action="store_true", help="create: succeed quietly when the topic exists")
    tp.add_argument(
        "--exclude-internal", action="store_true", help="list, describe: leave out internal topics (always done)"
    )
    tp.add_argument(
        "--under-replicated-partitions",
        action="store_true",
        help="describe: list only partitions whose ISR is smaller than their replicas",
    )
    tp.add_argument(
        "--unavailable-partitions",
        action="store_true",
        help="describe: list only partitions without a live leader",
    )
    tp.set_defaults(func=cmd_topics)


def usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with ``topics`` arguments that argparse accepted, or ``None``."""
    if args.action in ("create", "delete") and not args.topic:
        return f"topics {args.action} needs --topic"
    if args.action == "alter":
        if not args.topic:
            return "topics alter needs --topic"
        if args.partitions < 1:
            return "topics alter needs --partitions N (the new total, more than the topic has)"
    if args.if_not_exists and args.action != "create":
        return "--if-not-exists applies to topics create only"
    return None


def cmd_topics(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError, NewTopic

    try:
        with AdminClient(args.bootstrap_server) as admin:
            if args.action == "create":
                config = dict(cli_actions.split_kv(args.config or ()))
                if args.if_not_exists and args.topic in admin.list_topics(include_internal=True):
                    return 0  # kafka-topics --if-not-exists: nothing to do, nothing printed
                try:
                    admin.create_topics([NewTopic(args.topic, args.partitions, args.replication_factor, config)])
                except KafkaClientError as e:
                    if not (args.if_not_exists and _topic_exists_error(e)):
                        raise
                    return 0  # created by someone else meanwhile
                print(f"created topic {args.topic}")
            elif args.action == "alter":
                admin.create_partitions({args.topic: args.partitions})
                print(f"topic {args.topic} now has {args.partitions} partitions")
            elif args.action == "delete":
                admin.delete_topics([args.topic])
                print(f"deleted topic {args.topic}")
            elif args.action == "list":
                for name in sorted(admin.list_topics()):
                    print(name)
            elif args.action == "describe":
                names = [args.topic] if args.topic else sorted(admin.list_topics())
                descs = admin.describe_topics(names).values()
                configs = _topic_configs(admin, names) if names else {}
                if args.under_replicated_partitions or args.unavailable_partitions:
                    live = set(admin.describe_cluster()["brokers"])
                    for desc in descs:
                        for p in desc.partitions:
                            if partition_listed(p, live, args.under_replicated_partitions, args.unavailable_partitions):
                                _print_partition(desc.name, p)
                else:
                    for desc in descs:
                        _print_topic(desc, configs.get(desc.name, ""))
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    return 0


def _topic_exists_error(e: Exception) -> bool:
    """Whether a CreateTopics failure is TOPIC_ALREADY_EXISTS (for ``--if-not-exists``)."""
    from spark_kafkalog.protocol import ErrorCode

    codes = [getattr(e, "error_code", None)] + [
        getattr(err, "error_code", None) for err in getattr(e, "errors", {}).values()
    ]
    return ErrorCode.TOPIC_ALREADY_EXISTS in codes or "already exists" in str(e)


def _topic_configs(admin, names: list[str]) -> dict[str, str]:
    """``Configs:`` of kafka-topics --describe per topic: ``k=v,k2=v2`` of every config not at its built-in
    default (a topic override, or a broker setting from server.properties or a dynamic broker config), in
    the broker's order, as Kafka's tool prints them (``isDefault`` is false)."""
    from spark_kafkalog.client.admin.admin_configs import TOPIC, ConfigResource

    described = admin.describe_resource_configs([ConfigResource(TOPIC, n) for n in names])
    return {
        res.name: ",".join(f"{e.name}={'null' if e.value is None else e.value}" for e in entries if e.source != 5)
        for res, entries in described.items()
    }


def _print_topic(desc, configs: str = "") -> None:
    parts = desc.partitions
    print(
        f"Topic: {desc.name}\tTopicId: {desc.topic_id}\tPartitionCount: {len(parts)}\t"
        f"ReplicationFactor: {len(parts[0].replicas) if parts else 0}\tConfigs: {configs}"
    )
    for p in parts:
        _print_partition(desc.name, p)


def _print_partition(topic: str, p) -> None:
    print(
        f"\tTopic: {topic}\tPartition: {p.partition}\tLeader: {p.leader if p.leader >= 0 else 'none'}\t"
        f"Replicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}"
    )


def partition_listed(p, live: set[int], under_replicated: bool, unavailable: bool) -> bool:
    """kafka-topics.sh's filters: under-replicated = ISR smaller than the replicas; unavailable = no leader
    (-1) or a leader that is not a live broker. With both, a partition matching either is listed."""
    return (under_replicated and len(p.isr) < len(p.replicas)) or (
        unavailable and (p.leader < 0 or p.leader not in live)
    )
