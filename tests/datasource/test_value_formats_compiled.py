"""``FormatDecoder``'s compiled Avro path (``AvroCodec.decode_arrow``): the same batches as the per-record
path, and the per-record path for what the kernel leaves (several ids, bad frames, bad payloads)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from spark_kafkalog.datasource.formats import PERMISSIVE
from spark_kafkalog.datasource.value_formats import FormatDecoder, RecordDecodeError, resolve_read_formats
from spark_kafkalog.schemas.avro import AvroCodec, columnar
from spark_kafkalog.schemas.wire_format import frame
from tests.datasource.test_value_formats_codec import (  # noqa: F401  # registry: the fake registry fixture
    V1,
    V2,
    avro_bytes,
    kafka_batch,
    read_formats,
    registry,
)

pytestmark = pytest.mark.skipif(
    not columnar.AVAILABLE, reason="spark_kafkalog._kernels is not built (no C compiler at install)"
)

EVENT = {
    "type": "record",
    "name": "Event",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user", "type": "string"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CLICK", "VIEW"]}},
        {
            "name": "where",
            "type": ["null", {"type": "record", "name": "Where", "fields": [{"name": "x", "type": "int"}]}],
        },
    ],
}


def event(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "user": f"u{i}",
        "note": None if i % 2 else "n",
        "at": 1_700_000_000_000 + i,
        "kind": ("CLICK", "VIEW")[i % 2],
        "where": None if i % 3 else {"x": i},
    }


def both_paths(monkeypatch, formats, batch, calls: list[str]):
    """(compiled result, per-record result) of decoding ``batch``; ``calls`` records compiled decodes."""
    original = AvroCodec.decode_arrow

    def counted(self, payloads, writer, skip=0):
        result = original(self, payloads, writer, skip)
        calls.append("compiled" if result is not None else "fallback")
        return result

    monkeypatch.setattr(AvroCodec, "decode_arrow", counted)
    fast = FormatDecoder(formats).decode(batch)
    calls.append("slow path:")
    with monkeypatch.context() as m:
        m.setattr(columnar, "_kernels", None)
        slow = FormatDecoder(formats).decode(batch)
    return fast, slow


@pytest.mark.parametrize("offset", [0, 1])
def test_one_writer_decodes_in_one_step_into_the_same_batch(registry, monkeypatch, offset):  # noqa: F811
    schema_id = registry.add("t-value", json.dumps(EVENT))
    values = [frame(schema_id, avro_bytes(EVENT, event(i))) for i in range(20)]
    values[3] = None  # a tombstone
    calls: list[str] = []
    formats = resolve_read_formats(read_formats(mode=PERMISSIVE))
    fast, slow = both_paths(monkeypatch, formats, kafka_batch(values).slice(offset), calls)
    assert calls[: calls.index("slow path:")] == ["compiled"]
    assert fast.equals(slow)
    assert fast.column("value")[3 - offset].as_py() is None
    assert fast.column("_corrupt_record").null_count == len(fast)


@pytest.mark.parametrize(
    "damage",
    [
        lambda v1, v2: [frame(v1, avro_bytes(V1, {"id": 1})), frame(v2, avro_bytes(V2, {"id": 2, "note": "x"}))],
        lambda v1, v2: [frame(v1, avro_bytes(V1, {"id": 1})), b"\x01\x00\x00\x00\x01x"],
        lambda v1, v2: [frame(v1, avro_bytes(V1, {"id": 1})), frame(v1, b"\x80")],
        lambda v1, v2: [frame(v1, avro_bytes(V1, {"id": 1})), frame(v1, b"\x02\x00")],
        lambda v1, v2: [frame(v1, avro_bytes(V1, {"id": 1})), b"\x00\x00"],
    ],
    ids=["two writers", "bad magic byte", "truncated payload", "trailing byte", "short frame"],
)
def test_what_the_kernel_leaves_takes_the_per_record_path(registry, monkeypatch, damage):  # noqa: F811
    v1 = registry.add("t-value", json.dumps(V1))
    v2 = registry.add("t-value", json.dumps(V2))
    batch = kafka_batch(damage(v1, v2))
    formats = resolve_read_formats(read_formats(mode=PERMISSIVE))
    calls: list[str] = []
    fast, slow = both_paths(monkeypatch, formats, batch, calls)
    assert "compiled" not in calls
    assert fast.equals(slow)
    with pytest.raises(RecordDecodeError) if slow.column("_corrupt_record").null_count < len(slow) else _nothing():
        FormatDecoder(resolve_read_formats(read_formats())).decode(batch)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
