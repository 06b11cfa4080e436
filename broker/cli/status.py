"""``kafkalog status``: one screen of a cluster's health, once or refreshed with ``--watch [SECONDS]``.

Shown, from the Kafka protocol alone (so it works against any Kafka cluster too): the cluster id, every
broker with its address and the partitions it leads, the controller; per topic its partitions, replication
factor and the partitions that are under-replicated (ISR smaller than the replicas) or offline (no live
leader), each listed; every consumer group with its state and total lag (high watermark - committed offset
over its committed partitions). ``collect`` gathers a ``ClusterStatus``, ``render`` formats it (pure, tested
on its own). Exit code 0; 1 when the cluster cannot be reached; ``--watch`` runs until Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from typing import Any

CLEAR = "\x1b[H\x1b[2J"


@dataclass
class TopicHealth:
    name: str
    partitions: int
    replication_factor: int
    internal: bool
    under_replicated: list[int] = field(default_factory=list)
    offline: list[int] = field(default_factory=list)


@dataclass
class GroupHealth:
    group_id: str
    state: str
    lag: int | None
    """Total lag over the committed partitions; None when nothing is committed."""


@dataclass
class ClusterStatus:
    cluster_id: str | None
    controller_id: int | None
    brokers: dict[int, str]
    leaders: dict[int, int]
    topics: list[TopicHealth]
    groups: list[GroupHealth]


def add_parser(sub: Any) -> None:
    st = sub.add_parser("status", help="one screen of cluster health (brokers, topics, groups with lag)")
    st.add_argument("--bootstrap-server", required=True)
    st.add_argument(
        "--watch", nargs="?", type=float, const=2.0, default=None, metavar="SECONDS", help="refresh (default every 2 s)"
    )
    st.add_argument("--include-internal", action="store_true", help="also list __consumer_offsets")
    st.set_defaults(func=cmd_status)


def collect(admin: Any) -> ClusterStatus:
    cluster = admin.describe_cluster()
    live = set(cluster["brokers"])
    leaders: dict[int, int] = dict.fromkeys(live, 0)
    topics = []
    for name, d in sorted(admin.describe_topics().items()):
        t = TopicHealth(name, d.num_partitions, max((len(p.replicas) for p in d.partitions), default=0), d.is_internal)
        for p in sorted(d.partitions, key=lambda p: p.partition):
            if p.leader < 0 or p.leader not in live:
                t.offline.append(p.partition)
            else:
                leaders[p.leader] = leaders.get(p.leader, 0) + 1
                if len(p.isr) < len(p.replicas):
                    t.under_replicated.append(p.partition)
        topics.append(t)
    groups = []
    for g in sorted(admin.list_groups(), key=lambda g: g.group_id):
        lags = [pl.lag for pl in admin.group_lag(g.group_id) if pl.lag is not None]
        groups.append(GroupHealth(g.group_id, g.state or "?", sum(lags) if lags else None))
    return ClusterStatus(cluster["cluster_id"], cluster["controller_id"], cluster["brokers"], leaders, topics, groups)


def render(s: ClusterStatus, *, include_internal: bool = False) -> str:
    lines = [f"cluster {s.cluster_id}   controller: broker {s.controller_id}   brokers: {len(s.brokers)}"]
    for b, address in sorted(s.brokers.items()):
        mark = " (controller)" if b == s.controller_id else ""
        lines.append(f"  broker {b:<4} {address:<24} leads {s.leaders.get(b, 0)} partitions{mark}")
    shown = [t for t in s.topics if include_internal or not t.internal]
    under = sum(len(t.under_replicated) for t in s.topics)
    offline = sum(len(t.offline) for t in s.topics)
    lines.append("")
    lines.append(f"topics: {len(shown)}   under-replicated partitions: {under}   offline partitions: {offline}")
    for t in shown:
        state = "ok"
        if t.offline or t.under_replicated:
            parts = []
            if t.offline:
                parts.append(f"offline {_ranges(t.offline)}")
            if t.under_replicated:
                parts.append(f"under-replicated {_ranges(t.under_replicated)}")
            state = ", ".join(parts)
        lines.append(f"  {t.name:<32} partitions {t.partitions:<4} rf {t.replication_factor:<2} {state}")
    hidden = [t for t in s.topics if t.internal and not include_internal and (t.offline or t.under_replicated)]
    for t in hidden:  # an internal topic's trouble is shown even when internal topics are not
        lines.append(f"  {t.name:<32} offline {len(t.offline)}, under-replicated {len(t.under_replicated)}")
    lines.append("")
    lines.append(f"groups: {len(s.groups)}")
    for g in s.groups:
        lag = "-" if g.lag is None else f"{g.lag:,}"
        lines.append(f"  {g.group_id:<32} {g.state:<20} lag {lag}")
    return "\n".join(lines)


def _ranges(values: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    out: list[str] = []
    start = prev = values[0]
    for v in [*values[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return ",".join(out)


def cmd_status(args: argparse.Namespace) -> int:
    from spark_kafkalog.client import AdminClient, KafkaClientError

    try:
        with AdminClient(args.bootstrap_server) as admin:
            while True:
                text = render(collect(admin), include_internal=args.include_internal)
                if args.watch is None:
                    print(text)
                    return 0
                stamp = time.strftime("%Y-%m-%d %H:%M:%S")
                print(f"{CLEAR}{text}\n\n{stamp}, every {args.watch:g} s (Ctrl-C to stop)", flush=True)
                time.sleep(args.watch)
    except KafkaClientError as e:
        print(f"kafkalog: {e}", file=sys.stderr)
        return 1
