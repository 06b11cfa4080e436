"""``kafkalog leader-election``: Kafka's ``kafka-leader-election.sh`` for kafkalog (and any Kafka cluster serving
ElectLeaders), over the wire with ``AdminClient.elect_leaders``.

``--election-type PREFERRED|UNCLEAN`` (any case) and exactly one of ``--topic T --partition P``,
``--all-topic-partitions`` or ``--path-to-json-file F``, a file as Kafka's tool reads it::

    {"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}

(a partition listed twice is refused). Output as Kafka's tool prints it, partitions joined by ", "::

    Successfully completed leader election (PREFERRED) for partitions foo-1
    Valid replica already elected for partitions foobar-2
    Error completing leader election (PREFERRED) for partition: foo-7: <the error>

Exit 1 when any partition could not be elected (the last line then says how many), or with "Not authorized to
perform leader election" without Alter on the cluster; 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["ElectionFileError", "add_parser", "cmd_leader_election", "read_election_file", "usage_error"]


class ElectionFileError(Exception):
    """The ``--path-to-json-file`` cannot be used; the message names the file and the problem."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("leader-election", help="elect preferred or unclean partition leaders (kafka-leader-election)")
    p.add_argument("--bootstrap-server", required=True)
    p.add_argument(
        "--election-type",
        required=True,
        type=str.upper,
        choices=("PREFERRED", "UNCLEAN"),
        help="PREFERRED: the first assigned replica when in sync; UNCLEAN: any live replica of a leaderless partition",
    )
    p.add_argument("--topic", help="the topic of --partition")
    p.add_argument("--partition", type=int, help="the partition of --topic to elect")
    p.add_argument("--all-topic-partitions", action="store_true", help="every partition of the cluster")
    p.add_argument(
        "--path-to-json-file", type=Path, help='partitions to elect: {"partitions":[{"topic":"foo","partition":1}]}'
    )
    p.set_defaults(func=cmd_leader_election)


def usage_error(args: argparse.Namespace) -> str | None:
    """Kafka's ``LeaderElectionCommandOptions.validate`` rules, or None."""
    chosen = [
        flag
        for flag, given in (
            ("--topic", args.topic is not None),
            ("--all-topic-partitions", args.all_topic_partitions),
            ("--path-to-json-file", args.path_to_json_file is not None),
        )
        if given
    ]
    if len(chosen) != 1:
        return "leader-election needs one and only one of --topic, --all-topic-partitions, --path-to-json-file" + (
            f" (given: {', '.join(chosen)})" if chosen else ""
        )
    if args.topic is not None and args.partition is None:
        return "leader-election --topic needs --partition"
    if args.topic is None and args.partition is not None:
        return "leader-election --partition is only allowed with --topic"
    return None


def read_election_file(path: Path) -> list[tuple[str, int]]:
    """The partitions of an election file (see the module docstring), in file order."""
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise ElectionFileError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise ElectionFileError(f"{path} is not JSON: {e}") from None
    if not isinstance(data, dict) or "partitions" not in data:
        raise ElectionFileError(f'{path}: replica election data is missing the "partitions" field')
    if not isinstance(data["partitions"], list):
        raise ElectionFileError(f'{path}: "partitions" must be a list of {{"topic": ..., "partition": ...}}')
    found: list[tuple[str, int]] = []
    for i, entry in enumerate(data["partitions"]):
        topic = entry.get("topic") if isinstance(entry, dict) else None
        partition = entry.get("partition") if isinstance(entry, dict) else None
        if not isinstance(topic, str) or isinstance(partition, bool) or not isinstance(partition, int):
            raise ElectionFileError(f'{path}: partitions[{i}] needs a "topic" string and a "partition" integer')
        found.append((topic, partition))
    duplicates = sorted({f"{t}-{p}" for t, p in found if found.count((t, p)) > 1})
    if duplicates:
        raise ElectionFileError(f"{path}: replica election data contains duplicate partitions: {', '.join(duplicates)}")
    return found


def cmd_leader_election(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError, TopicPartition
    from spark_kafkalog.protocol import ErrorCode

    try:
        if args.path_to_json_file is not None:
            wanted: list | None = [TopicPartition(t, p) for t, p in read_election_file(args.path_to_json_file)]
        elif args.topic is not None:
            wanted = [TopicPartition(args.topic, args.partition)]
        else:
            wanted = None
    except ElectionFileError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    kind = args.election_type
    try:
        with AdminClient(args.bootstrap_server) as admin:
            results = admin.elect_leaders(kind.lower(), wanted)
    except KafkaClientError as e:
        if e.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
            print("Not authorized to perform leader election")
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    succeeded = [tp for tp, err in sorted(results.items()) if err is None]
    noop = [
        tp for tp, err in sorted(results.items()) if err is not None and err.error_code == ErrorCode.ELECTION_NOT_NEEDED
    ]
    failed = {
        tp: err
        for tp, err in sorted(results.items())
        if err is not None and err.error_code != ErrorCode.ELECTION_NOT_NEEDED
    }
    if succeeded:
        print(f"Successfully completed leader election ({kind}) for partitions {', '.join(map(str, succeeded))}")
    if noop:
        print(f"Valid replica already elected for partitions {', '.join(map(str, noop))}")
    for tp, err in failed.items():
        print(f"Error completing leader election ({kind}) for partition: {tp}: {err}")
    if failed:
        print(f"kafkalog: {len(failed)} replica(s) could not be elected", file=sys.stderr)
        return 1
    return 0
