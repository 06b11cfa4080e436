"""``kafkalog partitions reassign``: Kafka's ``kafka-reassign-partitions.sh`` for kafkalog (and any Kafka
cluster serving AlterPartitionReassignments / ListPartitionReassignments).

One partition: ``--topic T --partition P --replicas 2,3,1`` starts its reassignment (the first broker is the
preferred leader). A plan file as Kafka's tool reads it (``--reassignment-json-file F``)::

    {"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,3,1]}]}

(``log_dirs``, when present, may only say ``"any"``) with ``--execute`` (start; prints the current assignment
first, to save for a rollback), ``--verify`` (is each one complete? exit 1 while any is still in progress)
or ``--cancel`` (back to the original replicas). ``--list`` prints the ongoing reassignments as Kafka's tool
does (``foo-0: replicas: 2,3,1,0. adding: 2,3. removing: 0.``).

``--generate --topics-to-move-json-file F --broker-list 1,2,3`` proposes a plan that moves every partition of
the topics in ``F`` (``{"version":1,"topics":[{"topic":"foo"}]}``) onto those brokers, keeping each topic's
replication factor, placed as Kafka's tool does (``AdminUtils.assignReplicasToBrokers``: a random start,
rack-aware when every listed broker has a rack unless ``--disable-rack-aware``); it prints the current
assignment and the proposal, and changes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


class PlanError(Exception):
    """The reassignment JSON file cannot be used; the message names the file and the problem."""


def add_parser(sub: Any) -> None:
    pp = sub.add_parser("partitions", help="reassign partitions to other brokers")
    pp.add_argument("action", choices=("reassign",))
    pp.add_argument("--bootstrap-server", required=True)
    pp.add_argument("--topic")
    pp.add_argument("--partition", type=int)
    pp.add_argument("--replicas", help="target broker ids, preferred leader first: 2,3,1")
    pp.add_argument("--reassignment-json-file", type=Path, help="a plan as kafka-reassign-partitions reads it")
    mode = pp.add_mutually_exclusive_group()
    mode.add_argument("--execute", action="store_true", help="start the reassignments of the plan")
    mode.add_argument("--verify", action="store_true", help="report whether the plan's reassignments are complete")
    mode.add_argument("--cancel", action="store_true", help="cancel the plan's ongoing reassignments")
    mode.add_argument("--list", action="store_true", help="list the ongoing reassignments of the cluster")
    mode.add_argument("--generate", action="store_true", help="propose a plan moving topics onto --broker-list")
    pp.add_argument("--topics-to-move-json-file", type=Path, help='--generate: {"version":1,"topics":[{"topic":..}]}')
    pp.add_argument("--broker-list", help="--generate: the broker ids to move the topics onto: 1,2,3")
    pp.add_argument("--disable-rack-aware", action="store_true", help="--generate: ignore the brokers' racks")
    pp.set_defaults(func=cmd_partitions)


def parse_replicas(text: str) -> list[int] | None:
    """``"2,3,1"`` -> ``[2, 3, 1]``; None when it is not a comma-separated list of broker ids."""
    try:
        ids = [int(part) for part in text.split(",")]
    except ValueError:
        return None
    return ids if all(i >= 0 for i in ids) else None


def usage_error(args: argparse.Namespace) -> str | None:
    single = (args.topic, args.partition, args.replicas)
    mode = args.execute or args.verify or args.cancel
    generate_only = (args.topics_to_move_json_file, args.broker_list)
    if args.generate:
        if any(v is not None for v in single) or args.reassignment_json_file is not None:
            return "partitions reassign --generate takes no --topic, --partition, --replicas or plan file"
        if any(v is None for v in generate_only):
            return "partitions reassign --generate needs --topics-to-move-json-file F and --broker-list 1,2,3"
        ids = parse_replicas(args.broker_list)
        if ids is None:
            return f"--broker-list {args.broker_list!r} is not a comma-separated list of broker ids like 1,2,3"
        if len(set(ids)) != len(ids):
            return f"--broker-list {args.broker_list!r} names a broker twice"
        return None
    if any(v is not None for v in generate_only) or args.disable_rack_aware:
        return "--topics-to-move-json-file, --broker-list and --disable-rack-aware go with --generate"
    if args.list:
        if any(v is not None for v in single) or args.reassignment_json_file is not None:
            return "partitions reassign --list takes no --topic, --partition, --replicas or plan file"
        return None
    if args.reassignment_json_file is not None:
        if any(v is not None for v in single):
            return "partitions reassign: give either --reassignment-json-file or --topic/--partition/--replicas"
        if not mode:
            return "partitions reassign --reassignment-json-file needs --execute, --verify or --cancel"
        return None
    if mode:
        return "partitions reassign: --execute, --verify and --cancel go with --reassignment-json-file"
    if any(v is None for v in single):
        return (
            "partitions reassign needs --topic, --partition and --replicas (or --reassignment-json-file with "
            "--execute/--verify/--cancel, or --list)"
        )
    if args.partition < 0:
        return f"--partition must be 0 or more, not {args.partition}"
    if parse_replicas(args.replicas) is None:
        return f"--replicas {args.replicas!r} is not a comma-separated list of broker ids like 2,3,1"
    return None


def read_plan(path: Path) -> dict[tuple[str, int], list[int]]:
    """The ``{(topic, partition): replicas}`` of a reassignment JSON file (Kafka's format, version 1)."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise PlanError(f"cannot read {path}: {e.strerror or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise PlanError(f"{path} is not JSON: {e}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("partitions"), list):
        raise PlanError(
            f'{path}: expected {{"version":1,"partitions":[{{"topic":...,"partition":...,"replicas":[...]}}]}}'
        )
    if obj.get("version", 1) != 1:
        raise PlanError(f"{path}: unsupported version {obj.get('version')!r} (1 is the only one)")
    plan: dict[tuple[str, int], list[int]] = {}
    for i, entry in enumerate(obj["partitions"]):
        where = f"{path}: partitions[{i}]"
        if not isinstance(entry, dict):
            raise PlanError(f"{where} is not an object")
        topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
        if not isinstance(topic, str) or not topic:
            raise PlanError(f"{where}: no topic name")
        if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
            raise PlanError(f"{where}: partition must be a non-negative integer, not {partition!r}")
        if (
            not isinstance(replicas, list)
            or not replicas
            or not all(isinstance(r, int) and not isinstance(r, bool) and r >= 0 for r in replicas)
        ):
            raise PlanError(f"{where}: replicas must be a non-empty list of broker ids, not {replicas!r}")
        dirs = entry.get("log_dirs")
        if dirs is not None and (not isinstance(dirs, list) or any(d != "any" for d in dirs)):
            raise PlanError(f'{where}: log_dirs other than "any" are not supported (kafkalog brokers place logs)')
        if (topic, partition) in plan:
            raise PlanError(f"{where}: {topic}-{partition} is listed twice")
        plan[(topic, partition)] = replicas
    if not plan:
        raise PlanError(f"{path}: the plan lists no partitions")
    return plan


def read_topics_to_move(path: Path) -> list[str]:
    """The topic names of a topics-to-move JSON file (Kafka's format, version 1)."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise PlanError(f"cannot read {path}: {e.strerror or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise PlanError(f"{path} is not JSON: {e}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("topics"), list):
        raise PlanError(f'{path}: expected {{"version":1,"topics":[{{"topic":"foo"}}]}}')
    if obj.get("version", 1) != 1:
        raise PlanError(f"{path}: unsupported version {obj.get('version')!r} (1 is the only one)")
    names: list[str] = []
    for i, entry in enumerate(obj["topics"]):
        topic = entry.get("topic") if isinstance(entry, dict) else None
        if not isinstance(topic, str) or not topic:
            raise PlanError(f'{path}: topics[{i}] is not {{"topic": "<name>"}}')
        if topic in names:
            raise PlanError(f"{path}: topic {topic} is listed twice")
        names.append(topic)
    if not names:
        raise PlanError(f"{path}: the file lists no topics")
    return names


def propose(
    current: dict[tuple[str, int], tuple[int, ...]],
    brokers: list[int],
    racks: dict[int, str | None] | None = None,
    rng: Any = None,
) -> dict[tuple[str, int], tuple[int, ...]]:
    """Kafka's ``--generate``: every partition of each topic in ``current`` placed on ``brokers`` with the
    topic's replication factor (that of its partition 0); raises ``PlanError`` when it needs more brokers."""
    from ..metadata.cache import assign_replicas

    out: dict[tuple[str, int], tuple[int, ...]] = {}
    for topic in sorted({t for t, _ in current}):
        partitions = sorted(p for t, p in current if t == topic)
        rf = len(current[(topic, partitions[0])])
        if rf > len(brokers):
            raise PlanError(
                f"topic {topic} has replication factor {rf}, more than the {len(brokers)} brokers of --broker-list"
            )
        placed = assign_replicas(brokers, len(partitions), rf, racks=racks, rng=rng)
        out.update({(topic, p): tuple(placed[i]) for i, p in enumerate(partitions)})
    return out


def plan_json(assignment: dict[tuple[str, int], tuple[int, ...]]) -> str:
    """A plan file (Kafka's format) for ``assignment``."""
    parts = [
        {"topic": t, "partition": p, "replicas": list(r), "log_dirs": ["any"] * len(r)}
        for (t, p), r in sorted(assignment.items())
    ]
    return json.dumps({"version": 1, "partitions": parts}, separators=(",", ":"))


def _ids(ids) -> str:
    return ",".join(map(str, ids))


def cmd_partitions(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError, TopicPartition

    if args.generate:
        return _generate(args)
    try:
        plan = read_plan(args.reassignment_json_file) if args.reassignment_json_file is not None else None
    except PlanError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    if plan is None and not args.list:
        replicas = parse_replicas(args.replicas)
        assert replicas is not None, "usage_error checked --replicas"
        plan = {(args.topic, args.partition): replicas}
        args.execute = True
    try:
        with AdminClient(args.bootstrap_server) as admin:
            if args.list:
                ongoing = admin.list_partition_reassignments()
                print("Current partition reassignments:" if ongoing else "No partition reassignments found.")
                for tp, r in sorted(ongoing.items()):
                    print(
                        f"{tp}: replicas: {_ids(r.replicas)}. adding: {_ids(r.adding_replicas)}. "
                        f"removing: {_ids(r.removing_replicas)}."
                    )
                return 0
            assert plan is not None, "a plan file or --topic/--partition/--replicas unless --list"
            tps = {TopicPartition(t, p): r for (t, p), r in plan.items()}
            if args.execute:
                current = _current_assignment(admin, {tp.topic for tp in tps})
                print("Current partition replica assignment\n")
                print(plan_json({k: v for k, v in current.items() if TopicPartition(*k) in tps}))
                print("\nSave this to use as the --reassignment-json-file option during rollback")
                admin.alter_partition_reassignments(tps)
                for tp, replicas in sorted(tps.items()):
                    print(f"Started the reassignment of {tp} to replicas {_ids(replicas)}")
                return 0
            if args.cancel:
                ongoing = admin.list_partition_reassignments(list(tps))
                cancel = {tp: None for tp in tps if tp in ongoing}
                admin.alter_partition_reassignments(cancel)
                for tp in sorted(tps):
                    print(f"{'Cancelled the' if tp in cancel else 'No'} reassignment of {tp}")
                return 0
            return _verify(admin, tps)
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1


def _generate(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError

    brokers = parse_replicas(args.broker_list) or []
    try:
        topics = read_topics_to_move(args.topics_to_move_json_file)
        with AdminClient(args.bootstrap_server) as admin:
            existing = set(admin.list_topics(include_internal=True))
            missing = [t for t in topics if t not in existing]
            if missing:
                raise PlanError(f"topic {missing[0]} (in {args.topics_to_move_json_file}) does not exist")
            cluster = admin.client.metadata.brokers
            unknown = [b for b in brokers if b not in cluster]
            if unknown:
                raise PlanError(
                    f"--broker-list names broker {unknown[0]}, which is not in the cluster "
                    f"(brokers: {_ids(sorted(cluster))})"
                )
            racks = None if args.disable_rack_aware else {b: cluster[b].rack for b in brokers}
            current = _current_assignment(admin, topics)
            proposed = propose(current, brokers, racks)
    except PlanError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    print("Current partition replica assignment")
    print(plan_json(current))
    print()
    print("Proposed partition reassignment configuration")
    print(plan_json(proposed))
    return 0


def _current_assignment(admin, topics) -> dict[tuple[str, int], tuple[int, ...]]:
    descs = admin.describe_topics(sorted(topics))
    return {(name, p.partition): tuple(p.replicas) for name, d in descs.items() for p in d.partitions}


def _verify(admin, tps) -> int:
    ongoing = admin.list_partition_reassignments(list(tps))
    current = _current_assignment(admin, {tp.topic for tp in tps})
    print("Status of partition reassignment:")
    unfinished = 0
    for tp, target in sorted(tps.items()):
        if tp in ongoing:
            unfinished += 1
            print(f"Reassignment of partition {tp} is still in progress.")
        elif list(current.get((tp.topic, tp.partition), ())) == list(target):
            print(f"Reassignment of partition {tp} is complete.")
        else:
            unfinished += 1
            replicas = _ids(current.get((tp.topic, tp.partition), ()))
            print(
                f"There is no active reassignment of partition {tp}, but replica set is {replicas} rather than "
                f"{_ids(target)}."
            )
    if unfinished:
        print(f"kafkalog: {unfinished} of {len(tps)} reassignments are not complete", file=sys.stderr)
        return 1
    return 0
