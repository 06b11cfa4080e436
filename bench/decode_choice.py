"""Why the read path's record walk and byte gather are compiled: C kernel against the NumPy/Python reference.

200,000 records of the data source benchmark's shape (keys ``key-<n>``, JSON-like values) in uncompressed
v2 batches in memory, one thread; best of several runs, ns per record, for:

- the record walk: ``arrow_decode._walk_compiled`` against ``walk_records_numpy`` and its two ways of
  finding record starts (the Python loop over length varints, NumPy steps across batches);
- value bytes into an Arrow binary column, in 16,000-row batches: ``gather_binary`` against Arrow's
  ``take`` over the data cut at every value boundary.

Writes ``bench/results/decode_choice.json``. Run: ``python bench/decode_choice.py``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.datasource_bench import make_values  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from spark_kafkalog.datasource import arrow_decode as ad  # noqa: E402
from spark_kafkalog.records import BATCH_HEADER_SIZE, RecordBatchBuilder  # noqa: E402

RECORDS = 200_000
ROWS_PER_ARROW_BATCH = 16_000


def best(run, repeats: int = 5) -> float:
    fastest = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        fastest = min(fastest, time.perf_counter() - started)
    return fastest


def case(value_size: int, per_batch: int) -> dict:
    values = make_values(64, value_size)
    batches, n = [], 0
    while n < RECORDS:
        builder = RecordBatchBuilder(base_offset=n)
        for i in range(per_batch):
            builder.append(1_700_000_000_000 + i, b"key-%d" % (n + i), values[i % 64], offset_delta=i)
        batches.append(builder.build())
        n += per_batch
    data = b"".join(batches)
    buf = np.frombuffer(data, np.uint8)
    starts = (np.cumsum([0] + [len(b) for b in batches[:-1]]) + BATCH_HEADER_SIZE).astype(np.int64)
    counts = np.full(len(batches), per_batch, np.int64)
    fields = ad._walk_compiled(data, buf, starts, counts)
    begin, length = fields[7], fields[8]

    def in_arrow_batches(build):
        for at in range(0, n, ROWS_PER_ARROW_BATCH):
            build(data, begin[at : at + ROWS_PER_ARROW_BATCH], length[at : at + ROWS_PER_ARROW_BATCH])

    ns = {
        "walk_compiled": best(lambda: ad._walk_compiled(data, buf, starts, counts)),
        "walk_numpy_reference": best(lambda: ad.walk_records_numpy(data, buf, starts, counts), 3),
        "starts_python_loop": best(lambda: ad._record_starts_loop(data, starts, counts), 3),
        "starts_numpy_across_batches": best(lambda: ad._record_starts_across(buf, starts, counts), 1),
        "values_gather_compiled": best(lambda: in_arrow_batches(ad._binary_array)),
        "values_arrow_take": best(lambda: in_arrow_batches(ad._binary_array_take)),
    }
    return {
        "value_size": value_size,
        "records_per_batch": per_batch,
        "records": n,
        "ns_per_record": {k: round(v / n * 1e9, 1) for k, v in ns.items()},
    }


def main() -> None:
    if ad._kernels is None:
        raise SystemExit("spark_kafkalog._kernels is not built: run make install")
    load_before = os.getloadavg()
    cases = [case(100, 9000), case(1024, 1000)]
    for c in cases:
        print(c["value_size"], "B:", ", ".join(f"{k} {v} ns" for k, v in c["ns_per_record"].items()))
    result = {
        "benchmark": "read path: compiled record walk and byte gather vs the NumPy/Python reference",
        "machine": machine_info(("numpy", "pyarrow")),
        "load_average_1_5_15_min": {"before": [round(v, 2) for v in load_before], "after": list(os.getloadavg())},
        "cases": cases,
    }
    out = ROOT / "bench" / "results" / "decode_choice.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
