"""Why the write path's hot loops are compiled: the records section and key partitions by the C kernel, a
NumPy-vectorised encoder and the pure-Python reference (docs/dependencies.md, "Compiled kernels").

The NumPy encoder (keys and values, no headers, timestamp deltas 0) exists only here, for this measurement:
varint sizes and bytes as arrays, key and value bytes gathered by offsets. 100,000 keyed records per value
size, best of 3. Writes ``bench/results/encode_choice.json``. Run: ``python bench/encode_choice.py``.
"""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from bench.machine import machine_info  # noqa: E402
from bench.write_bench import arrow_rows  # noqa: E402
from spark_kafkalog.records.columnar import (  # noqa: E402
    BinaryColumn,
    _kernels,
    encode_records,
    encode_records_reference,
    key_partitions,
    key_partitions_reference,
)


def vsize(z):
    s = np.ones(len(z), np.int64)
    for j in range(1, 10):
        s += z >= (1 << (7 * j))
    return s


def zz(v):
    v = v.astype(np.int64)
    return ((v << 1) ^ (v >> 63)).astype(np.uint64)


def put_varints(out, pos, v):
    z = zz(v)
    s = vsize(z)
    for j in range(int(s.max())):
        m = s > j
        b = ((z[m] >> np.uint64(7 * j)) & np.uint64(0x7F)).astype(np.uint8)
        b |= np.where(s[m] - 1 > j, 0x80, 0).astype(np.uint8)
        out[pos[m] + j] = b
    return s


def gather(out, dst_start, col, rows, lengths):
    total = int(lengths.sum())
    if not total:
        return
    src_start = col.offsets[rows]
    shift = np.repeat(dst_start - src_start, lengths)
    src = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths) + np.repeat(src_start, lengths)
    data = np.frombuffer(col.data, np.uint8)
    out[src + shift] = data[src]


def encode_numpy(rows, values, keys):
    n = len(rows)
    vl = np.diff(values.offsets)[rows]
    kl = np.diff(keys.offsets)[rows]
    od = np.arange(n)
    s_od, s_kl, s_vl = vsize(zz(od)), vsize(zz(kl)), vsize(zz(vl))
    body = 1 + 1 + s_od + s_kl + kl + s_vl + vl + 1
    s_body = vsize(zz(body))
    total = s_body + body
    start = np.cumsum(total) - total
    out = np.zeros(int(total.sum()), np.uint8)
    put_varints(out, start, body)
    p = start + s_body + 2  # attributes 0, ts delta 0
    put_varints(out, p, od)
    p = p + s_od
    put_varints(out, p, kl)
    p = p + s_kl
    gather(out, p, keys, rows, kl)
    p = p + kl
    put_varints(out, p, vl)
    p = p + s_vl
    gather(out, p, values, rows, vl)
    return out.tobytes()


def best_rate(run, count: int) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return round(count / best / 1e6, 2)


def main() -> None:
    if _kernels is None:
        sys.exit("spark_kafkalog._kernels is not built (make install)")
    n = 100_000
    rows = np.arange(n, dtype=np.int64)
    out = {"records": n, "unit": "M records/s", "records_section": {}, "load_average": list(os.getloadavg())}
    for size in (100, 1024):
        k, v = arrow_rows(n, size)
        kc, vc = BinaryColumn.of(k), BinaryColumn.of(v)
        assert encode_numpy(rows, vc, kc) == encode_records(rows, None, vc, kc, None)
        out["records_section"][f"{size} B"] = {
            "c_kernel": best_rate(lambda: _kernels.encode_records(rows, None, vc.buffers(), kc.buffers(), None), n),
            "numpy": best_rate(lambda: encode_numpy(rows, vc, kc), n),
            "python": best_rate(lambda: encode_records_reference(rows, None, vc, kc, None), n),
        }
    out["key_partitions"] = {
        "c_kernel": best_rate(lambda: key_partitions(kc, 8), n),
        "python": best_rate(lambda: key_partitions_reference(kc, 8), n),
    }
    out["machine"] = machine_info(["numpy", "pyarrow"])
    print(json.dumps(out, indent=2))
    (ROOT / "bench" / "results" / "encode_choice.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
