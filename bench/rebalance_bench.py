"""Rebalance time after one member leaves: the classic group protocol vs the consumer protocol (KIP-848), on
kafkalog and on Apache Kafka 4.4 in the same run (issue 28).

Each case: 10 confluent-kafka consumers in one group on a 20-partition topic (their own group and topic per
case); once every partition is owned exactly once, one member closes (LeaveGroup, or a ConsumerGroupHeartbeat
with epoch -1) and the time until the other 9 own all 20 partitions again, each exactly once, is measured;
then again from 9 and from 8 members (``seconds_after_leave`` is the slowest of the three). Ownership is
tracked from the clients' rebalance callbacks, incrementally (the consumer protocol's callbacks are
incremental; the classic eager protocol revokes everything and assigns the whole new share, which the same
bookkeeping handles).

* classic: ``partition.assignment.strategy=range`` (eager), ``session.timeout.ms`` 6000,
  ``heartbeat.interval.ms`` 1000, ``max.poll.interval.ms`` 10000; the brokers run with
  ``group.initial.rebalance.delay.ms=0``.
* consumer: ``group.protocol=consumer``, ``group.remote.assignor=range``; the brokers' heartbeat interval is
  set to the classic members' 1000 ms (``group.consumer.heartbeat.interval.ms``, and Kafka's
  ``group.consumer.min.heartbeat.interval.ms``), so both protocols get the same heartbeat.

The reference (``--reference kafka``, the default when ``make peers`` fetched its jars): the same two cases
against Apache Kafka 4.4.0 (KRaft, one combined node: ``tests.compat.kafka_broker.KafkaBroker`` with Kafka's
production JVM flags). ``checks`` compares each protocol on kafkalog with the same protocol on Kafka
(``vs_reference``: kafkalog's seconds over Kafka's) and the two protocols on each system.

Writes ``bench/results/rebalance.json`` and ``rebalance.png``. Run:
``python -m bench.rebalance_bench [--quick] [--reference kafka|none]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.reference import reference_plan  # noqa: E402
from spark_kafkalog.client import AdminClient, NewTopic  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SESSION_MS = 6000
HEARTBEAT_MS = 1000
MAX_POLL_MS = 10000  # the rebalance timeout a Java-style consumer announces
PROTOCOLS = ("classic", "consumer")
# Broker settings both systems run with: no initial rebalance delay, short sessions allowed, and the consumer
# protocol's heartbeat at the classic members' interval.
BROKER_SETTINGS = {
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 1000,
    "group.consumer.heartbeat.interval.ms": HEARTBEAT_MS,
    "group.consumer.min.heartbeat.interval.ms": HEARTBEAT_MS,
}


def consumer_config(bootstrap: str, group: str, group_protocol: str) -> dict[str, Any]:
    """confluent-kafka settings for one member (see the module docstring)."""
    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest"}
    if group_protocol == "consumer":
        config.update({"group.protocol": "consumer", "group.remote.assignor": "range"})
    else:
        config.update(
            {
                "session.timeout.ms": SESSION_MS,
                "heartbeat.interval.ms": HEARTBEAT_MS,
                "max.poll.interval.ms": MAX_POLL_MS,
                "partition.assignment.strategy": "range",
            }
        )
    return config


def rebalance_after_leave(
    bootstrap: str,
    members: int,
    partitions: int,
    leaves: int,
    *,
    group_protocol: str = "classic",
    name: str = "bench-rebalance",
) -> dict:
    """``members`` confluent-kafka consumers on a new ``partitions``-partition topic ``name`` in group ``name``;
    then ``leaves`` times one member closes and the time until the others own every partition again, each
    exactly once, is measured."""
    from confluent_kafka import Consumer

    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    owned: dict[int, set[int]] = {}
    lock = threading.Lock()
    stop = [threading.Event() for _ in range(members)]
    errors: list[str] = []

    def member(i: int) -> None:
        c = Consumer(consumer_config(bootstrap, name, group_protocol))

        def on_assign(_c, tps):
            with lock:
                owned.setdefault(i, set()).update(tp.partition for tp in tps)

        def on_revoke(_c, tps):
            with lock:
                owned.setdefault(i, set()).difference_update(tp.partition for tp in tps)

        def on_lost(_c, tps):
            on_revoke(_c, tps)

        try:
            c.subscribe([name], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
            while not stop[i].is_set():
                msg = c.poll(0.1)
                error = None if msg is None else msg.error()
                if error is not None and not error.retriable():
                    errors.append(f"member {i}: {error}")
        finally:
            with lock:
                owned.pop(i, None)
            c.close()

    threads = [threading.Thread(target=member, args=(i,), daemon=True) for i in range(members)]
    started = time.monotonic()
    for t in threads:
        t.start()

    def covered(ids) -> bool:
        """Every member owns a share, and the shares cover each partition exactly once."""
        with lock:
            parts = [set(owned.get(i, ())) for i in ids]
        return all(parts) and len(set().union(*parts)) == partitions and sum(len(p) for p in parts) == partitions

    def wait_covered(ids, timeout_s: float) -> float | None:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout_s:
            if covered(ids):
                return time.monotonic() - t0
            time.sleep(0.005)
        return None

    formed_s = None if wait_covered(range(members), 120) is None else time.monotonic() - started
    rounds = []
    for k in range(leaves if formed_s is not None else 0):
        rest = range(k + 1, members)
        t0 = time.monotonic()
        stop[k].set()  # its close() leaves the group
        threads[k].join(30)
        took = wait_covered(rest, 120)
        rounds.append(
            {
                "members_before": members - k,
                "seconds_after_leave": None if took is None else round(time.monotonic() - t0, 3),
            }
        )
    for e in stop:
        e.set()
    for t in threads:
        t.join(30)
    times = [r["seconds_after_leave"] for r in rounds]
    done = [t for t in times if t is not None]
    return {
        "group_protocol": group_protocol,
        "members": members,
        "partitions": partitions,
        "group_formed_s": None if formed_s is None else round(formed_s, 3),
        "leaves": rounds,
        "rebalanced": len(done) == leaves,
        "seconds_after_leave": max(done) if done else None,
        "client_errors": errors[:5],
    }


def run_cases(bootstrap: str, system: str, members: int, partitions: int, leaves: int) -> dict:
    out = {}
    for protocol in PROTOCOLS:
        print(f"{system}: {protocol} protocol, {members} members", flush=True)
        out[protocol] = rebalance_after_leave(
            bootstrap, members, partitions, leaves, group_protocol=protocol, name=f"bench-rebalance-{protocol}"
        )
    return out


def _kafkalog(data_dir: Path, args: argparse.Namespace) -> dict:
    from broker.embedded_cluster import EmbeddedCluster

    with EmbeddedCluster(1, data_dir=str(data_dir), broker_config=dict(BROKER_SETTINGS)) as cluster:
        return run_cases(cluster.bootstrap_servers, "kafkalog", args.members, args.partitions, args.leaves)


def _kafka(data_dir: Path, args: argparse.Namespace) -> dict:
    from bench.tls_bench import KAFKA_JVM_OPTIONS
    from tests.compat.kafka_broker import KafkaBroker
    from tests.compat.peers import KAFKA_44

    extra = {k: str(v) for k, v in BROKER_SETTINGS.items()}
    with KafkaBroker(KAFKA_44, data_dir, extra=extra, jvm_options=KAFKA_JVM_OPTIONS) as broker:
        return run_cases(broker.bootstrap_servers, "kafka", args.members, args.partitions, args.leaves)


def _reference_plan(choice: str | None) -> dict:
    """The ``reference`` of the JSON before the run: Apache Kafka 4.4 with Kafka's JVM flags."""
    from bench.tls_bench import KAFKA_JVM_OPTIONS

    return reference_plan(choice, "KAFKA_44", kafka_jvm_options=KAFKA_JVM_OPTIONS)


