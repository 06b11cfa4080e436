"""The main job (`make run`): a real cluster, a generated topic, and the batch pipeline through Spark.

1. starts an embedded cluster: a real ZooKeeper and 3 broker processes;
2. creates a 6-partition input topic and produces 100,000 order events with kafkalog's producer
   (idempotent, acks=all, lz4), printing progress and throughput;
3. runs `jobs/batch_etl.py`'s pipeline in a local Spark session: `spark.read.format("kafkalog")` over the
   input topic, per-user aggregation, `df.write.format("kafkalog")` to an output topic;
4. reads the output topic back through Spark and checks it against what was produced (records per
   partition, every user's revenue); prints a summary and exits 1 on any mismatch.

    python -m jobs.main [--records 100000] [--brokers 3] [--partitions 6]
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def run(records: int = 100_000, brokers: int = 3, partitions: int = 6) -> int:
    from broker.embedded_cluster import EmbeddedCluster
    from jobs.batch_etl import print_summary, produce_orders, run_pipeline
    from spark_kafkalog.client import AdminClient, NewTopic

    t0 = time.monotonic()

    def say(msg: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f}s] {msg}", flush=True)

    with EmbeddedCluster(brokers) as cluster:
        bs = cluster.bootstrap_servers
        say(f"cluster up: ZooKeeper at {cluster.zookeeper_connect}, {brokers} brokers at {bs}")
        with AdminClient(bs) as admin:
            admin.create_topics([NewTopic("orders", partitions, 1, {}), NewTopic("user-totals", 3, 1, {})])
            leaders = {p.partition: p.leader for p in admin.describe_topics(["orders"])["orders"].partitions}
        say(f"topics created: orders ({partitions} partitions, leaders {leaders}), user-totals (3 partitions)")

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

        say("starting Spark (local[2]); Spark's progress bars follow")
        from spark_kafkalog.datasource import kafkalog_session

        spark = kafkalog_session("local[2]", "kafkalog-main")
        spark.conf.set("spark.sql.shuffle.partitions", "8")  # 1,000 users: the default 200 tasks are overhead
        try:
            summary = run_pipeline(spark, bs, "orders", "user-totals")
            print_summary(summary)
            read_s = summary["seconds"]
            say(f"pipeline done in {read_s:.1f}s (read, parse, aggregate, write; Spark start-up not included)")

            out = (
                spark.read.format("kafkalog")
                .option("kafka.bootstrap.servers", bs)
                .option("subscribe", "user-totals")
                .load()
                .selectExpr("CAST(value AS STRING) AS v")
                .collect()
            )
            written = {json.loads(r.v)["user"]: json.loads(r.v)["revenue"] for r in out}
        finally:
            spark.stop()

        print(f"\n{'partition':>9} {'leader':>6} {'records read':>12}")
        for p in summary["partitions_read"]:
            print(f"{p['partition']:>9} {leaders.get(p['partition'], -1):>6} {p['records']:>12,}")
        print(f"{'total':>9} {'':>6} {summary['records_read']:>12,}\n")

        problems = []
        if summary["records_read"] != records:
            problems.append(f"read {summary['records_read']} records, produced {records}")
        if summary["records_rejected"] != records // 1000:
            problems.append(f"{summary['records_rejected']} rejected, expected {records // 1000}")
        if set(written) != set(totals):
            problems.append(f"{len(written)} users written, {len(totals)} produced")
        off = [u for u in totals if u in written and abs(written[u] - round(totals[u], 2)) > 0.011]
        if off:
            problems.append(f"{len(off)} users with a wrong revenue, e.g. {off[0]}")
        say("stopping the cluster")
    if problems:
        say("MISMATCH: " + "; ".join(problems))
        return 1
    say(f"verified: {records:,} records read exactly once; {len(written):,} per-user totals written and read back")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--partitions", type=int, default=6)
    a = ap.parse_args(argv)
    return run(a.records, a.brokers, a.partitions)


if __name__ == "__main__":
    sys.exit(main())
