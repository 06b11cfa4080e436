"""Measure the candidate C-backed helpers (CRC-32C and compression codecs) on this machine.

Writes bench/results/dependency_choice.json; docs/dependencies.md records the choice these figures support.
Candidates that are not installed are reported as missing rather than failing the run
(install them with `pip install crcmod google-crc32c python-snappy` to compare all of them).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path


def _rate(fn, data: bytes, min_seconds: float = 0.3) -> float:
    """Return the throughput of fn(data) in GB/s, repeating until min_seconds have passed."""
    n = 0
    start = time.perf_counter()
    while True:
        fn(data)
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return n * len(data) / elapsed / 1e9


def crc32c_candidates() -> dict:
    out = {}
    try:
        import crc32c

        out["crc32c"] = lambda b: crc32c.crc32c(b)
    except ImportError:
        pass
    try:
        import google_crc32c

        out["google-crc32c"] = lambda b: google_crc32c.value(b)
    except ImportError:
        pass
    try:
        import crcmod.predefined

        f = crcmod.predefined.mkCrcFun("crc-32c")
        out["crcmod"] = f
    except ImportError:
        pass
    return out


def codec_candidates() -> dict:
    out = {}
    import cramjam

    out["snappy/cramjam(raw)"] = (cramjam.snappy.compress_raw, lambda c: bytes(cramjam.snappy.decompress_raw(c)))
    try:
        import snappy

        out["snappy/python-snappy(raw)"] = (snappy.compress, snappy.decompress)
    except ImportError:
        pass
    import lz4.frame

    out["lz4/lz4(frame)"] = (lz4.frame.compress, lz4.frame.decompress)
    out["lz4/cramjam(frame)"] = (cramjam.lz4.compress, lambda c: bytes(cramjam.lz4.decompress(c)))
    # Kafka's framing (64 KiB independent blocks): lz4.frame's own, and ours (records.kafka_lz4: lz4.block
    # per block, framed by us); both read by lz4.frame.
    out["lz4/lz4(frame, 64 KiB independent)"] = (
        lambda b: lz4.frame.compress(
            b, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False, store_size=False, content_checksum=False
        ),
        lz4.frame.decompress,
    )
    from spark_kafkalog.records.kafka_lz4 import lz4_compress

    out["lz4/lz4(block per 64 KiB, kafka_lz4)"] = (lz4_compress, lz4.frame.decompress)
    import zstandard

    zc, zd = zstandard.ZstdCompressor(level=3), zstandard.ZstdDecompressor()
    out["zstd/zstandard"] = (zc.compress, zd.decompress)
    zc1 = zstandard.ZstdCompressor(level=1)
    out["zstd/zstandard level 1"] = (zc1.compress, zd.decompress)
    out["zstd/cramjam"] = (lambda b: cramjam.zstd.compress(b, 3), lambda c: bytes(cramjam.zstd.decompress(c)))
    import gzip
    import zlib

    out["gzip/zlib"] = (lambda b: gzip.compress(b, 6), gzip.decompress)
    out["gzip/cramjam"] = (lambda b: cramjam.gzip.compress(b, 6), lambda c: bytes(cramjam.gzip.decompress(c)))
    from isal import igzip

    out["gzip/isal"] = (lambda b: igzip.compress(b, 3), igzip.decompress)  # ISA-L's levels are 0-3
    out["gzip/isal level 1"] = (lambda b: igzip.compress(b, 1), igzip.decompress)
    try:
        from zlib_ng import gzip_ng

        out["gzip/zlib-ng"] = (lambda b: gzip_ng.compress(b, 6), gzip_ng.decompress)
    except ImportError:
        pass
    try:
        import deflate

        out["gzip/libdeflate"] = (lambda b: deflate.gzip_compress(b, 6), deflate.gzip_decompress)
    except ImportError:
        pass
    del zlib
    return out


def sample_data(size: int) -> bytes:
    """Record-like data: JSON-ish lines with repeated keys and random numbers (compressible, not trivial)."""
    import random

    rnd = random.Random(7)
    parts = []
    total = 0
    while total < size:
        line = b'{"user":%d,"event":"click","page":"/p/%d","ms":%d}\n' % (
            rnd.randrange(10**6),
            rnd.randrange(1000),
            rnd.randrange(10**9),
        )
        parts.append(line)
        total += len(line)
    return b"".join(parts)[:size]


def main() -> None:
    data_crc = os.urandom(1 << 20)
    crc = {name: round(_rate(fn, data_crc), 3) for name, fn in crc32c_candidates().items()}
    data = sample_data(1 << 20)
    codecs = {}
    for name, (comp, decomp) in codec_candidates().items():
        c = comp(data)
        assert bytes(decomp(bytes(c))) == data, name
        codecs[name] = {
            "compress_GBps": round(_rate(comp, data), 3),
            "decompress_GBps": round(_rate(decomp, bytes(c)), 3),
            "ratio": round(len(data) / len(c), 2),
        }
    result = {
        "machine": {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count()},
        "crc32c_GBps_1MiB": crc,
        "codecs_1MiB": codecs,
    }
    out = Path(__file__).parent / "results" / "dependency_choice.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
