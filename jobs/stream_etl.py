"""Streaming ETL through ``format("kafkalog")``: order events in, revenue per event-time window and item out.

    PYSPARK_PYTHON=$(which python) spark-submit jobs/stream_etl.py \\
        --bootstrap-servers host:9092 --input orders --output window-revenue --checkpoint /data/ckpt/stream-etl \\
        [--trigger available-now|processing] [--output-mode append|complete] [--group stream-etl]
    python -m jobs.stream_etl ...           # same, in a local[2] session (or --master)

Input: the order events of ``jobs/batch_etl.py`` (``produce_orders``): key = user id, value = JSON
``{"user", "item", "amount"}``, the Kafka timestamp being the event time. Values that are not such JSON are
dropped. The query reads the input from its earliest offset (later runs continue from the checkpoint).

Aggregate: per tumbling event-time window (``--window``, default 10 seconds, aligned to the epoch) and item:
``orders`` and ``revenue_cents``, the sum of ``round(amount * 100)`` as a long, so the total is exact
whatever order Spark adds in (amounts have two decimals). The watermark is the largest event time seen
minus ``--watermark`` (default 10 seconds).

Output modes (Python sinks refuse Spark's ``update``):

- ``append`` (default): a window's row is written once, when the watermark passes the window's end, and is
  final. The newest windows stay in Spark's state until later events move the watermark: an
  ``available-now`` run over a topic that is no longer written leaves its last windows unwritten (a later
  run from the same checkpoint writes them once newer events arrive).
- ``complete``: every batch writes every window again; the latest record of a key is the window's current
  total. Exact at any moment, but the state is never cleaned (Spark ignores the watermark here) and each
  batch writes the whole table.

Output records: key ``"<window start ms>/<item>"``, value JSON ``{"window_start", "window_end",
"window_start_ms", "item", "orders", "revenue_cents", "revenue"}``, header ``pipeline=stream_etl``.
``--group`` commits the processed input offsets to that consumer group (``commitOffsetsToGroup``) so
``kafkalog groups describe`` shows the query's lag.

``run_stream`` starts the query (and returns it); ``expected_windows`` and ``written_windows`` compute the
same aggregates from the input topic, and read the output topic, with kafkalog's plain client (no Spark):
``jobs/main.py`` and the tests check one against the other with ``check_windows``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

ORDER_SCHEMA = "user STRING, item STRING, amount DOUBLE"  # as jobs/batch_etl.py's events
TRIGGERS = ("available-now", "processing")
OUTPUT_MODES = ("append", "complete")


@dataclass(frozen=True)
class Window:
    """One output row: ``orders`` events and ``revenue_cents`` in ``[start_ms, start_ms + size)`` for ``item``."""

    start_ms: int
    item: str
    orders: int
    revenue_cents: int


def window_aggregates(
    spark,
    bootstrap_servers: str,
    input_topic: str,
    *,
    window: str = "10 seconds",
    watermark: str = "10 seconds",
    read_options: Mapping[str, str] | None = None,
):
    """The streaming DataFrame of output records (``key``, ``value``, ``headers``) for ``input_topic``."""
    from pyspark.sql import functions as F

    reader = (
        spark.readStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("subscribe", input_topic)
        .option("startingOffsets", "earliest")
    )
    for key, value in (read_options or {}).items():
        reader = reader.option(key, value)
    orders = (
        reader.load()
        .select("timestamp", F.from_json(F.col("value").cast("string"), ORDER_SCHEMA).alias("o"))
        .where(F.col("o.user").isNotNull() & F.col("o.item").isNotNull() & F.col("o.amount").isNotNull())
        .select(
            "timestamp", F.col("o.item").alias("item"), F.round(F.col("o.amount") * 100).cast("long").alias("cents")
        )
    )
    totals = (
        orders.withWatermark("timestamp", watermark)
        .groupBy(F.window("timestamp", window).alias("w"), "item")
        .agg(F.count("*").alias("orders"), F.sum("cents").alias("revenue_cents"))
    )
    start_ms = F.unix_millis(F.col("w.start"))
    iso = "yyyy-MM-dd'T'HH:mm:ss.SSSX"
    return totals.select(
        F.concat_ws("/", start_ms.cast("string"), F.col("item")).alias("key"),
        F.to_json(
            F.struct(
                F.date_format("w.start", iso).alias("window_start"),
                F.date_format("w.end", iso).alias("window_end"),
                start_ms.alias("window_start_ms"),
                "item",
                "orders",
                "revenue_cents",
                (F.col("revenue_cents") / 100).alias("revenue"),
            )
        ).alias("value"),
        F.array(F.struct(F.lit("pipeline").alias("key"), F.lit("stream_etl").cast("binary").alias("value"))).alias(
            "headers"
        ),
    )


def run_stream(
    spark,
    bootstrap_servers: str,
    input_topic: str,
    output_topic: str,
    checkpoint: str,
    *,
    trigger: str = "available-now",
    output_mode: str = "append",
    window: str = "10 seconds",
    watermark: str = "10 seconds",
    processing_interval: str = "1 second",
    group: str | None = None,
    max_offsets_per_trigger: int | None = None,
    read_options: Mapping[str, str] | None = None,
    query_name: str | None = None,
    exactly_once: bool = False,
):
    """Start the pipeline; returns the ``StreamingQuery`` (an ``available-now`` query ends by itself:
    ``awaitTermination()``; a ``processing`` one runs a micro-batch every ``processing_interval`` until
    ``stop()``). ``group`` commits the processed offsets to that consumer group. ``exactly_once``: the sink
    writes each micro-batch in transactions its driver commits (read the output with read_committed)."""
    if trigger not in TRIGGERS:
        raise ValueError(f"trigger must be one of {', '.join(TRIGGERS)}, got {trigger!r}")
    if output_mode not in OUTPUT_MODES:
        raise ValueError(f"output mode must be one of {', '.join(OUTPUT_MODES)}, got {output_mode!r}")
    options = dict(read_options or {})
    if group:
        options["commitOffsetsToGroup"] = group
    if max_offsets_per_trigger:
        options["maxOffsetsPerTrigger"] = str(max_offsets_per_trigger)
    df = window_aggregates(
        spark, bootstrap_servers, input_topic, window=window, watermark=watermark, read_options=options
    )
    writer = (
        df.writeStream.format("kafkalog")
        .outputMode(output_mode)
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", output_topic)
        .option("checkpointLocation", checkpoint)
        .option("exactlyOnce", str(exactly_once).lower())
    )
    if query_name:
        writer = writer.queryName(query_name)
    if trigger == "available-now":
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=processing_interval)
    return writer.start()


# -- checking, with the plain client ------------------------------------------------------------------------


def topic_records(bootstrap_servers: str, topic: str):
    """Every record of ``topic`` below the high watermarks seen now, partition by partition (plain client)."""
    from spark_kafkalog.client import KafkaClient, TopicPartition

    with KafkaClient(bootstrap_servers) as client:
        tps = [TopicPartition(topic, p) for p in client.partitions_for(topic)]
        ends = client.list_offsets({tp: -1 for tp in tps})
        for tp in tps:
            if ends[tp] == 0:
                continue
            for fb in client.fetch_batches(tp, 0, ends[tp]):
                for rec in fb.batch.records():
                    if rec.offset < ends[tp]:
                        yield tp.partition, rec


def expected_windows(
    bootstrap_servers: str, input_topic: str, window_ms: int = 10_000
) -> dict[tuple[int, str], Window]:
    """The pipeline's aggregates computed in Python from the input topic as it is now: ``{(start_ms, item): Window}``."""
    acc: dict[tuple[int, str], list[int]] = {}
    for _, rec in topic_records(bootstrap_servers, input_topic):
        try:
            order = json.loads(rec.value)
            item, cents = order["item"], round(float(order["amount"]) * 100)
            if order["user"] is None or item is None:
                continue
        except (TypeError, ValueError, KeyError):
            continue
        key = (rec.timestamp - rec.timestamp % window_ms, item)
        counts = acc.setdefault(key, [0, 0])
        counts[0] += 1
        counts[1] += cents
    return {k: Window(k[0], k[1], n, cents) for k, (n, cents) in acc.items()}


