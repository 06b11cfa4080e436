"""``kafkalog groups``: Kafka's ``kafka-consumer-groups.sh`` for kafkalog (and any Kafka cluster).

The action as a word or as Kafka's flag (``groups list`` or ``groups --list``):

- ``list [--state [S,S]]``: the group ids; with ``--state`` a GROUP/STATE table (only groups in those states
  when some are named, case-insensitive).
- ``describe --group G [--group G2] | --all-groups`` with one view, for classic and KIP-848 consumer groups
  alike (``AdminClient.describe_consumer_groups``), in Kafka 4.x kafka-consumer-groups' columns: ``--offsets``
  (the default: GROUP, TOPIC, PARTITION, CURRENT-OFFSET, LOG-END-OFFSET, LAG, CONSUMER-ID, HOST, CLIENT-ID),
  ``--members [--verbose]`` (GROUP, CONSUMER-ID, HOST, CLIENT-ID, #PARTITIONS; ``--verbose`` adds
  GROUP-INSTANCE-ID after CONSUMER-ID and CURRENT-EPOCH, CURRENT-ASSIGNMENT, TARGET-EPOCH, TARGET-ASSIGNMENT,
  assignments as ``topic:0,1;other:2``, epochs ``-`` for a classic group) or ``--state [--verbose]`` (GROUP,
  COORDINATOR (ID), ASSIGNMENT-STRATEGY, STATE, #MEMBERS; ``--verbose`` adds GROUP-EPOCH and
  TARGET-ASSIGNMENT-EPOCH before #MEMBERS). A consumer group's ASSIGNMENT-STRATEGY is its server-side assignor.
- ``reset-offsets --group G | --all-groups --topic T[:p,p] | --all-topics (--to-earliest | --to-latest |
  --to-datetime D | --to-offset N | --shift-by N) [--dry-run | --execute]``: without ``--execute`` it only
  prints the plan, as Kafka's tool does; the group must have no active members. ``--all-topics``: every
  partition the group has committed offsets for.
- ``delete --group G | --all-groups``.

Share groups (KIP-932) are listed with the others; ``describe`` of a share group shows Kafka 4.4
``kafka-share-groups``' views instead (``share_groups_view``: GROUP, TOPIC, PARTITION, START-OFFSET, LAG; the
members; the state); ``delete`` deletes them with their share-partition state.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from typing import Any

from .actions import add_action

RESET_SPECS = ("to_earliest", "to_latest", "to_datetime", "to_offset", "shift_by")
GROUP_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead", "Assigning", "Reconciling")


def add_parser(sub: Any) -> None:
    gp = sub.add_parser(
        "groups", help="list, describe, reset offsets of or delete consumer groups (kafka-consumer-groups)"
    )
    add_action(gp, ("list", "describe", "reset-offsets", "delete"))
    gp.add_argument("--bootstrap-server", required=True)
    gp.add_argument("--group", action="append", help="the group (describe, reset-offsets, delete; repeatable)")
    gp.add_argument("--all-groups", action="store_true", help="every group (describe, reset-offsets, delete)")
    gp.add_argument(
        "--state",
        action="append",
        nargs="?",
        const="",
        metavar="STATE[,STATE]",
        help="list: show states (only these when named); describe: the state view",
    )
    view = gp.add_mutually_exclusive_group()
    view.add_argument("--offsets", action="store_true", help="describe: committed offsets and lag (the default)")
    view.add_argument("--members", action="store_true", help="describe: the members and their partitions")
    gp.add_argument(
        "--verbose", action="store_true", help="describe --members: epochs and assignments; --state: the epochs"
    )
    gp.add_argument("--topic", action="append", help="reset-offsets: TOPIC or TOPIC:P,P,... (repeatable)")
    gp.add_argument("--all-topics", action="store_true", help="reset-offsets: every partition the group committed")
    spec = gp.add_mutually_exclusive_group()
    spec.add_argument("--to-earliest", action="store_true")
    spec.add_argument("--to-latest", action="store_true")
    spec.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS[.sss][+HH:MM]")
    spec.add_argument("--to-offset", type=int)
    spec.add_argument("--shift-by", type=int)
    gp.add_argument("--execute", action="store_true", help="reset-offsets: apply the plan (default: show it)")
    gp.add_argument("--dry-run", action="store_true", help="reset-offsets: only show the plan (the default)")
    gp.set_defaults(func=cmd_groups)


def _states(args: argparse.Namespace) -> list[str]:
    return [s.strip() for item in args.state or () for s in item.split(",") if s.strip()]


def usage_error(args: argparse.Namespace) -> str | None:
    groups = args.group or []
    if args.action == "list":
        if groups or args.all_groups:
            return "groups list takes no --group or --all-groups"
        known = {s.lower(): s for s in GROUP_STATES}
        bad = [s for s in _states(args) if s.lower() not in known]
        if bad:
            return f"groups list --state: unknown state {bad[0]!r}; known: {', '.join(GROUP_STATES)}"
    elif groups and args.all_groups:
        return f"groups {args.action}: give --group or --all-groups, not both"
    elif not groups and not args.all_groups:
        return f"groups {args.action} needs --group G (repeatable) or --all-groups"
    if args.action == "describe":
        if args.state is not None and (args.members or args.offsets):
            return "groups describe shows one view: --offsets, --members or --state"
        if _states(args):
            return "groups describe --state takes no value (it selects the state view)"
        if args.verbose and not (args.members or args.state is not None):
            return "--verbose goes with groups describe --members or --state"
    elif args.state is not None and args.action != "list":
        return "--state goes with groups list or groups describe"
    if args.action != "describe" and (args.members or args.offsets or args.verbose):
        return "--offsets, --members and --verbose go with groups describe"
    if args.action == "reset-offsets":
        if bool(args.topic) == args.all_topics:
            return "groups reset-offsets needs --topic (TOPIC or TOPIC:0,1,...) or --all-topics, one of them"
        if not any(getattr(args, name) not in (None, False) for name in RESET_SPECS):
            return (
                "groups reset-offsets needs one of --to-earliest, --to-latest, --to-datetime, --to-offset, --shift-by"
            )
        if args.to_datetime is not None and _parse_datetime(args.to_datetime) is None:
            return f"--to-datetime {args.to_datetime!r} is not a date-time like 2026-01-31T12:00:00.000"
        if args.execute and args.dry_run:
            return "groups reset-offsets takes one of --dry-run and --execute"
    elif args.topic or args.all_topics or args.execute or args.dry_run:
        return "--topic, --all-topics, --dry-run and --execute go with groups reset-offsets"
    return None


def cmd_groups(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError

    try:
        with AdminClient(args.bootstrap_server) as admin:
            if args.action == "list":
                _list(admin, args)
                return 0
            listed = admin.list_groups() if args.all_groups or args.action == "describe" else []
            groups = args.group if not args.all_groups else sorted(g.group_id for g in listed)
            if args.action == "describe":
                share = {g.group_id for g in listed if g.protocol_type == "share"}
                for i, group in enumerate(groups):
                    if i:
                        print()
                    if group in share:
                        _print_rows(_share_rows(admin, group, args))
                    elif args.members:
                        _print_rows(_member_rows(admin, group, args.verbose))
                    elif args.state is not None:
                        _print_rows(_state_rows(admin, group, args.verbose))
                    else:
                        _print_rows(_describe_rows(admin, group))
            elif args.action == "reset-offsets":
                rows: list[tuple[str, ...]] = [("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
                for group in groups:
                    plan = _reset_plan(admin, args, group)
                    if args.execute:
                        admin.alter_group_offsets(group, plan)
                    rows += [(group, tp.topic, str(tp.partition), str(offset)) for tp, offset in sorted(plan.items())]
                _print_rows(rows)
                if not args.execute and not args.dry_run:
                    print("(dry run: add --execute to apply)")
            elif args.action == "delete":
                admin.delete_groups(groups)
                for group in groups:
                    print(f"deleted group {group}")
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    return 0


def _share_rows(admin: Any, group_id: str, args: argparse.Namespace) -> list[tuple[str, ...]]:
    from .share_groups_view import share_member_rows, share_offset_rows, share_state_rows

    if args.members:
        return share_member_rows(admin, group_id, args.verbose)
    if args.state is not None:
        return share_state_rows(admin, group_id, args.verbose)
    return share_offset_rows(admin, group_id)


def _list(admin: Any, args: argparse.Namespace) -> None:
    if args.state is None:
        for g in admin.list_groups():
            print(g.group_id)
        return
    listed = admin.list_groups(_states(args) or None)
    _print_rows([("GROUP", "STATE")] + [(g.group_id, g.state or "-") for g in sorted(listed, key=lambda g: g.group_id)])


def _member_rows(admin: Any, group_id: str, verbose: bool) -> list[tuple[str, ...]]:
    description = admin.describe_consumer_groups([group_id])[group_id]
    if not description.members:
        print(f"Consumer group '{group_id}' has no active members.")
        return []
    consumer = description.type == "consumer"
    header: tuple[str, ...] = ("GROUP", "CONSUMER-ID") + (("GROUP-INSTANCE-ID",) if verbose else ())
    header += ("HOST", "CLIENT-ID", "#PARTITIONS")
    if verbose:
        header += ("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT")
    rows: list[tuple[str, ...]] = [header]
    for member in sorted(description.members, key=lambda m: m.member_id):
        row: tuple[str, ...] = (group_id, member.member_id)
        if verbose:
            row += (member.group_instance_id or "-",)
        row += (member.host, member.client_id, str(len(member.assignment)))
        if verbose:
            row += (
                str(member.member_epoch) if consumer else "-",
                _assignment_string(member.assignment),
                str(description.assignment_epoch) if consumer else "-",
                _assignment_string(member.target_assignment) if consumer else "-",
            )
        rows.append(row)
    return rows


def _assignment_string(partitions: Any) -> str:
    """Kafka 4.x's form: ``topic:0,1;other:2`` (topics sorted), ``-`` for none."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    text = ";".join(f"{t}:{','.join(map(str, sorted(ps)))}" for t, ps in sorted(by_topic.items()))
    return text or "-"


