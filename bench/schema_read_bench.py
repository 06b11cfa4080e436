"""Spark rows/s reading Avro records in Confluent's wire format into struct columns vs reading the same records raw.

A 2-partition topic of ``--records`` records (default 1,000,000) is filled by confluent-kafka's producer with
values of a 10-field Avro record (long, int, string x3, double, boolean, nullable string, long timestamp-millis,
an enum), framed with the schema id the record's schema got from kafkalog's Schema Registry (an
``EmbeddedCluster`` broker process serving it). The same topic is then read, in the same run, by:

- ``raw``: ``spark.read.format("kafkalog")...load()`` (binary key and value) into Spark's ``noop`` sink;
- ``avro``: the same with ``valueFormat=avro`` (the value decoded into a struct column in the read tasks:
  writer schema by id from the per-process cache, then ``AvroCodec.decode_arrow``: the compiled kernel,
  one Arrow column per batch; the per-record path, ``decode_many`` and ``pa.array``, without it);
- ``codec``: ``AvroCodec.decode_many`` alone over the payloads, in this process (the Python path's ceiling),
  and ``AvroCodec.decode_arrow`` (the compiled kernel ``avro`` uses when built) over the same values.

Spark runs are local[2] (one task per partition), a warm-up round first, then the best of ``--repeats``
rounds in which the two readers alternate. Writes ``bench/results/schema_read.json`` and
``schema_read.png``, with the machine's load averages before and after (other processes share the cores).

Run: ``python bench/schema_read_bench.py [--quick] [--records N]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.stats import confluent_fill  # noqa: E402
from spark_kafkalog.client import AdminClient, NewTopic  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PARTITIONS = 2
TOPIC = "bench-schema-read"
SCHEMA = {
    "type": "record",
    "name": "Event",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user_id", "type": "int"},
        {"name": "user", "type": "string"},
        {"name": "page", "type": "string"},
        {"name": "agent", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "ok", "type": "boolean"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CLICK", "VIEW", "BUY"]}},
    ],
}


def make_values(count: int, schema_id: int) -> list[bytes]:
    """``count`` distinct framed Avro values (cycled over when producing more)."""
    from datetime import UTC, datetime

    from fastavro import parse_schema, schemaless_writer

    from spark_kafkalog.schemas.wire_format import frame

    parsed = parse_schema(SCHEMA)
    rng = random.Random(1)
    out = []
    for i in range(count):
        buffer = io.BytesIO()
        record = {
            "id": i,
            "user_id": rng.randrange(1_000_000),
            "user": f"user-{rng.randrange(100_000)}",
            "page": f"/p/{rng.randrange(1000)}",
            "agent": rng.choice(("firefox", "chrome", "safari", "curl")),
            "amount": rng.random() * 100,
            "ok": bool(i % 2),
            "note": None if i % 3 else f"n{i}",
            "at": datetime.fromtimestamp(1_700_000_000 + i, UTC),
            "kind": ("CLICK", "VIEW", "BUY")[i % 3],
        }
        schemaless_writer(buffer, parsed, record)
        out.append(frame(schema_id, buffer.getvalue()))
    return out


def fill(bootstrap: str, records: int, values: list[bytes]) -> float:
    return confluent_fill(bootstrap, TOPIC, values, records, PARTITIONS)


def codec_rate(url: str, values: list[bytes], schema_id: int) -> tuple[float, float | None]:
    """Records/s of ``AvroCodec.decode_many`` over the payloads (registry lookups done before timing), and of
    the compiled ``AvroCodec.decode_arrow`` over the framed values as one Arrow column (None: not built)."""
    import pyarrow as pa

    from spark_kafkalog.datasource.formats import RegistrySettings
    from spark_kafkalog.datasource.registry_cache import reader_codec, schema_by_id
    from spark_kafkalog.schemas.wire_format import unframe

    settings = RegistrySettings((("url", url),), (url,))
    codec = reader_codec(settings, schema_id)
    writer = schema_by_id(settings, schema_id)
    payloads = [unframe(v)[2] for v in values]
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        codec.decode_many(payloads, writer)
        best = min(best, time.perf_counter() - started)
    column = pa.array(values, pa.binary())
    compiled = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        if codec.decode_arrow(column, writer, 5) is None:
            return len(payloads) / best, None
        compiled = min(compiled, time.perf_counter() - started)
    return len(payloads) / best, len(values) / compiled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 records, one repeat")
    parser.add_argument("--records", type=int, default=None, help="records in the topic (default 1,000,000)")
    parser.add_argument("--repeats", type=int, default=None, help="rounds after the warm-up, best kept (default 3)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    records = args.records or (100_000 if args.quick else 1_000_000)
    repeats = args.repeats or (1 if args.quick else 3)

    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    from broker.embedded_cluster import EmbeddedCluster
    from spark_kafkalog.datasource import kafkalog_session

    load_before = os.getloadavg()
    started = time.perf_counter()
    spark = kafkalog_session("local[2]", "kafkalog-schema-bench", conf={"spark.ui.enabled": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    with EmbeddedCluster(brokers=1, schema_registry=True) as cluster, AdminClient(cluster.bootstrap_servers) as admin:
        bootstrap, url = cluster.bootstrap_servers, cluster.schema_registry_url
        assert url, "the cluster serves no Schema Registry"
        schema_id = SchemaRegistryClient({"url": url}).register_schema(f"{TOPIC}-value", Schema(json.dumps(SCHEMA)))
        values = make_values(min(records, 100_000), schema_id)
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])
        fill_s = fill(bootstrap, records, values)

        def load(formatted: bool):
            r = spark.read.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", TOPIC)
            if formatted:
                r = r.option("valueFormat", "avro").option("schema.registry.url", url)
            return r.load()

        if (count := load(True).count()) != records:
            raise SystemExit(f"Spark read {count} Avro records, {records} were produced")
        best = {"raw": float("inf"), "avro": float("inf")}
        for n in range(repeats + 1):
            for name in best:
                t0 = time.perf_counter()
                load(name == "avro").write.format("noop").mode("overwrite").save()
                if n:  # the first round warms the JVM and the Python workers up
                    best[name] = min(best[name], time.perf_counter() - t0)
        codec_rps, compiled_rps = codec_rate(url, values, schema_id)
    rates = {name: round(records / seconds) for name, seconds in best.items()}
    result = {
        "method": {
            "records": records,
            "partitions": PARTITIONS,
            "schema": "10-field Avro record (long, int, 3 strings, double, boolean, nullable string, timestamp-millis, enum)",
            "spark": "local[2], noop sink, a warm-up round, then best of repeats with raw and avro alternating, fresh load() each",
            "repeats": repeats,
            "codec": "AvroCodec.decode_many over the unframed payloads in one process (best of 3)",
            "codec_compiled": "AvroCodec.decode_arrow (the C kernel the avro read uses) over the framed values as "
            "one Arrow column, one process (best of 3)",
            "fill": "confluent-kafka producer, linger.ms 20, batch.size 1 MB, values framed with the registered id",
            "quick": args.quick,
        },
        "machine": machine_info(("pyspark", "pyarrow", "fastavro", "confluent-kafka")),
        "load_average_1_5_15_min": {
            "before": [round(v, 2) for v in load_before],
            "after": [round(v, 2) for v in os.getloadavg()],
        },
        "fill_seconds": round(fill_s, 2),
        "seconds": {name: round(s, 3) for name, s in best.items()},
        "rows_per_s": rates,
        "codec_rows_per_s": round(codec_rps),
        "codec_compiled_rows_per_s": round(compiled_rps) if compiled_rps is not None else None,
        "avro_to_raw": round(rates["avro"] / rates["raw"], 3),
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    spark.stop()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "schema_read.json").write_text(json.dumps(result, indent=2) + "\n")
    plots.save("schema_read", result, args.out / "schema_read.png")
    print(
        f"raw {rates['raw']:,} rows/s, avro {rates['avro']:,} rows/s ({result['avro_to_raw']:.0%} of raw), "
        f"codec alone {result['codec_rows_per_s']:,} rows/s; wrote {args.out / 'schema_read.json'} and schema_read.png"
    )


if __name__ == "__main__":
    main()
