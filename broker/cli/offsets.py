"""``kafkalog offsets``: Kafka's ``kafka-get-offsets.sh`` for kafkalog (and any Kafka cluster).

``offsets --bootstrap-server H:P [--topic T] [--partitions 0,2-4] [--time -1|-2|-3|<ms>|latest|earliest|
max-timestamp] [--isolation-level read_committed]`` prints one line ``topic:partition:offset`` per partition,
sorted (every non-internal topic without ``--topic``). ``--time``: -1 latest (the high watermark, or the last
stable offset with read_committed; the default), -2 earliest (the log start), -3 the record with the largest
timestamp, a timestamp in ms the earliest offset whose timestamp is at or after it. As with Kafka's tool, a
partition with no such record prints an empty offset (``topic:partition:``).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

TIME_NAMES = {"latest": -1, "earliest": -2, "max-timestamp": -3}
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def add_parser(sub: Any) -> None:
    op = sub.add_parser("offsets", help="earliest, latest or by-time offsets per partition (kafka-get-offsets)")
    op.add_argument("--bootstrap-server", required=True)
    op.add_argument("--topic", default=None, help="the topic (default: every non-internal topic)")
    op.add_argument("--partitions", default=None, help="comma-separated ids or ranges: 0,2-4 (default: all)")
    op.add_argument("--time", default="-1", help="-1/latest, -2/earliest, -3/max-timestamp, or a timestamp in ms")
    op.add_argument("--isolation-level", default="read_uncommitted", choices=("read_uncommitted", "read_committed"))
    op.set_defaults(func=cmd_offsets)


def parse_time(text: str) -> int | None:
    text = text.strip().lower()
    if text in TIME_NAMES:
        return TIME_NAMES[text]
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= -3 else None


def parse_partitions(text: str) -> list[int] | None:
    """``"0,2-4"`` -> ``[0, 2, 3, 4]``; ``None`` when malformed."""
    ids: set[int] = set()
    for item in text.split(","):
        m = _RANGE.match(item.strip())
        if not m:
            return None
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            return None
        ids.update(range(lo, hi + 1))
    return sorted(ids)


def usage_error(args: argparse.Namespace) -> str | None:
    if parse_time(args.time) is None:
        return f"offsets --time must be -1 (latest), -2 (earliest), -3 (max-timestamp) or a timestamp in ms, not {args.time!r}"
    if args.partitions is not None:
        if args.topic is None:
            return "offsets --partitions needs --topic"
        if parse_partitions(args.partitions) is None:
            return f"offsets --partitions must be ids or ranges like 0,2-4, not {args.partitions!r}"
    return None


def cmd_offsets(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import KafkaClient, KafkaClientError, TopicPartition

    spec = parse_time(args.time)
    assert spec is not None
    iso = 1 if args.isolation_level == "read_committed" else 0
    try:
        with KafkaClient(args.bootstrap_server) as client:
            topics = [args.topic] if args.topic else sorted(client.topics())
            tps = []
            for topic in topics:
                existing = client.partitions_for(topic)
                wanted = existing if args.partitions is None else parse_partitions(args.partitions) or []
                missing = sorted(set(wanted) - set(existing))
                if missing:
                    raise KafkaClientError(
                        f"topic {topic} has no partition {','.join(map(str, missing))} "
                        f"(it has {len(existing)}: 0-{len(existing) - 1})",
                        retriable=False,
                    )
                tps += [TopicPartition(topic, p) for p in wanted]
            result = client.list_offsets_with_timestamps(dict.fromkeys(tps, spec), isolation_level=iso, no_match="raw")
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
    for tp in sorted(result):
        offset = result[tp][0]
        print(f"{tp.topic}:{tp.partition}:{offset if offset >= 0 else ''}")
    return 0
