"""Batch ETL through ``format("kafkalog")``: read an input topic, aggregate per user, write an output topic.

    PYSPARK_PYTHON=$(which python) spark-submit jobs/batch_etl.py \\
        --bootstrap-servers host:9092 --input-topic orders --output-topic user-totals
    python -m jobs.batch_etl ...            # same, in a local[2] session (or --master)

Input records: key = user id, value = JSON ``{"user": "u7", "item": "book", "amount": 12.5}``, the Kafka
timestamp being the event time (``produce_orders`` writes such a topic). Values that are not such JSON are
counted as rejected, not fatal. Output records, one per user: key = user id, value = JSON
``{"user", "orders", "items", "revenue", "first_order", "last_order"}``, headers ``pipeline`` and
``source`` (the input topic and offset ranges read). ``run_pipeline`` returns the summary it prints;
``produce_orders`` (plain client, no Spark) generates an input topic for demos and ``make run``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Mapping

ORDER_SCHEMA = "user STRING, item STRING, amount DOUBLE"
ITEMS = ("book", "lamp", "pen", "mug", "desk", "chair", "plant", "cable")


def produce_orders(
    bootstrap_servers: str,
    topic: str,
    count: int,
    *,
    users: int = 1000,
    seed: int = 7,
    bad_every: int = 0,
    progress: Callable[[int], None] | None = None,
) -> dict[str, float]:
    """Produce ``count`` order events to ``topic`` (which must exist); every ``bad_every``-th value is not
    JSON when ``bad_every`` > 0. Returns ``{user: total amount}`` of the valid events, for checking."""
    from spark_kafkalog.client import Producer

    rng = random.Random(seed)
    totals: dict[str, float] = {}
    now = int(time.time() * 1000) - count
    with Producer(bootstrap_servers, linger_ms=20, compression_type="lz4") as producer:
        for i in range(count):
            user = f"u{rng.randrange(users)}"
            if bad_every and i % bad_every == bad_every - 1:
                value = b"not json: %d" % i
            else:
                amount = round(rng.uniform(1, 200), 2)
                totals[user] = totals.get(user, 0.0) + amount
                value = json.dumps({"user": user, "item": rng.choice(ITEMS), "amount": amount}).encode()
            producer.send(topic, value, key=user.encode(), timestamp_ms=now + i)
            if progress is not None and (i + 1) % 10_000 == 0:
                progress(i + 1)
        producer.flush()
    return totals


def run_pipeline(
    spark,
    bootstrap_servers: str,
    input_topic: str,
    output_topic: str,
    *,
    read_options: Mapping[str, str] | None = None,
) -> dict:
    """Read ``input_topic``, aggregate per user, append the aggregates to ``output_topic``; returns a summary."""
    from pyspark.sql import functions as F

    started = time.monotonic()
    reader = (
        spark.read.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("subscribe", input_topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
    )
    for key, value in (read_options or {}).items():
        reader = reader.option(key, value)
    raw = reader.load().cache()  # read the topic once for the statistics and the aggregation
    ranges = raw.groupBy("partition").agg(
        F.min("offset").alias("first"), F.max("offset").alias("last"), F.count("*").alias("records")
    )
    ranges = sorted((r["partition"], r["first"], r["last"], r["records"]) for r in ranges.collect())
    records_read = sum(r[3] for r in ranges)
    parsed = raw.select("key", "timestamp", F.from_json(F.col("value").cast("string"), ORDER_SCHEMA).alias("order"))
    valid = parsed.where(F.col("order.user").isNotNull() & F.col("order.amount").isNotNull())
    totals = valid.groupBy(F.col("order.user").alias("user")).agg(
        F.count("*").alias("orders"),
        F.countDistinct("order.item").alias("items"),
        F.round(F.sum("order.amount"), 2).alias("revenue"),
        F.date_format(F.min("timestamp"), "yyyy-MM-dd'T'HH:mm:ss.SSSX").alias("first_order"),
        F.date_format(F.max("timestamp"), "yyyy-MM-dd'T'HH:mm:ss.SSSX").alias("last_order"),
    )
    source = f"{input_topic}:" + ",".join(f"{p}[{first}..{last}]" for p, first, last, _ in ranges)
    output = totals.select(
        F.col("user").cast("binary").alias("key"),
        F.to_json(F.struct("user", "orders", "items", "revenue", "first_order", "last_order")).alias("value"),
        F.array(
            F.struct(F.lit("pipeline").alias("key"), F.lit("batch_etl").cast("binary").alias("value")),
            F.struct(F.lit("source").alias("key"), F.lit(source).cast("binary").alias("value")),
        ).alias("headers"),
    ).cache()
    users = output.count()
    valid_count = valid.count()
    (
        output.write.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", output_topic)
        .option("kafka.compression.type", "zstd")
        .mode("append")
        .save()
    )
    top = totals.orderBy(F.col("revenue").desc()).limit(3).collect()
    raw.unpersist()
    output.unpersist()
    return {
        "input_topic": input_topic,
        "output_topic": output_topic,
        "partitions_read": [
            {"partition": p, "first_offset": first, "last_offset": last, "records": n} for p, first, last, n in ranges
        ],
        "records_read": records_read,
        "records_valid": valid_count,
        "records_rejected": records_read - valid_count,
        "records_written": users,
        "top_users": [{"user": r["user"], "orders": r["orders"], "revenue": r["revenue"]} for r in top],
        "seconds": round(time.monotonic() - started, 2),
    }


def print_summary(summary: dict, out=sys.stdout) -> None:
    print(f"batch_etl: {summary['input_topic']} -> {summary['output_topic']} in {summary['seconds']} s", file=out)
    for p in summary["partitions_read"]:
        print(
            f"  read partition {p['partition']}: offsets {p['first_offset']}..{p['last_offset']} ({p['records']} records)",
            file=out,
        )
    print(
        f"  records read {summary['records_read']}, valid {summary['records_valid']}, rejected "
        f"{summary['records_rejected']}; aggregates written {summary['records_written']}",
        file=out,
    )
    for row in summary["top_users"]:
        print(f"  top user {row['user']}: {row['orders']} orders, revenue {row['revenue']}", file=out)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bootstrap-servers", required=True, help="Kafka bootstrap servers, host:port[,host:port]")
    parser.add_argument("--input-topic", required=True)
    parser.add_argument("--output-topic", required=True)
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra kafkalog read option, e.g. minPartitions=8 or kafka.isolation.level=read_committed",
    )
    parser.add_argument("--master", default=None, help="Spark master when not run by spark-submit (default local[2])")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    options = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            parser.error(f"--option expects KEY=VALUE, got {item!r}")
        options[key.strip()] = value
    args.read_options = options
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    from pyspark.sql import SparkSession

    from spark_kafkalog.datasource import kafkalog_session, register

    if os.environ.get("PYSPARK_GATEWAY_PORT") and args.master is None:
        spark = SparkSession.builder.appName("kafkalog-batch-etl").getOrCreate()  # spark-submit chose the master
        register(spark)
    else:
        spark = kafkalog_session(args.master or "local[2]", "kafkalog-batch-etl")
    summary = run_pipeline(
        spark, args.bootstrap_servers, args.input_topic, args.output_topic, read_options=args.read_options
    )
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
