"""`make bench`: run every benchmark scenario; each writes JSON (and a plot) under bench/results/.

``--replot`` runs nothing: it redraws every PNG from the JSON already in bench/results/ (bench.plots)."""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).parent
SCENARIOS = [
    ("dependency choice (CRC-32C and codecs)", "dependency_choice.py"),
    ("records: build and decode vs kafka-python", "records_bench.py"),
    ("log store: append vs plain write, fetch regions, recovery", "log_bench.py"),
    ("broker: confluent-kafka produce/consume vs machine limits", "broker_bench.py"),
    ("broker: asyncio vs uvloop event loop", "event_loop_bench.py"),
    ("datasource: Spark kafkalog read vs Python data source ceiling, client, confluent-kafka", "datasource_bench.py"),
    ("streaming: micro-batch latency, AvailableNow vs batch read rate", "streaming_bench.py"),
    ("client: produce/fetch vs kafka-python and confluent-kafka", "client_bench.py"),
    ("asyncio producer: AIOProducer vs aiokafka, blocking Producer as reference", "aio_producer_bench.py"),
    ("write path: C kernel vs NumPy vs Python record encoding", "encode_choice.py"),
    ("write: Spark kafkalog write vs the Arrow-writer ceiling, Producer.send_batch", "write_bench.py"),
    ("schemas: Spark read of 1 M Avro records into struct columns vs the same records raw", "schema_read_bench.py"),
    ("groups: offset commits/s, OffsetFetch latency, rebalance of 10 confluent-kafka members", "groups_bench.py"),
    ("replication: acks=all RF 3 vs acks=1 RF 1 throughput, failover time, end-to-end latency", "replication_bench.py"),
    ("transactions: transactional vs idempotent produce, read_committed vs read_uncommitted consume", "txn_bench.py"),
    ("kafka compare: kafkalog vs Apache Kafka 3.9.1, perf tools, confluent-kafka, Spark", "kafka_compare_bench.py"),
    ("tls: MB/s and broker CPU over SSL and SASL_SSL vs plaintext, kafkalog and Kafka 3.9.1", "tls_bench.py"),
    ("rebalance: classic vs consumer (KIP-848) protocol, 10 members, kafkalog and Kafka 4.4", "rebalance_bench.py"),
    ("quota: a 1 MiB/s client held to its quota while an unthrottled client keeps its latency", "quota_bench.py"),
    ("abuse: attacks and crashes while healthy clients produce (issue 10's rerun)", "abuse.py"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller inputs, for a smoke run")
    parser.add_argument("--replot", action="store_true", help="only redraw the PNGs from the JSON in bench/results/")
    args = parser.parse_args()
    if args.replot:
        from bench import plots

        plots.main([])
        return
    for title, script in SCENARIOS:
        path = HERE / script
        if not path.exists():
            print(f"== {title}: {script} missing", file=sys.stderr)
            continue
        print(f"== {title} ({script})", flush=True)
        sys.argv = [str(path)] + (["--quick"] if args.quick else [])
        runpy.run_path(str(path), run_name="__main__")


if __name__ == "__main__":
    main()
