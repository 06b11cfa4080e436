"""The main job (`make run`): a real cluster, a generated topic, the batch pipeline and the streaming pipeline.

1. starts an embedded cluster: a real ZooKeeper and 3 broker processes;
2. creates its topics replicated on min(3, brokers) brokers (with 3: min.insync.replicas 2, Kafka's usual
   production setting; `__consumer_offsets` has 3 replicas too), a 6-partition input topic, and produces 100,000 order events with kafkalog's producer
   (idempotent, acks=all, lz4), printing progress and throughput;
3. runs `jobs/batch_etl.py`'s pipeline in a local Spark session: `spark.read.format("kafkalog")` over the
   input topic, per-user aggregation, `df.write.format("kafkalog")` to an output topic, and checks the
   output against what was produced (records per partition, every user's revenue);
4. runs `jobs/stream_etl.py` (revenue per 10-second event-time window and item, watermark 10 s, append
   mode) over the same topic with `Trigger.AvailableNow`, printing each micro-batch, and checks every window
   the watermark closed against the input (exactly, in cents); windows still open must not be written;
5. restarts that query from its checkpoint with a 1-second processing-time trigger for a few seconds
   while a producer thread keeps producing, printing each micro-batch (input rows, rows/s, latency) and the
   query's consumer-group lag (`commitOffsetsToGroup`), then waits for the lag to fall to 0 and checks
   every window closed by then, including those the first run left open.

Append mode is checked rather than complete: each window is then written once, as final, which is what a
consumer of the output topic wants, and the check is still exact because it compares exactly the windows
the query's own watermark (`StreamingQueryProgress.eventTime.watermark`) has closed. Exits 1 on any mismatch.

    python -m jobs.main [--records 100000] [--brokers 3] [--partitions 6] [--stream-seconds 8]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time

STREAM_GROUP = "stream-etl"


def run(records: int = 100_000, brokers: int = 3, partitions: int = 6, stream_seconds: float = 8.0) -> int:
    from broker.embedded_cluster import EmbeddedCluster
    from jobs.batch_etl import print_summary, produce_orders, run_pipeline
    from spark_kafkalog.client import AdminClient, NewTopic

    t0 = time.monotonic()

    def say(msg: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f}s] {msg}", flush=True)

    problems: list[str] = []
    with (
        EmbeddedCluster(brokers, fault_injection=False) as cluster,
        tempfile.TemporaryDirectory(prefix="stream-etl-") as checkpoint,
    ):
        bs = cluster.bootstrap_servers
        say(f"cluster up: ZooKeeper at {cluster.zookeeper_connect}, {brokers} brokers at {bs}")
        rf = min(3, brokers)
        topic_config = {"min.insync.replicas": "2"} if rf == 3 else {}
        with AdminClient(bs) as admin:
            admin.create_topics(
                [
                    NewTopic("orders", partitions, rf, topic_config),
                    NewTopic("user-totals", 3, rf, topic_config),
                    NewTopic("window-revenue", 3, rf, topic_config),
                ]
            )
            leaders = {p.partition: p.leader for p in admin.describe_topics(["orders"])["orders"].partitions}
        say(
            f"topics created (replication factor {rf}): orders ({partitions} partitions, leaders {leaders}), "
            "user-totals, window-revenue (3 each)"
        )

        started = time.monotonic()
        totals = produce_orders(
            bs,
            "orders",
            records,
            bad_every=1000,
            progress=lambda n: print(f"\r  produced {n:,}/{records:,}", end="", flush=True),
        )
        produce_s = time.monotonic() - started
        print()
        say(f"produced {records:,} orders in {produce_s:.1f}s ({records / produce_s:,.0f} records/s)")

        say("starting Spark (local[2])")
        from spark_kafkalog.datasource import kafkalog_session

        spark = kafkalog_session(
            "local[2]",
            "kafkalog-main",
            # 1,000 users, 8 items: the default 200 shuffle tasks are overhead; progress bars would cut
            # through the micro-batch lines
            conf={"spark.sql.shuffle.partitions": "4", "spark.ui.showConsoleProgress": "false"},
        )
        spark.sparkContext.setLogLevel("ERROR")
        try:
            say("batch pipeline (jobs/batch_etl.py): read orders, aggregate per user, write user-totals")
            summary = run_pipeline(spark, bs, "orders", "user-totals")
            print_summary(summary)
            say(
                f"pipeline done in {summary['seconds']:.1f}s (read, parse, aggregate, write; Spark start-up not included)"
            )
            out = (
                spark.read.format("kafkalog")
                .option("kafka.bootstrap.servers", bs)
                .option("subscribe", "user-totals")
                .load()
                .selectExpr("CAST(value AS STRING) AS v")
                .collect()
            )
            written = {json.loads(r.v)["user"]: json.loads(r.v)["revenue"] for r in out}
            problems += check_batch(summary, totals, written, records)

            print(f"\n{'partition':>9} {'leader':>6} {'records read':>12}")
            for p in summary["partitions_read"]:
                print(f"{p['partition']:>9} {leaders.get(p['partition'], -1):>6} {p['records']:>12,}")
            print(f"{'total':>9} {'':>6} {summary['records_read']:>12,}\n")
            if not problems:
                say(
                    f"batch verified: {records:,} records read once; {len(written):,} per-user totals written and read back"
                )

            produced_cents = round(sum(totals.values()) * 100)
            problems += stream_available_now(spark, bs, checkpoint, produced_cents, say)
            problems += stream_continuous(spark, bs, checkpoint, produced_cents, stream_seconds, say)
        finally:
            spark.stop()
        say("stopping the cluster")
    if problems:
        say("MISMATCH: " + "; ".join(problems))
        return 1
    say("verified: batch totals per user, and every closed streaming window, exactly as produced")
    return 0


def check_batch(summary: dict, totals: dict[str, float], written: dict[str, float], records: int) -> list[str]:
    problems = []
    if summary["records_read"] != records:
        problems.append(f"batch read {summary['records_read']} records, produced {records}")
    if summary["records_rejected"] != records // 1000:
        problems.append(f"batch rejected {summary['records_rejected']}, expected {records // 1000}")
    if set(written) != set(totals):
        problems.append(f"batch wrote {len(written)} users, {len(totals)} produced")
    off = [u for u in totals if u in written and abs(written[u] - round(totals[u], 2)) > 0.011]
    if off:
        problems.append(f"batch: {len(off)} users with a wrong revenue, e.g. {off[0]}")
    return problems


def check_stream(bs: str, query, produced_cents: int, say) -> tuple[list[str], int, int]:
    """Compare the output topic with the input for the windows the query's watermark closed; returns the
    problems, the number of windows checked and the number still open."""
    from jobs.stream_etl import check_windows, expected_windows, watermark_ms, written_windows

    watermark = watermark_ms(query) or 0
    expected = expected_windows(bs, "orders")
    problems = []
    input_cents = sum(w.revenue_cents for w in expected.values())
    if abs(input_cents - produced_cents) > 1:
        problems.append(f"the input topic holds {input_cents} cents of orders, the producers sent {produced_cents}")
    written, count, changed = written_windows(bs, "window-revenue")
    if changed:
        problems.append(f"{len(changed)} window(s) written twice with different totals, e.g. {changed[0]}")
    problems += check_windows(expected, written, closed_before_ms=watermark)
    closed = sum(1 for k in expected if k[0] + 10_000 <= watermark)
    say(
        f"output: {count} records, {len(written)} windows x items; input: {len(expected)} windows x items, "
        f"{closed} closed by the watermark, {len(expected) - closed} still open"
    )
    return problems, closed, len(expected) - closed


def stream_available_now(spark, bs: str, checkpoint: str, produced_cents: int, say) -> list[str]:
    from jobs.stream_etl import print_new_progress, run_stream

    say("streaming pipeline (jobs/stream_etl.py), Trigger.AvailableNow over what orders holds now:")
    query = run_stream(
        spark, bs, "orders", "window-revenue", checkpoint, group=STREAM_GROUP, max_offsets_per_trigger=50_000
    )
    seen: set[int] = set()
    while not query.awaitTermination(0.5):
        print_new_progress(query, seen, say)
    print_new_progress(query, seen, say)
    if query.exception() is not None:
        return [f"AvailableNow query failed: {query.exception()}"]
    problems, closed, _ = check_stream(bs, query, produced_cents, say)
    if not problems:
        say(f"AvailableNow verified: {closed} closed windows x items exact; open windows not written yet (append mode)")
    return [f"AvailableNow: {p}" for p in problems]


def stream_continuous(spark, bs: str, checkpoint: str, produced_cents: int, seconds: float, say) -> list[str]:
    from jobs.batch_etl import produce_orders
    from jobs.stream_etl import print_new_progress, run_stream
    from spark_kafkalog.client import AdminClient

    say(f"the same query from its checkpoint, a micro-batch every second, while a producer runs for {seconds:.0f}s:")
    sent_cents = [0]
    failure: list[BaseException] = []
    stop = threading.Event()

    def producer() -> None:
        chunk = 0
        try:
            while not stop.is_set():
                chunk += 1
                part = produce_orders(bs, "orders", 400, seed=1000 + chunk)
                sent_cents[0] += round(sum(part.values()) * 100)
                stop.wait(0.2)
        except BaseException as exc:  # reported by the main thread
            failure.append(exc)

    query = run_stream(spark, bs, "orders", "window-revenue", checkpoint, trigger="processing", group=STREAM_GROUP)
    thread = threading.Thread(target=producer, name="orders-producer", daemon=True)
    thread.start()
    seen: set[int] = set()
    with AdminClient(bs) as admin:

        def lag() -> dict[int, int]:
            return {p.topic_partition.partition: p.lag or 0 for p in admin.group_lag(STREAM_GROUP, ["orders"])}

        def progress_and_lag(msg: str) -> None:
            current = lag()
            say(f"{msg}; group lag {sum(current.values()):>5,}")

        try:
            until = time.monotonic() + seconds
            while time.monotonic() < until and query.isActive:
                time.sleep(0.5)
                print_new_progress(query, seen, progress_and_lag)
            stop.set()
            thread.join(30)
            say("producer stopped; waiting for the query to catch up")
            deadline = time.monotonic() + 60
            current = lag()
            while sum(current.values()) and time.monotonic() < deadline and query.isActive:
                time.sleep(0.5)
                print_new_progress(query, seen, progress_and_lag)
                current = lag()
            say("group lag per partition of orders: " + ", ".join(f"{p}: {n}" for p, n in sorted(current.items())))
            if query.isActive:  # stop between batches, so the last progress tells what was written
                query.processAllAvailable()
                while query.status["isTriggerActive"]:
                    time.sleep(0.05)
        finally:
            stop.set()
            query.stop()
    print_new_progress(query, seen, say)
    problems = []
    if failure:
        problems.append(f"the producer thread failed: {failure[0]!r}")
    if query.exception() is not None:
        return problems + [f"processing-time query failed: {query.exception()}"]
    if sum(current.values()):
        problems.append(f"the query's group lag is still {sum(current.values())} after 60 s")
    more, closed, open_ = check_stream(bs, query, produced_cents + sent_cents[0], say)
    problems += more
    if not problems:
        say(
            f"streaming verified: lag 0, {closed} closed windows x items exact (incl. those left open before), {open_} open"
        )
    return [f"processing-time run: {p}" for p in problems]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--stream-seconds", type=float, default=8.0, help="how long the producer runs beside the query")
    a = ap.parse_args(argv)
    return run(a.records, a.brokers, a.partitions, a.stream_seconds)


if __name__ == "__main__":
    sys.exit(main())
