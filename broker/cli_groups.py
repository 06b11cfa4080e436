"""``kafkalog groups``: Kafka's ``kafka-consumer-groups.sh`` for kafkalog (and any Kafka cluster).

``groups list [--state S]``, ``groups describe --group G`` (the columns of kafka-consumer-groups: GROUP,
TOPIC, PARTITION, CURRENT-OFFSET, LOG-END-OFFSET, LAG, CONSUMER-ID, HOST, CLIENT-ID), ``groups
reset-offsets --group G --topic T[:p,p] (--to-earliest | --to-latest | --to-datetime D | --to-offset N |
--shift-by N) [--execute]`` (without ``--execute`` it only prints the plan, as Kafka's tool does; the group
must have no active members) and ``groups delete --group G``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from typing import Any

RESET_SPECS = ("to_earliest", "to_latest", "to_datetime", "to_offset", "shift_by")


def add_parser(sub: Any) -> None:
    gp = sub.add_parser("groups", help="list, describe, reset offsets of or delete consumer groups")
    gp.add_argument("action", choices=("list", "describe", "reset-offsets", "delete"))
    gp.add_argument("--bootstrap-server", required=True)
    gp.add_argument("--group", help="the group (describe, reset-offsets, delete)")
    gp.add_argument("--state", action="append", help="list only groups in this state (repeatable)")
    gp.add_argument("--topic", action="append", help="reset-offsets: TOPIC or TOPIC:P,P,... (repeatable)")
    spec = gp.add_mutually_exclusive_group()
    spec.add_argument("--to-earliest", action="store_true")
    spec.add_argument("--to-latest", action="store_true")
    spec.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS[.sss][+HH:MM]")
    spec.add_argument("--to-offset", type=int)
    spec.add_argument("--shift-by", type=int)
    gp.add_argument("--execute", action="store_true", help="reset-offsets: apply the plan (default: show it)")
    gp.set_defaults(func=cmd_groups)


def usage_error(args: argparse.Namespace) -> str | None:
    if args.action in ("describe", "reset-offsets", "delete") and not args.group:
        return f"groups {args.action} needs --group"
    if args.action == "reset-offsets":
        if not args.topic:
            return "groups reset-offsets needs --topic (TOPIC or TOPIC:0,1,...)"
        if not any(getattr(args, name) not in (None, False) for name in RESET_SPECS):
            return (
                "groups reset-offsets needs one of --to-earliest, --to-latest, --to-datetime, --to-offset, --shift-by"
            )
        if args.to_datetime is not None and _parse_datetime(args.to_datetime) is None:
            return f"--to-datetime {args.to_datetime!r} is not a date-time like 2026-01-31T12:00:00.000"
    return None


def cmd_groups(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError

    try:
        with AdminClient(args.bootstrap_server) as admin:
            if args.action == "list":
                for g in admin.list_groups(args.state):
                    print(g.group_id if not args.state else f"{g.group_id}\t{g.state}")
            elif args.action == "describe":
                _print_rows(_describe_rows(admin, args.group))
            elif args.action == "reset-offsets":
                plan = _reset_plan(admin, args)
                if args.execute:
                    admin.alter_group_offsets(args.group, plan)
                _print_rows(
                    [("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
                    + [(args.group, tp.topic, str(tp.partition), str(offset)) for tp, offset in sorted(plan.items())]
                )
                if not args.execute:
                    print("(dry run: add --execute to apply)")
            elif args.action == "delete":
                admin.delete_groups([args.group])
                print(f"deleted group {args.group}")
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    return 0


def _describe_rows(admin: Any, group_id: str) -> list[tuple[str, ...]]:
    description = admin.describe_groups([group_id])[group_id]
    owner: dict[Any, Any] = {}
    if description.protocol_type == "consumer":
        from spark_kafkalog.client.types import TopicPartition

        for member in description.members:
            for tp in _assigned(member.assignment):
                owner[TopicPartition(*tp)] = member
    topics = sorted({tp.topic for tp in owner})
    rows: list[tuple[str, ...]] = [
        ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
    ]
    for lag in admin.group_lag(group_id, topics or None):
        member = owner.get(lag.topic_partition)
        rows.append(
            (
                group_id,
                lag.topic_partition.topic,
                str(lag.topic_partition.partition),
                "-" if lag.committed is None else str(lag.committed),
                str(lag.log_end_offset),
                "-" if lag.lag is None else str(lag.lag),
                "-" if member is None else member.member_id,
                "-" if member is None else member.host,
                "-" if member is None else member.client_id,
            )
        )
    if len(rows) == 1:
        print(f"Consumer group '{group_id}' has no committed offsets and no members ({description.state}).")
    return rows


def _assigned(assignment: bytes) -> list[Any]:
    """The topic-partitions of a ``consumer`` protocol assignment; none for empty or unreadable bytes."""
    from spark_kafkalog.client.consumer_protocol import decode_assignment
    from spark_kafkalog.protocol import DecodeError

    if not assignment:
        return []
    try:
        return list(decode_assignment(assignment).partitions)
    except DecodeError:
        return []


def _parse_datetime(text: str) -> datetime.datetime | None:
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.astimezone()  # local time, as Kafka's tool


def _reset_plan(admin: Any, args: argparse.Namespace) -> dict[Any, int]:
    """New offset per partition of ``--topic``, clamped into [log start, high watermark] as Kafka's tool does."""
    from spark_kafkalog.client import OffsetSpec, TopicPartition

    tps: list[Any] = []
    for item in args.topic:
        name, _, parts = item.partition(":")
        if parts:
            tps += [TopicPartition(name, int(p)) for p in parts.split(",") if p.strip()]
        else:
            tps += [TopicPartition(name, p.partition) for p in admin.describe_topics([name])[name].partitions]
    client = admin.client
    earliest = client.list_offsets(dict.fromkeys(tps, OffsetSpec.EARLIEST))
    latest = client.list_offsets(dict.fromkeys(tps, OffsetSpec.LATEST))
    if args.to_earliest:
        target = dict(earliest)
    elif args.to_latest:
        target = dict(latest)
    elif args.to_offset is not None:
        target = dict.fromkeys(tps, args.to_offset)
    elif args.to_datetime is not None:
        moment = _parse_datetime(args.to_datetime)
        assert moment is not None
        target = client.list_offsets(dict.fromkeys(tps, int(moment.timestamp() * 1000)))
    else:
        committed = admin.list_group_offsets(args.group, tps)
        target = {tp: (committed[tp].offset if tp in committed else latest[tp]) + args.shift_by for tp in tps}
    return {tp: min(max(target[tp], earliest[tp]), latest[tp]) for tp in tps}


def _print_rows(rows: list[tuple[str, ...]]) -> None:
    if not rows:
        return
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
