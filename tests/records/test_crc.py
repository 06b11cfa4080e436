"""Checksums: CRC-32C and CRC-32 check values, and xxh32 against the LZ4 C library's own hashes."""

from __future__ import annotations

import random

import lz4.frame
import pytest

from spark_kafkalog.records import crc32, crc32c
from spark_kafkalog.records.xxh32 import xxh32


def test_crc32c_matches_the_castagnoli_check_value():
    assert crc32c(b"123456789") == 0xE3069283


def test_crc32c_continues_from_a_previous_value():
    assert crc32c(b"56789", crc32c(b"1234")) == crc32c(b"123456789")


def test_crc32_matches_the_ieee_check_value():
    assert crc32(b"123456789") == 0xCBF43926


def test_checksums_accept_memoryview_slices():
    data = b"xx123456789yy"
    assert crc32c(memoryview(data)[2:11]) == 0xE3069283
    assert crc32(memoryview(data)[2:11]) == 0xCBF43926


def test_xxh32_of_empty_input_is_the_published_value():
    assert xxh32(b"") == 0x02CC5D05


@pytest.mark.parametrize("size", [0, 1, 3, 4, 7, 15, 16, 17, 31, 32, 33, 100, 1000])
def test_xxh32_matches_the_lz4_frame_content_checksum(size):
    # The LZ4 frame format stores xxh32(content) as its content checksum (little-endian, last 4 bytes).
    data = random.Random(size).randbytes(size)
    frame = lz4.frame.compress(data, content_checksum=True, store_size=False)
    assert xxh32(data) == int.from_bytes(frame[-4:], "little")


def test_xxh32_matches_the_xxhash_package():
    xxhash = pytest.importorskip("xxhash")
    for data in (b"", b"a", b"kafka lz4 frame descriptor", bytes(range(256)) * 3):
        assert xxh32(data) == xxhash.xxh32(data).intdigest()