def written_windows(bootstrap_servers: str, output_topic: str) -> tuple[dict[tuple[int, str], Window], int, list[str]]:
    """The output topic read back: the latest record per key, the number of records, and the keys written
    more than once with different values (in ``append`` mode a window must be written once, finally)."""
    latest: dict[tuple[int, str], Window] = {}
    changed: list[str] = []
    count = 0
    for _, rec in sorted(topic_records(bootstrap_servers, output_topic), key=lambda pr: (pr[0], pr[1].offset)):
        count += 1
        v = json.loads(rec.value)
        w = Window(v["window_start_ms"], v["item"], v["orders"], v["revenue_cents"])
        key = (w.start_ms, w.item)
        if key in latest and latest[key] != w:
            changed.append(rec.key.decode())
        latest[key] = w
    return latest, count, changed


def check_windows(
    expected: Mapping[tuple[int, str], Window],
    written: Mapping[tuple[int, str], Window],
    *,
    closed_before_ms: int | None = None,
    window_ms: int = 10_000,
) -> list[str]:
    """Differences between ``written`` and ``expected``; with ``closed_before_ms`` (append mode: the query's
    watermark) only windows ending at or before it are expected, and none after it may have been written."""
    problems = []
    if closed_before_ms is not None:
        expected = {k: w for k, w in expected.items() if k[0] + window_ms <= closed_before_ms}
        early = [k for k in written if k[0] + window_ms > closed_before_ms]
        if early:
            problems.append(f"{len(early)} window(s) written before the watermark closed them, e.g. {min(early)}")
    missing = sorted(set(expected) - set(written))
    if missing:
        problems.append(f"{len(missing)} window(s) not written, e.g. {missing[0]}")
    extra = sorted(set(written) - set(expected))
    if extra and closed_before_ms is None:
        problems.append(f"{len(extra)} window(s) written that no input has, e.g. {extra[0]}")
    wrong = sorted(k for k in set(expected) & set(written) if expected[k] != written[k])
    if wrong:
        problems.append(f"{len(wrong)} window(s) with wrong totals, e.g. {expected[wrong[0]]} vs {written[wrong[0]]}")
    return problems


