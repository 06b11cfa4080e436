"""Transactional produce throughput as a share of idempotent produce (issue 17), on three broker processes.

One ``EmbeddedCluster`` (a real ZooKeeper server it starts itself plus 3 broker processes, broker defaults:
``__transaction_state`` with 50 partitions, RF 3, min ISR 2). Every measured topic has one partition, RF 3
and ``min.insync.replicas=2``; values are 100 B, uncompressed, ``acks=all``, ``linger.ms=5``.

* produce: per producer (the project's ``spark_kafkalog.client.Producer`` and confluent-kafka, librdkafka),
  ``--records`` records per run in each mode: ``idempotent`` (``enable.idempotence``, no transactions) and
  ``txn_<n>`` (a ``transactional.id``; transactions of n = 1,000 / 10,000 / 100,000 records, each
  committed). Modes alternate over ``--rounds`` rounds in the same run, each mode writing to its own topic.
  A run is timed from its first record to the last commit (``init_transactions`` and one warm-up
  transaction to another topic come before the clock starts). Per mode: records/s of each run and their
  median, commits/s, the share ``median records/s / idempotent median records/s``, and the latency of
  ``commit_transaction`` (called right after ``flush``, so it is the EndTxn round trip, not the sending
  of the last records) as p50/p99/max over every commit of every round; and, to show where the rest of a
  transaction's time goes, ``begin_to_flushed_ms``: from ``begin_transaction`` to the end of ``flush`` (the
  first send of a transaction waits for AddPartitionsToTxn, which the coordinator answers with
  CONCURRENT_TRANSACTIONS, retried by the client after its backoff, until the previous transaction's
  markers are written).
* consume: confluent-kafka consumers (manual assignment from offset 0) read each of confluent-kafka's
  transactional topics with ``isolation.level`` read_committed and read_uncommitted alternately
  (``--rounds`` times); records/s from the first record to the last, and the read_committed /
  read_uncommitted ratio. All data is committed, so both see the same records; read_committed also has
  to wait for the last stable offset and skip the transaction markers (one per commit).
* read-back check: every transactional topic (both producers) is read once more with read_committed and
  each value's header (round, transaction number, index within it) is checked: every committed
  transaction's records are all there, in order, none twice, nothing else (``partial_transactions`` and
  ``unexpected_records`` must be 0).

The machine's 1-, 5- and 15-minute load averages are recorded between the phases (other work on a shared
machine shows there). Writes ``bench/results/txn.json`` and ``txn.png``. Run:
``python -m bench.txn_bench [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.stats import percentile, wait_for  # noqa: E402
from broker.embedded_cluster import EmbeddedCluster  # noqa: E402
from spark_kafkalog.client import AdminClient, NewTopic, Producer  # noqa: E402

RESULTS = ROOT / "bench" / "results"
VALUE_BYTES = 100
TXN_SIZES = (1_000, 10_000, 100_000)
QUICK_TXN_SIZES = (100, 1_000, 5_000)
PRODUCERS = ("spark_kafkalog", "confluent_kafka")
# a value: round, transaction number within the run, index within the transaction; then padding
_HEADER = struct.Struct(">HII")
_PAD = (os.urandom(VALUE_BYTES).hex().encode())[: VALUE_BYTES - _HEADER.size]


def _value(round_: int, txn: int, index: int) -> bytes:
    return _HEADER.pack(round_, txn, index) + _PAD


def _quantiles_ms(sorted_s: list[float]) -> dict:
    return {
        "count": len(sorted_s),
        "p50": round(percentile(sorted_s, 0.5) * 1000, 2),
        "p99": round(percentile(sorted_s, 0.99) * 1000, 2),
        "max": round(sorted_s[-1] * 1000, 2),
    }


def _topic(producer: str, mode: str) -> str:
    return f"bench-txn-{producer}-{mode}"


# -- producers ----------------------------------------------------------------------------------
# ``run(topic, round, count, txn_size or None) -> (seconds, per transaction (begin to flushed, commit) s)``:
# one run of one mode.
Run = Callable[[str, int, int, int | None], tuple[float, list[tuple[float, float]]]]


def run_ours(bootstrap: str, warmup_topic: str) -> Run:
    def run(topic: str, round_: int, count: int, txn_size: int | None) -> tuple[float, list[tuple[float, float]]]:
        failed: list[BaseException] = []

        def on_delivery(_meta, err) -> None:
            if err is not None:
                failed.append(err)

        settings = dict(acks="all", linger_ms=5, batch_size=65536, compression_type="none")
        if txn_size is not None:
            settings["transactional_id"] = f"bench-ours-{uuid.uuid4().hex[:8]}"
        commits: list[tuple[float, float]] = []
        with Producer(bootstrap, **settings) as p:
            if txn_size is None:
                p.send(warmup_topic, b"warm-up", partition=0).result(30)
            else:
                p.init_transactions(60)
                p.begin_transaction()
                p.send(warmup_topic, b"warm-up", partition=0)
                p.commit_transaction(60)
            send = p.send
            start = time.perf_counter()
            if txn_size is None:
                for i in range(count):
                    send(topic, _value(round_, 0, i), partition=0, on_delivery=on_delivery)
                p.flush(300)
            else:
                for t in range(count // txn_size):
                    t0 = time.perf_counter()
                    p.begin_transaction()
                    for i in range(txn_size):
                        send(topic, _value(round_, t, i), partition=0, on_delivery=on_delivery)
                    p.flush(300)
                    c0 = time.perf_counter()
                    p.commit_transaction(120)
                    commits.append((c0 - t0, time.perf_counter() - c0))
            elapsed = time.perf_counter() - start
        if failed:
            raise RuntimeError(f"{len(failed)} deliveries failed: {failed[0]}")
        return elapsed, commits

    return run


def run_confluent(bootstrap: str, warmup_topic: str) -> Run:
    from confluent_kafka import Producer as CProducer

    def run(topic: str, round_: int, count: int, txn_size: int | None) -> tuple[float, list[tuple[float, float]]]:
        conf = {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "enable.idempotence": True,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
        }
        if txn_size is not None:
            conf["transactional.id"] = f"bench-confluent-{uuid.uuid4().hex[:8]}"
        p = CProducer(conf)
        failed = []

        def on_delivery(err, _msg) -> None:
            if err is not None:
                failed.append(err)

        def produce_all(t: int, n: int) -> None:
            for i in range(n):
                value = _value(round_, t, i)
                while True:
                    try:
                        p.produce(topic, value, partition=0, on_delivery=on_delivery)
                        break
                    except BufferError:
                        p.poll(0.01)
                if i % 10_000 == 0:
                    p.poll(0)

        commits: list[tuple[float, float]] = []
        if txn_size is None:
            p.produce(warmup_topic, b"warm-up", partition=0)
            if p.flush(30):
                raise RuntimeError("the warm-up record was not delivered")
        else:
            p.init_transactions(60)
            p.begin_transaction()
            p.produce(warmup_topic, b"warm-up", partition=0)
            p.commit_transaction(60)
        start = time.perf_counter()
        if txn_size is None:
            produce_all(0, count)
            left = p.flush(300)
        else:
            for t in range(count // txn_size):
                t0 = time.perf_counter()
                p.begin_transaction()
                produce_all(t, txn_size)
                left = p.flush(300)
                if left:
                    break
                c0 = time.perf_counter()
                p.commit_transaction(120)
                commits.append((c0 - t0, time.perf_counter() - c0))
        elapsed = time.perf_counter() - start
        if failed or left:
            raise RuntimeError(f"{len(failed)} deliveries failed ({failed[:1]}), {left} not delivered")
        return elapsed, commits

    return run


def produce(bootstrap: str, warmup_topic: str, records: int, sizes: tuple[int, ...], rounds: int) -> dict:
    """Every mode of every producer, alternating over ``rounds``; see the module docstring."""
    runners = {"spark_kafkalog": run_ours, "confluent_kafka": run_confluent}
    modes: dict[str, int | None] = {"idempotent": None, **{f"txn_{n}": n for n in sizes}}
    out: dict = {}
    for name in PRODUCERS:
        run = runners[name](bootstrap, warmup_topic)
        rates: dict[str, list[int]] = {m: [] for m in modes}
        commit_rates: dict[str, list[float]] = {m: [] for m in modes if modes[m] is not None}
        latencies: dict[str, list[float]] = {m: [] for m in commit_rates}
        sending: dict[str, list[float]] = {m: [] for m in commit_rates}
        for r in range(rounds):
            for mode, size in modes.items():
                seconds, commits = run(_topic(name, mode), r, records, size)
                rates[mode].append(round(records / seconds))
                line = f"produce {name} {mode} round {r + 1}: {records / seconds:,.0f} records/s"
                if size is not None:
                    commit_rates[mode].append(round(len(commits) / seconds, 2))
                    latencies[mode].extend(c for _, c in commits)
                    sending[mode].extend(s for s, _ in commits)
                    line += f", {len(commits) / seconds:,.1f} commits/s, commit p50 "
                    line += f"{statistics.median(c for _, c in commits) * 1000:.1f} ms, begin to flushed p50 "
                    line += f"{statistics.median(s for s, _ in commits) * 1000:.1f} ms"
                print(line, flush=True)
        base = statistics.median(rates["idempotent"])
        per_mode: dict = {}
        for mode, size in modes.items():
            median = statistics.median(rates[mode])
            entry: dict = {
                "transaction_records": size,
                "records_per_s": rates[mode],
                "median_records_per_s": median,
                "share_of_idempotent": round(median / base, 3),
            }
            if size is not None:
                lat = sorted(latencies[mode])
                entry["transactions_per_run"] = records // size
                entry["commits_per_s"] = commit_rates[mode]
                entry["median_commits_per_s"] = statistics.median(commit_rates[mode])
                entry["commit_latency_ms"] = _quantiles_ms(lat)
                entry["begin_to_flushed_ms"] = _quantiles_ms(sorted(sending[mode]))
            per_mode[mode] = entry
        out[name] = {"records_per_run": records, "modes": per_mode}
        shares = ", ".join(f"{m} {e['share_of_idempotent']:.2f}" for m, e in per_mode.items() if m != "idempotent")
        print(f"produce {name}: share of idempotent: {shares}", flush=True)
    return out


# -- consuming ----------------------------------------------------------------------------------
def _values(bootstrap: str, topic: str, isolation: str, count: int, extra_s: float = 0.0) -> Iterator[bytes]:
    """The first ``count`` record values of partition 0 (confluent-kafka, from offset 0), then any further
    ones that arrive within ``extra_s`` seconds. Raises ``TimeoutError`` when ``count`` take over 600 s."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-txn-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "fetch.max.bytes": 52_428_800,
            "max.partition.fetch.bytes": 10_485_760,
        }
    )
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        got = 0
        deadline = time.monotonic() + 600
        while got < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic} ({isolation}): {got} of {count} records after 600 s")
            for m in c.consume(10_000, 1.0):
                if m.error() is None:
                    got += 1
                    yield m.value()
        end = time.monotonic() + extra_s
        while time.monotonic() < end:
            for m in c.consume(10_000, 0.2):
                if m.error() is None:
                    yield m.value()
    finally:
        c.close()