def _state_rows(admin: Any, group_id: str, verbose: bool = False) -> list[tuple[str, ...]]:
    description = admin.describe_consumer_groups([group_id])[group_id]
    brokers = admin.describe_cluster()["brokers"]
    coordinator = (
        f"{brokers[description.coordinator]} ({description.coordinator})"
        if description.coordinator in brokers
        else f"- ({description.coordinator})"
    )
    consumer = description.type == "consumer"
    header: tuple[str, ...] = ("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE")
    row: tuple[str, ...] = (group_id, coordinator, description.assignor or "-", description.state)
    if verbose:
        header += ("GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH")
        row += (
            str(description.group_epoch) if consumer else "-",
            str(description.assignment_epoch) if consumer else "-",
        )
    return [header + ("#MEMBERS",), row + (str(len(description.members)),)]


def _describe_rows(admin: Any, group_id: str) -> list[tuple[str, ...]]:
    description = admin.describe_consumer_groups([group_id])[group_id]
    owner: dict[Any, Any] = {}
    for member in description.members:
        for tp in member.assignment:
            owner[tp] = member
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


def _parse_datetime(text: str) -> datetime.datetime | None:
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.astimezone()  # local time, as Kafka's tool


def _reset_plan(admin: Any, args: argparse.Namespace, group: str) -> dict[Any, int]:
    """New offset per partition of ``--topic`` (or of every partition ``group`` committed, ``--all-topics``),
    clamped into [log start, high watermark] as Kafka's tool does."""
    from spark_kafkalog.client import OffsetSpec, TopicPartition

    tps: list[Any] = sorted(admin.list_group_offsets(group)) if args.all_topics else []
    if not tps and args.all_topics:
        return {}
    for item in args.topic or ():
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
        committed = admin.list_group_offsets(group, tps)
        target = {tp: (committed[tp].offset if tp in committed else latest[tp]) + args.shift_by for tp in tps}
    return {tp: min(max(target[tp], earliest[tp]), latest[tp]) for tp in tps}


def _print_rows(rows: list[tuple[str, ...]]) -> None:
    if not rows:
        return
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
