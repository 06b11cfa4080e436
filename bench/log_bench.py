"""Log store throughput: appends against a plain sequential write, fetch-region serving, and recovery time.

Append: ``PartitionLog.append_as_leader`` of one v2 batch per call (16 KiB and 1 MiB batches of random,
incompressible 1000-byte values; offsets assigned, CRC-32C checked, indexes kept, no fsync; the first
append of the leader epoch, which writes the epoch checkpoint with fsync, is not timed) against
``os.write`` of the same bytes in the same chunks to a plain file, in the same run. Each figure is the
best of ``--rounds`` rounds; rounds alternate which side runs first, and one unmeasured round of each
warms the page cache first (the first writes into fresh page-cache memory are several times slower on
this machine, whichever side makes them). Target: the log at least 70% of the plain write. A third
figure, ``checked_write``, does only what any validating log must (parse the header, check the CRC-32C,
rewrite the offset, ``pwrite``) and shows how much of the gap is inherent.

Fetch: the broker's work per Fetch of up to 1 MiB from a log of 16 KiB batches up to its high watermark
(``read`` + ``os.sendfile`` of the region) into ``/dev/null``, and into a socketpair drained by a thread.

Recovery: a 1 GiB log (16 KiB batches; 256 MiB segments) reopened after a clean stop (indexes and
producer snapshot trusted) and after an unclean one (every batch re-read and CRC-checked from offset
0, indexes rebuilt). The page cache is warm (the log was just written): this measures the CPU side.

Writes ``bench/results/log.json`` and ``log.png``. Run: ``python -m bench.log_bench [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from broker.log import LogConfig, PartitionLog  # noqa: E402
from spark_kafkalog.records import RecordBatchBuilder  # noqa: E402
from spark_kafkalog.records.batch import HEADER_STRUCT  # noqa: E402
from spark_kafkalog.records.crc import crc32c  # noqa: E402

RESULTS = ROOT / "bench" / "results"
KIB = 1024
MIB = 1024 * KIB
T0 = 1_700_000_000_000
TARGET_RATIO = 0.70
_OFFSET = struct.Struct(">q")


def make_batch(target_size: int) -> bytearray:
    """One uncompressed v2 batch of random 1000-byte values, about ``target_size`` bytes."""
    builder = RecordBatchBuilder()
    count = max(1, (target_size - 61) // 1012)  # a record of a 1000-byte value takes up to 1012 bytes
    for i in range(count):
        builder.append(T0 + i, None, os.urandom(1000))
    return bytearray(builder.build())


def _open_log(directory: Path, config: LogConfig) -> PartitionLog:
    return PartitionLog.open(directory / "bench-0", config, recover=False)


def time_log_appends(directory: Path, data: bytearray, count: int) -> float:
    plog = _open_log(directory, LogConfig())
    append = plog.append_as_leader
    append(data, leader_epoch=0)  # the first append of an epoch writes leader-epoch-checkpoint (fsync): untimed
    start = time.perf_counter()
    for _ in range(count):
        append(data, leader_epoch=0)
    elapsed = time.perf_counter() - start
    assert plog.log_end_offset > 0
    plog.close(flush=False)
    shutil.rmtree(directory / "bench-0")
    return elapsed


def time_plain_writes(directory: Path, data: bytearray, count: int) -> float:
    path = directory / "plain.dat"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    write = os.write
    start = time.perf_counter()
    for _ in range(count):
        write(fd, data)
    elapsed = time.perf_counter() - start
    os.close(fd)
    path.unlink()
    return elapsed


def time_checked_writes(directory: Path, data: bytearray, count: int) -> float:
    """The least any validating log must do per batch: parse the header, check the CRC-32C, rewrite the
    offset, pwrite. Shows how much of the gap to a plain write is inherent rather than bookkeeping."""
    path = directory / "checked.dat"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    unpack, pack, pwrite = HEADER_STRUCT.unpack_from, _OFFSET.pack_into, os.pwrite
    view = memoryview(data)
    position = offset = 0
    start = time.perf_counter()
    for _ in range(count):
        header = unpack(data, 0)
        if crc32c(view[21:]) != header[4]:
            raise ValueError("CRC mismatch")
        pack(data, 0, offset)
        pwrite(fd, data, position)
        position += len(data)
        offset += header[12]
    elapsed = time.perf_counter() - start
    os.close(fd)
    path.unlink()
    return elapsed


def measure_append(directory: Path, batch_size: int, total: int, rounds: int) -> dict:
    data = make_batch(batch_size)
    count = max(1, total // len(data))
    time_plain_writes(directory, data, count)  # warm-up: recycle page-cache memory for both sides
    time_log_appends(directory, data, count)
    best = {"log": float("inf"), "plain": float("inf"), "checked": float("inf")}
    for round_ in range(rounds):
        order = [("log", time_log_appends), ("plain", time_plain_writes), ("checked", time_checked_writes)]
        for name, fn in order if round_ % 2 == 0 else reversed(order):
            best[name] = min(best[name], fn(directory, data, count))
    best_log, best_plain = best["log"], best["plain"]
    nbytes = count * len(data)

    def figures(seconds: float) -> dict:
        return {
            "seconds": round(seconds, 4),
            "mb_per_s": round(nbytes / seconds / 1e6, 1),
            "batches_per_s": round(count / seconds),
            "us_per_batch": round(seconds / count * 1e6, 2),
        }

    return {
        "batch_bytes": len(data),
        "batches": count,
        "bytes": nbytes,
        "log": figures(best_log),
        "plain_write": figures(best_plain),
        "ratio": round(best_plain / best_log, 3),
        "checked_write": figures(best["checked"]),
        "checked_ratio": round(best_plain / best["checked"], 3),
    }


def build_log(directory: Path, total: int, batch_size: int = 16 * KIB) -> tuple[PartitionLog, int]:
    """A log of ``total`` bytes of ``batch_size`` batches; returns it and its batch count."""
    data = make_batch(batch_size)
    plog = PartitionLog.open(directory / "recovery-0", LogConfig(segment_bytes=256 * MIB), recover=False)
    batches = max(1, total // len(data))
    for _ in range(batches):
        plog.append_as_leader(data, leader_epoch=0)
    plog.high_watermark = plog.log_end_offset
    return plog, batches


def fetch_offsets(plog: PartitionLog, max_bytes: int) -> list[int]:
    """Fetch offsets a consumer reading ``max_bytes`` at a time would send (computed before timing)."""
    offsets = []
    for segment in plog.segments:
        start = None
        for position, header in segment.iter_headers(0):
            if start is None or position + header.batch_length + 12 - start > max_bytes:
                offsets.append(header.base_offset)
                start = position
    return offsets


def _serve(plog: PartitionLog, offsets: list[int], max_bytes: int, out_fd: int) -> tuple[float, int]:
    hw = plog.high_watermark
    sent_total = 0
    start = time.perf_counter()
    for offset in offsets:
        data = plog.read(offset, max_bytes, max_offset=hw)
        region = data.records
        position, remaining, in_fd = region.position, len(region), region.fileno()
        while remaining:
            sent = os.sendfile(out_fd, in_fd, position, remaining)
            position += sent
            remaining -= sent
            sent_total += sent
        region.release()
    return time.perf_counter() - start, sent_total


def measure_fetch(plog: PartitionLog, rounds: int, max_bytes: int = MIB) -> dict:
    offsets = fetch_offsets(plog, max_bytes)
    out = {"max_bytes": max_bytes, "fetches": len(offsets)}
    null_fd = os.open(os.devnull, os.O_WRONLY)
    try:
        best = min(_serve(plog, offsets, max_bytes, null_fd) for _ in range(rounds))
    finally:
        os.close(null_fd)
    out["dev_null"] = {"fetches_per_s": round(len(offsets) / best[0]), "mb_per_s": round(best[1] / best[0] / 1e6, 1)}

    left, right = socket.socketpair()
    left.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * MIB)
    total = [0]

    def drain() -> None:
        buf = bytearray(4 * MIB)
        while True:
            n = right.recv_into(buf)
            if not n:
                return
            total[0] += n

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        elapsed, sent = _serve(plog, offsets, max_bytes, left.fileno())
    finally:
        left.close()
        reader.join()
        right.close()
    assert total[0] == sent
    out["socketpair"] = {"fetches_per_s": round(len(offsets) / elapsed), "mb_per_s": round(sent / elapsed / 1e6, 1)}
    return out


def measure_recovery(plog: PartitionLog, batches: int) -> dict:
    directory, leo, size = plog.dir, plog.log_end_offset, plog.size_in_bytes
    plog.close()  # clean: flushed, indexes written, producer snapshot at the log end
    start = time.perf_counter()
    reopened = PartitionLog.open(directory, LogConfig(segment_bytes=256 * MIB), recover=False)
    clean = time.perf_counter() - start
    assert reopened.log_end_offset == leo
    reopened.close(flush=False)
    start = time.perf_counter()
    reopened = PartitionLog.open(directory, LogConfig(segment_bytes=256 * MIB), recover=True, recovery_point=0)
    unclean = time.perf_counter() - start
    assert reopened.log_end_offset == leo
    reopened.close(flush=False)
    return {
        "log_bytes": size,
        "segments": len(reopened.segments),
        "batches": batches,
        "clean_s": round(clean, 3),
        "unclean_s": round(unclean, 3),
        "unclean_mb_per_s": round(size / unclean / 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per append figure (default 3; quick 1)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for log.json and log.png")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the logs (default: a temp dir)")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    append_total = 32 * MIB if args.quick else 512 * MIB
    recovery_total = 64 * MIB if args.quick else 1024 * MIB
    workdir = Path(tempfile.mkdtemp(prefix="log-bench-", dir=args.dir))
    started = time.perf_counter()
    try:
        cases = []
        for size in (16 * KIB, MIB):
            case = measure_append(workdir, size, append_total, rounds)
            cases.append(case)
            print(
                f"append {case['batch_bytes']:>8} B batches: log {case['log']['mb_per_s']:>7} MB/s "
                f"{case['log']['batches_per_s']:>7}/s | plain {case['plain_write']['mb_per_s']:>7} MB/s | "
                f"ratio {case['ratio']:.2f} (CRC-checked pwrite alone: {case['checked_ratio']:.2f})",
                flush=True,
            )
        plog, batches = build_log(workdir, recovery_total)
        fetch = measure_fetch(plog, rounds)
        print(
            f"fetch {fetch['max_bytes']} B regions: /dev/null {fetch['dev_null']['mb_per_s']} MB/s "
            f"({fetch['dev_null']['fetches_per_s']}/s), socketpair {fetch['socketpair']['mb_per_s']} MB/s",
            flush=True,
        )
        recovery = measure_recovery(plog, batches)
        print(
            f"recovery of {recovery['log_bytes'] / MIB:.0f} MiB: clean {recovery['clean_s']} s, "
            f"unclean {recovery['unclean_s']} s ({recovery['unclean_mb_per_s']} MB/s)",
            flush=True,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result = {
        "benchmark": "log store: append vs plain write, fetch-region serving, recovery",
        "method": {
            "append": "one v2 batch per append_as_leader call, no fsync, vs os.write of the same bytes; best of "
            f"{rounds} alternating rounds after one warm-up round each; {append_total // MIB} MiB per round",
            "fetch": "read(offset, 1 MiB, max_offset=high watermark) + os.sendfile of the region; offsets computed "
            "beforehand; 16 KiB batches",
            "recovery": f"{recovery_total // MIB} MiB log of 16 KiB batches, 256 MiB segments, warm page cache; "
            "clean = recover=False, unclean = recover=True from offset 0",
            "quick": args.quick,
        },
        "machine": machine_info(("crc32c",)),
        "append": cases,
        "append_target": {
            "min_ratio": TARGET_RATIO,
            "cases_below": [c["batch_bytes"] for c in cases if c["ratio"] < TARGET_RATIO],
        },
        "fetch": fetch,
        "recovery": recovery,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "log.json").write_text(json.dumps(result, indent=2) + "\n")
    plots.save("log", result, args.out / "log.png")
    print(f"wrote {args.out / 'log.json'} and log.png in {result['elapsed_s']} s")


if __name__ == "__main__":
    main()