def consume_rate(bootstrap: str, topic: str, isolation: str, count: int) -> float:
    """Records/s reading ``count`` records, timed from the first record (set-up is not throughput)."""
    values = _values(bootstrap, topic, isolation, count)
    next(values)
    start = time.perf_counter()
    n = sum(1 for _ in values)
    return n / (time.perf_counter() - start)


def consume(bootstrap: str, sizes: tuple[int, ...], records: int, rounds: int) -> dict:
    out: dict = {}
    total = records * rounds
    for size in sizes:
        topic = _topic("confluent_kafka", f"txn_{size}")
        rates: dict[str, list[int]] = {"read_committed": [], "read_uncommitted": []}
        for r in range(rounds):
            for isolation in rates:
                rate = consume_rate(bootstrap, topic, isolation, total)
                rates[isolation].append(round(rate))
                print(f"consume txn_{size} {isolation} round {r + 1}: {rate:,.0f} records/s", flush=True)
        medians = {k: statistics.median(v) for k, v in rates.items()}
        out[f"txn_{size}"] = {
            "topic_records": total,
            "commit_markers": total // size,
            "records_per_s": rates,
            "median_records_per_s": medians,
            "committed_over_uncommitted": round(medians["read_committed"] / medians["read_uncommitted"], 3),
        }
    return out