def watermark_ms(query) -> int | None:
    """The watermark of the query's last batch in epoch ms (None before the first batch)."""
    from datetime import datetime

    progress = query.lastProgress
    stamp = progress["eventTime"].get("watermark") if progress else None
    if not stamp:
        return None
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def describe_progress(progress) -> str:
    """One line for a ``StreamingQueryProgress``: rows, rates, latency and watermark."""
    rate = progress["processedRowsPerSecond"] or 0.0
    return (
        f"batch {progress['batchId']:>3}: {progress['numInputRows']:>7,} input rows, "
        f"{rate:>9,.0f} rows/s processed, latency {progress['durationMs'].get('triggerExecution', 0):>5} ms, "
        f"watermark {progress['eventTime'].get('watermark', '-')}"
    )


def print_new_progress(query, seen: set[int], out: Callable[[str], None] = print) -> None:
    """Print each progress of ``query`` not printed yet (by batch id)."""
    for progress in query.recentProgress:
        if progress["batchId"] not in seen:
            seen.add(progress["batchId"])
            out("  " + describe_progress(progress))


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bootstrap-servers", required=True, help="Kafka bootstrap servers, host:port[,host:port]")
    parser.add_argument("--input", required=True, help="input topic (order events)")
    parser.add_argument("--output", required=True, help="output topic (window aggregates)")
    parser.add_argument("--checkpoint", required=True, help="checkpoint directory of the query")
    parser.add_argument("--trigger", choices=TRIGGERS, default="available-now")
    parser.add_argument("--output-mode", choices=OUTPUT_MODES, default="append")
    parser.add_argument("--window", default="10 seconds")
    parser.add_argument("--watermark", default="10 seconds")
    parser.add_argument("--interval", default="1 second", help="processing-time trigger interval")
    parser.add_argument("--group", default=None, help="consumer group receiving the processed offsets")
    parser.add_argument("--max-offsets-per-trigger", type=int, default=None)
    parser.add_argument(
        "--duration", type=float, default=None, help="with --trigger processing: stop after this many seconds"
    )
    parser.add_argument(
        "--exactly-once",
        action="store_true",
        help="write each micro-batch in Kafka transactions (exactly-once for read_committed readers)",
    )
    parser.add_argument("--master", default=None, help="Spark master when not run by spark-submit (default local[2])")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    from pyspark.sql import SparkSession

    from spark_kafkalog.datasource import kafkalog_session, register

    if os.environ.get("PYSPARK_GATEWAY_PORT") and args.master is None:
        spark = SparkSession.builder.appName("kafkalog-stream-etl").getOrCreate()  # spark-submit chose the master
        register(spark)
    else:
        spark = kafkalog_session(args.master or "local[2]", "kafkalog-stream-etl")
    query = run_stream(
        spark,
        args.bootstrap_servers,
        args.input,
        args.output,
        args.checkpoint,
        trigger=args.trigger,
        output_mode=args.output_mode,
        window=args.window,
        watermark=args.watermark,
        processing_interval=args.interval,
        group=args.group,
        max_offsets_per_trigger=args.max_offsets_per_trigger,
        exactly_once=args.exactly_once,
    )
    seen: set[int] = set()
    deadline = None if args.duration is None else time.monotonic() + args.duration
    try:
        while query.isActive and (deadline is None or time.monotonic() < deadline):
            query.awaitTermination(0.5)
            print_new_progress(query, seen)
    except KeyboardInterrupt:
        pass
    finally:
        query.stop()
    print_new_progress(query, seen)
    if query.exception() is not None:
        print(f"stream_etl failed: {query.exception()}", file=sys.stderr)
        return 1
    print(f"stream_etl: {len(seen)} batch(es), watermark {watermark_ms(query)} ms; checkpoint {args.checkpoint}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
