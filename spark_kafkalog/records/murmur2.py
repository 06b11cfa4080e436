"""Kafka's murmur2 hash and the default partitioner of keyed records (Java ``Utils.murmur2``).

Bit-exact with Java: seed 0x9747b28c, m 0x5bd1e995, r 24, little-endian 4-byte blocks, the tail
folded in from its last byte down, a signed 32-bit result. Stateless and thread-safe.
"""

from __future__ import annotations

import struct

__all__ = ["default_partition", "murmur2", "to_positive"]

_SEED = 0x9747B28C
_M = 0x5BD1E995
_R = 24
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Java ``Utils.murmur2(data)``: a signed 32-bit int."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    blocks = length // 4
    for k in struct.unpack_from(f"<{blocks}I", data) if blocks else ():
        k = (k * _M) & _MASK
        k ^= k >> _R
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = blocks * 4
    extra = length - tail
    if extra:
        if extra == 3:
            h ^= data[tail + 2] << 16
        if extra >= 2:
            h ^= data[tail + 1] << 8
        h ^= data[tail]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(n: int) -> int:
    """Java ``Utils.toPositive``: ``n & 0x7fffffff``."""
    return n & 0x7FFFFFFF


def default_partition(key: bytes, num_partitions: int) -> int:
    """Partition of a keyed record under Kafka's default partitioner."""
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, not {num_partitions!r}")
    return to_positive(murmur2(key)) % num_partitions