def check_read_committed(bootstrap: str, topic: str, records: int, size: int, rounds: int) -> dict:
    """Read ``topic`` with read_committed and compare it with the transactions written, in order."""
    expected = [(r, t) for r in range(rounds) for t in range(records // size)]
    counts = dict.fromkeys(expected, 0)
    out_of_order = unexpected = 0
    position = (0, 0, 0)  # the (round, transaction, index) the next record should carry
    total = records // size * size * rounds
    # a short read times out in _values; records past the expected ones (within 3 s) are unexpected
    for n, value in enumerate(_values(bootstrap, topic, "read_committed", total, extra_s=3.0)):
        head = _HEADER.unpack_from(value) if len(value) == VALUE_BYTES else None
        if head is None or n >= total or head[:2] not in counts:
            unexpected += 1
            continue
        counts[head[:2]] += 1
        if head != position:
            out_of_order += 1
        r, t, i = head
        position = (r, t, i + 1) if i + 1 < size else ((r, t + 1, 0) if t + 1 < records // size else (r + 1, 0, 0))
    partial = sum(1 for n in counts.values() if n != size)
    return {
        "transactions": len(expected),
        "complete_transactions": sum(1 for n in counts.values() if n == size),
        "partial_transactions": partial,
        "unexpected_records": unexpected,
        "out_of_order_records": out_of_order,
    }


# -- main ---------------------------------------------------------------------------------------


def _fully_replicated(bootstrap: str, topics: list[str]) -> bool:
    with AdminClient(bootstrap) as admin:
        described = admin.describe_topics(topics)
    return all(p.leader >= 0 and len(p.isr) == 3 for t in topics for p in described[t].partitions)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts and one round (a smoke run)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of every produce and consume mode")
    parser.add_argument("--records", type=int, default=None, help="records per produce run")
    parser.add_argument("--out", default=str(RESULTS / "txn.json"))
    args = parser.parse_args(argv)
    quick = args.quick
    rounds = args.rounds or (1 if quick else 3)
    sizes = QUICK_TXN_SIZES if quick else TXN_SIZES
    records = args.records or (10_000 if quick else 1_000_000)
    if any(records % n for n in sizes):
        parser.error(f"--records must be a multiple of every transaction size {sizes}")
    data_dir = tempfile.mkdtemp(prefix="kafkalog-txn-bench-")
    modes = ["idempotent", *(f"txn_{n}" for n in sizes)]
    topics = [_topic(p, m) for p in PRODUCERS for m in modes]
    warmup = "bench-txn-warmup"
    with EmbeddedCluster(3, data_dir=data_dir) as cluster:
        bs = cluster.bootstrap_servers
        with AdminClient(bs) as admin:
            admin.create_topics([NewTopic(t, 1, 3, {"min.insync.replicas": "2"}) for t in [*topics, warmup]])
        wait_for(lambda: _fully_replicated(bs, [*topics, warmup]), 120, "the bench topics fully replicated")
        result: dict = {
            "machine": machine_info(["confluent-kafka"]),
            "quick": quick,
            "cluster": {
                "brokers": 3,
                "replication_factor": 3,
                "min.insync.replicas": 2,
                "partitions_per_topic": 1,
                "value_bytes": VALUE_BYTES,
                "broker_config": "defaults",
            },
            "rounds": rounds,
            "transaction_sizes": list(sizes),
            "load_average": {"start": os.getloadavg()},
        }
        result["produce"] = produce(bs, warmup, records, sizes, rounds)
        result["load_average"]["after_produce"] = os.getloadavg()
        result["consume"] = consume(bs, sizes, records, rounds)
        result["load_average"]["after_consume"] = os.getloadavg()
        result["read_committed_check"] = {
            name: {f"txn_{n}": check_read_committed(bs, _topic(name, f"txn_{n}"), records, n, rounds) for n in sizes}
            for name in PRODUCERS
        }
        print(f"read_committed check: {json.dumps(result['read_committed_check'])}", flush=True)
        result["load_average"]["end"] = os.getloadavg()
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    plots.save("txn", result, out.with_suffix(".png"))
    return result


if __name__ == "__main__":
    main()