def checks(runs: dict) -> dict:
    """Per system: consumer over classic seconds; per protocol: kafkalog over Kafka seconds (when both ran)."""

    def seconds(system: str, protocol: str) -> float | None:
        return runs.get(system, {}).get(protocol, {}).get("seconds_after_leave")

    out: dict = {}
    for system in runs:
        classic, consumer = seconds(system, "classic"), seconds(system, "consumer")
        if classic and consumer:
            out.setdefault(system, {})["consumer_vs_classic"] = round(consumer / classic, 3)
    for protocol in PROTOCOLS:
        ours, theirs = seconds("kafkalog", protocol), seconds("kafka", protocol)
        if ours and theirs:
            out.setdefault("kafkalog", {})[f"{protocol}_vs_reference"] = round(ours / theirs, 3)
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="4 members, 8 partitions, one leave")
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--leaves", type=int, default=3)
    parser.add_argument(
        "--reference", choices=("kafka", "none"), default=None,
        help="the same cases against Apache Kafka 4.4 (default: kafka when `make peers` fetched its jars)",
    )  # fmt: skip
    parser.add_argument("--out", default=str(RESULTS / "rebalance.json"))
    args = parser.parse_args(argv)
    if args.quick:
        args.members, args.partitions, args.leaves = 4, 8, 1
    reference = _reference_plan(args.reference)
    runs: dict = {}
    with tempfile.TemporaryDirectory(prefix="kafkalog-rebalance-bench-") as data_dir:
        runs["kafkalog"] = _kafkalog(Path(data_dir) / "kafkalog", args)
        if reference["requested"]:
            try:
                runs["kafka"] = _kafka(Path(data_dir) / "kafka", args)
                reference["ran"] = True
            except Exception as exc:
                reference["reason"] = f"Apache Kafka's run failed: {type(exc).__name__}: {str(exc)[-2000:]}"
        if not reference["ran"]:
            print(f"NO REFERENCE: {reference['reason']}", file=sys.stderr, flush=True)
    result = {
        "machine": machine_info(["confluent-kafka"]),
        "settings": {
            "members": args.members,
            "partitions": args.partitions,
            "leaves": args.leaves,
            "heartbeat_interval_ms": HEARTBEAT_MS,
            "quick": args.quick,
        },
        "reference": reference,
        "results": runs,
        "checks": checks(runs),
    }
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    plots.save("rebalance", result, Path(args.out).with_suffix(".png"))
    return result


if __name__ == "__main__":
    main()
