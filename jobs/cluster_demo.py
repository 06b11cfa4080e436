"""Cluster demo: a real 3-broker cluster (ZooKeeper plus broker processes), one 6-partition topic, 100,000
keyed records produced with kafkalog's producer and consumed back, partition by partition.

Prints where each stage stands, the record count per partition (produced vs consumed), throughput, and
checks that every record came back exactly once, in order within its partition; exits 1 otherwise.

    python -m jobs.cluster_demo [--brokers 3] [--partitions 6] [--records 100000] [--compression lz4]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter


def run(
    brokers: int = 3, partitions: int = 6, records: int = 100_000, compression: str = "lz4", data_dir: str | None = None
) -> int:
    from broker.embedded_cluster import EmbeddedCluster
    from spark_kafkalog.client import AdminClient, KafkaClient, NewTopic, Producer, TopicPartition
    from spark_kafkalog.records import default_partition

    t0 = time.monotonic()

    def say(msg: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f}s] {msg}", flush=True)

    topic = "demo-events"
    with EmbeddedCluster(brokers, data_dir=data_dir, fault_injection=False) as cluster:
        pass_ok = True
        say(
            f"cluster up: {brokers} brokers, bootstrap.servers={cluster.bootstrap_servers}, "
            f"zookeeper.connect={cluster.zookeeper_connect}"
        )
        with AdminClient(cluster.bootstrap_servers) as admin:
            admin.create_topics([NewTopic(topic, partitions, 1, {})])
            leaders = {p.partition: p.leader for p in admin.describe_topics([topic])[topic].partitions}
        say(f"topic {topic}: {partitions} partitions, leaders by partition {leaders}")

        expected: Counter = Counter()
        started = time.monotonic()
        with Producer(
            cluster.bootstrap_servers,
            acks="all",
            compression_type=compression,
            linger_ms=5,
            batch_size=64 * 1024,
            enable_idempotence=True,
        ) as producer:
            step = max(records // 10, 1)
            for i in range(records):
                key = b"user-%d" % (i % 1000)
                producer.send(topic, b"event-%08d" % i, key=key, headers=[("seq", b"%d" % i)])
                expected[default_partition(key, partitions)] += 1
                if (i + 1) % step == 0:
                    print(f"\r  produced {i + 1:,}/{records:,}", end="", flush=True)
            producer.flush()
        produce_s = time.monotonic() - started
        print()
        say(f"produced {records:,} records in {produce_s:.2f}s ({records / produce_s:,.0f} records/s, {compression})")

        started = time.monotonic()
        got: Counter = Counter()
        seen = set()
        with KafkaClient(cluster.bootstrap_servers) as client:
            tps = [TopicPartition(topic, p) for p in range(partitions)]
            ends = client.list_offsets({tp: -1 for tp in tps})
            for tp in tps:
                last = -1
                for fb in client.fetch_batches(tp, 0, ends[tp]):
                    for rec in fb.batch.records():
                        if rec.offset >= ends[tp]:
                            continue
                        if rec.offset <= last:
                            pass_ok = False
                        last = rec.offset
                        seq = int(dict(rec.headers)["seq"])
                        if seq in seen:
                            pass_ok = False
                        seen.add(seq)
                        got[tp.partition] += 1
                print(f"\r  consumed partition {tp.partition + 1}/{partitions}", end="", flush=True)
        consume_s = time.monotonic() - started
        print()
        say(
            f"consumed {sum(got.values()):,} records in {consume_s:.2f}s ({sum(got.values()) / consume_s:,.0f} records/s)"
        )

        print(f"\n{'partition':>9} {'leader':>6} {'produced':>9} {'consumed':>9}")
        for p in range(partitions):
            print(f"{p:>9} {leaders.get(p, -1):>6} {expected[p]:>9,} {got[p]:>9,}")
        print(f"{'total':>9} {'':>6} {sum(expected.values()):>9,} {sum(got.values()):>9,}\n")
        pass_ok = pass_ok and got == expected and len(seen) == records
        say("stopping the cluster")
    say("every record came back exactly once, in order per partition" if pass_ok else "MISMATCH: see the table above")
    return 0 if pass_ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--compression", default="lz4", choices=("none", "gzip", "snappy", "lz4", "zstd"))
    ap.add_argument("--data-dir", default=None)
    a = ap.parse_args(argv)
    return run(a.brokers, a.partitions, a.records, a.compression, a.data_dir)


if __name__ == "__main__":
    sys.exit(main())
