"""Record batch build and decode speed, ours against kafka-python 3.0.12, per codec and value size.

Each case builds one v2 batch of ``--records`` records (keys ``key-<n>``, semi-compressible JSON-like
values of 100 B or 1 KiB) and decodes it back to Python objects. Both libraries decode the same bytes.
A figure is the best of ``--repeats`` rounds of ``--inner`` iterations; rounds alternate which library
runs first. MB/s counts key + value bytes. Writes ``bench/results/records.json`` and ``records.png``.

Run: ``python bench/records_bench.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder  # noqa: E402

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from spark_kafkalog.records import Compression, RecordBatchBuilder, iter_batch_records, validate_batch  # noqa: E402

RESULTS = ROOT / "bench" / "results"
T0 = 1_700_000_000_000
VALUE_SIZES = (100, 1024)
CODECS = (Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD)
EVENTS = ("click", "view", "purchase", "scroll", "signup", "logout")


def make_values(count: int, size: int, seed: int) -> list[bytes]:
    """JSON-like values of exactly ``size`` bytes: repeated field names, random ids and hex payload."""
    rng = random.Random(seed)
    values = []
    for i in range(count):
        head = (
            f'{{"id":{i},"user":"user-{rng.randrange(100_000)}","event":"{rng.choice(EVENTS)}",'
            f'"price":{rng.random() * 100:.2f},"payload":"'
        ).encode()
        filler = rng.randbytes(size).hex().encode()
        values.append((head + filler)[: size - 2] + b'"}')
    return values


def best_time(fn, inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def measure_pair(ours, theirs, repeats: int, inner: int) -> tuple[float, float]:
    ours()
    theirs()
    best_ours = best_theirs = float("inf")
    for round_ in range(repeats):
        pair = [(ours, True), (theirs, False)]
        for fn, is_ours in pair if round_ % 2 == 0 else reversed(pair):
            elapsed = best_time(fn, inner)
            if is_ours:
                best_ours = min(best_ours, elapsed)
            else:
                best_theirs = min(best_theirs, elapsed)
    return best_ours, best_theirs


def run_case(codec: Compression, value_size: int, records: int, repeats: int, inner: int) -> dict:
    keys = [b"key-%d" % i for i in range(records)]
    values = make_values(records, value_size, seed=value_size)
    timestamps = [T0 + i for i in range(records)]
    rows = list(zip(timestamps, keys, values))
    payload_bytes = sum(len(k) + len(v) for k, v in zip(keys, values))

    def build_ours() -> bytes:
        builder = RecordBatchBuilder(codec)
        append = builder.append
        for ts, key, value in rows:
            append(ts, key, value)
        return builder.build()

    def build_theirs() -> bytes:
        builder = DefaultRecordBatchBuilder(2, int(codec), False, -1, -1, -1, batch_size=1 << 30)
        append = builder.append
        for offset, (ts, key, value) in enumerate(rows):
            append(offset, ts, key, value, [])
        return builder.build()

    batch = build_ours()
    validate_batch(batch)
    assert DefaultRecordBatch(batch).validate_crc()

    def decode_ours() -> list:
        return list(iter_batch_records(batch))

    def decode_theirs() -> list:
        return list(DefaultRecordBatch(batch))

    ours_values = [r.value for r in decode_ours()]
    assert ours_values == [r.value for r in decode_theirs()] == values

    build = measure_pair(build_ours, build_theirs, repeats, inner)
    decode = measure_pair(decode_ours, decode_theirs, repeats, inner)

    def figures(seconds: float) -> dict:
        return {
            "ms_per_batch": round(seconds * 1e3, 4),
            "records_per_s": round(records / seconds),
            "mb_per_s": round(payload_bytes / seconds / 1e6, 2),
        }

    return {
        "codec": codec.name.lower(),
        "value_size": value_size,
        "records": records,
        "payload_bytes": payload_bytes,
        "batch_bytes": len(batch),
        "build": {"ours": figures(build[0]), "kafka_python": figures(build[1]), "ratio": round(build[1] / build[0], 2)},
        "decode": {
            "ours": figures(decode[0]),
            "kafka_python": figures(decode[1]),
            "ratio": round(decode[1] / decode[0], 2),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer records and rounds (a smoke run)")
    parser.add_argument("--records", type=int, default=None, help="records per batch (default 1000; quick 200)")
    parser.add_argument("--repeats", type=int, default=None, help="rounds per figure (default 9; quick 2)")
    parser.add_argument("--inner", type=int, default=None, help="iterations per round (default 5; quick 2)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for records.json and records.png")
    args = parser.parse_args()
    records = args.records or (200 if args.quick else 1000)
    repeats = args.repeats or (2 if args.quick else 9)
    inner = args.inner or (2 if args.quick else 5)

    started = time.perf_counter()
    # Let the CPU reach a steady clock before the first timed case (the first case otherwise reads low).
    warm_up_until = time.perf_counter() + (0.5 if args.quick else 2.0)
    while time.perf_counter() < warm_up_until:
        run_case(Compression.NONE, 100, 100, 1, 1)
    cases = []
    print(
        f"{'case':>14} | {'build ours':>11} {'kafka-py':>11} {'ratio':>6} | "
        f"{'decode ours':>11} {'kafka-py':>11} {'ratio':>6}"
    )
    for value_size in VALUE_SIZES:
        for codec in CODECS:
            case = run_case(codec, value_size, records, repeats, inner)
            cases.append(case)
            b, d = case["build"], case["decode"]
            print(
                f"{case['codec']:>8} {value_size:>4} B | "
                f"{b['ours']['records_per_s']:>9,}/s {b['kafka_python']['records_per_s']:>9,}/s {b['ratio']:>5.2f}x | "
                f"{d['ours']['records_per_s']:>9,}/s {d['kafka_python']['records_per_s']:>9,}/s {d['ratio']:>5.2f}x",
                flush=True,
            )
    misses = [f"{c['codec']} {c['value_size']} B" for c in cases if c["decode"]["ratio"] < 2.0]
    result = {
        "benchmark": "records: RecordBatch v2 build and decode, spark_kafkalog.records vs kafka-python",
        "method": {
            "records_per_batch": records,
            "values": "JSON-like text around a random hex payload (compresses about 2:1); keys key-<n>",
            "repeats": repeats,
            "inner_iterations": inner,
            "timing": "best round; rounds alternate which library runs first",
            "mb_per_s": "key + value bytes per second (10^6 bytes)",
            "decode_input": "the same batch bytes (built by us) for both libraries",
            "ratio": "kafka-python time / our time (higher is better for us)",
            "quick": args.quick,
        },
        "machine": machine_info(("kafka-python", "lz4", "zstandard", "cramjam", "crc32c")),
        "cases": cases,
        "decode_target": {"min_ratio": 2.0, "cases_below": misses},
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "records.json").write_text(json.dumps(result, indent=2) + "\n")
    plots.save("records", result, args.out / "records.png")
    print(
        f"decode below 2x: {', '.join(misses) or 'none'}; wrote {args.out / 'records.json'} and records.png "
        f"in {result['elapsed_s']} s"
    )


if __name__ == "__main__":
    main()
