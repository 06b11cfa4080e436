"""Reads what clients push in PushTelemetry: the OpenTelemetry ``MetricsData`` protobuf (OTLP metrics v1),
decompressed with the record codecs, into plain values (pure; no I/O).

Protobuf wire format (``fields``): each field is a varint key ``field_number << 3 | wire_type`` then its value:
wire type 0 a varint, 1 eight little-endian bytes, 2 a varint length and that many bytes (strings, bytes,
embedded messages, packed repeated fields), 5 four little-endian bytes; 3 and 4 (groups) are refused. Unknown
fields are skipped, as protobuf readers do. The OTLP messages read (field numbers from
``opentelemetry/proto/metrics/v1/metrics.proto`` and ``common/v1/common.proto``)::

    MetricsData      1 resource_metrics: ResourceMetrics (repeated)
    ResourceMetrics  1 resource: Resource            2 scope_metrics: ScopeMetrics (repeated)
    Resource         1 attributes: KeyValue (repeated)
    ScopeMetrics     1 scope: InstrumentationScope   2 metrics: Metric (repeated)
    Metric           1 name  2 description  3 unit   5 gauge: Gauge  7 sum: Sum
                     (9 histogram, 10 exponential_histogram, 11 summary: counted, not read)
    Gauge            1 data_points: NumberDataPoint (repeated)
    Sum              1 data_points (repeated)  2 aggregation_temporality (1 delta, 2 cumulative)  3 is_monotonic
    NumberDataPoint  7 attributes: KeyValue (repeated)  2 start_time_unix_nano (fixed64)
                     3 time_unix_nano (fixed64)  4 as_double (double)  6 as_int (sfixed64)
    KeyValue         1 key  2 value: AnyValue
    AnyValue         1 string  2 bool  3 int64  4 double  (5 array, 6 kvlist, 7 bytes: rendered as text)

Any truncation, over-long varint, length past the end, group wire type or wrong wire type for a known field
raises ``OtlpDecodeError`` (PushTelemetry answers INVALID_RECORD). Decompression is bounded by ``max_size``
(beyond it: ``PayloadTooLargeError``, TELEMETRY_TOO_LARGE). Thread-safe: pure functions.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from spark_kafkalog.records.compression import decompress
from spark_kafkalog.records.errors import CorruptRecordError, DecompressedSizeLimitError

__all__ = [
    "DELTA",
    "CUMULATIVE",
    "OtlpDecodeError",
    "PayloadTooLargeError",
    "NumberPoint",
    "OtlpMetric",
    "decode_metrics_data",
    "decompress_payload",
    "fields",
]

DELTA, CUMULATIVE = 1, 2
"""OTLP ``AggregationTemporality`` values."""
VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_DOUBLE = struct.Struct("<d")
_INT64 = struct.Struct("<q")
_UINT64 = struct.Struct("<Q")
_UINT32 = struct.Struct("<I")


class OtlpDecodeError(ValueError):
    """The payload is not a well-formed OTLP ``MetricsData``; the message says where."""


class PayloadTooLargeError(ValueError):
    """The decompressed payload is larger than the broker accepts."""


@dataclass(frozen=True)
class NumberPoint:
    """One ``NumberDataPoint``; ``attributes`` sorted by key, values as text."""

    attributes: tuple[tuple[str, str], ...]
    start_time_unix_nano: int
    time_unix_nano: int
    value: float


@dataclass(frozen=True)
class OtlpMetric:
    """One ``Metric`` with the attributes of the resource that carried it."""

    name: str
    description: str
    unit: str
    kind: str
    """``gauge``, ``sum``, or for the kinds not read ``histogram``, ``exponential_histogram``, ``summary``
    (no points) or ``empty`` (no data field)."""
    temporality: int
    """``DELTA``/``CUMULATIVE`` for a sum, else 0."""
    monotonic: bool
    points: tuple[NumberPoint, ...]
    resource: tuple[tuple[str, str], ...]


def decompress_payload(compression_type: int, payload: bytes, max_size: int) -> bytes:
    """``payload`` decompressed with the record codec ``compression_type`` (0 none, 1 gzip, 2 snappy, 3 lz4,
    4 zstd), at most ``max_size`` bytes. ``PayloadTooLargeError`` beyond that, ``OtlpDecodeError`` for corrupt
    input or an unknown codec."""
    if compression_type == 0:
        if len(payload) > max_size:
            raise PayloadTooLargeError(f"payload of {len(payload)} bytes is larger than {max_size}")
        return bytes(payload)
    try:
        return decompress(compression_type, payload, max_size=max_size)
    except DecompressedSizeLimitError:
        raise PayloadTooLargeError(f"payload decompresses to more than {max_size} bytes") from None
    except CorruptRecordError as e:
        raise OtlpDecodeError(f"payload does not decompress with codec {compression_type}: {e}") from None


# -- wire format -------------------------------------------------------------------------------------
def _varint(buf: memoryview, pos: int, what: str) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise OtlpDecodeError(f"{what}: varint truncated at byte {pos}")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise OtlpDecodeError(f"{what}: varint longer than 10 bytes at byte {pos}")


def fields(data: bytes | memoryview, what: str = "message") -> Iterator[tuple[int, int, int | memoryview]]:
    """``(field number, wire type, value)`` of each field of one message, in order: the value is an int for
    wire types 0, 1 and 5 (unsigned) and a ``memoryview`` of the bytes for wire type 2."""
    buf = memoryview(data)
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos, what)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise OtlpDecodeError(f"{what}: field number 0 at byte {pos}")
        if wire == VARINT:
            value, pos = _varint(buf, pos, what)
            yield number, wire, value
        elif wire == FIXED64:
            if pos + 8 > len(buf):
                raise OtlpDecodeError(f"{what}: fixed64 field {number} truncated")
            yield number, wire, _UINT64.unpack_from(buf, pos)[0]
            pos += 8
        elif wire == FIXED32:
            if pos + 4 > len(buf):
                raise OtlpDecodeError(f"{what}: fixed32 field {number} truncated")
            yield number, wire, _UINT32.unpack_from(buf, pos)[0]
            pos += 4
        elif wire == LENGTH:
            size, pos = _varint(buf, pos, what)
            if size > len(buf) - pos:
                raise OtlpDecodeError(f"{what}: field {number} claims {size} bytes, {len(buf) - pos} left")
            yield number, wire, buf[pos : pos + size]
            pos += size
        else:
            raise OtlpDecodeError(f"{what}: field {number} has unsupported wire type {wire}")


def _bytes(value: int | memoryview, wire: int, what: str) -> memoryview:
    if wire != LENGTH or not isinstance(value, memoryview):
        raise OtlpDecodeError(f"{what}: expected a length-delimited field, got wire type {wire}")
    return value


def _int(value: int | memoryview, wire: int, expected: int, what: str) -> int:
    if wire != expected or isinstance(value, memoryview):
        raise OtlpDecodeError(f"{what}: expected wire type {expected}, got {wire}")
    return value


def _text(value: int | memoryview, wire: int, what: str) -> str:
    try:
        return bytes(_bytes(value, wire, what)).decode("utf-8")
    except UnicodeDecodeError:
        raise OtlpDecodeError(f"{what}: not UTF-8") from None


# -- OTLP messages -----------------------------------------------------------------------------------
def _any_value(data: memoryview) -> str:
    out = ""
    for number, wire, value in fields(data, "AnyValue"):
        if number == 1:
            out = _text(value, wire, "AnyValue.string_value")
        elif number == 2:
            out = "true" if _int(value, wire, VARINT, "AnyValue.bool_value") else "false"
        elif number == 3:
            v = _int(value, wire, VARINT, "AnyValue.int_value")
            out = str(v - (1 << 64) if v >= 1 << 63 else v)
        elif number == 4:
            out = repr(_DOUBLE.unpack(_UINT64.pack(_int(value, wire, FIXED64, "AnyValue.double_value")))[0])
        elif number in (5, 6, 7):
            out = bytes(_bytes(value, wire, "AnyValue")).hex()
    return out


def _key_value(data: memoryview) -> tuple[str, str]:
    key, text = "", ""
    for number, wire, value in fields(data, "KeyValue"):
        if number == 1:
            key = _text(value, wire, "KeyValue.key")
        elif number == 2:
            text = _any_value(_bytes(value, wire, "KeyValue.value"))
    return key, text


def _point(data: memoryview) -> NumberPoint:
    attributes: dict[str, str] = {}
    start = time = 0
    number_value = 0.0
    for number, wire, value in fields(data, "NumberDataPoint"):
        if number == 7:
            k, v = _key_value(_bytes(value, wire, "NumberDataPoint.attributes"))
            attributes[k] = v
        elif number == 2:
            start = _int(value, wire, FIXED64, "NumberDataPoint.start_time_unix_nano")
        elif number == 3:
            time = _int(value, wire, FIXED64, "NumberDataPoint.time_unix_nano")
        elif number == 4:
            raw = _int(value, wire, FIXED64, "NumberDataPoint.as_double")
            number_value = _DOUBLE.unpack(_UINT64.pack(raw))[0]
        elif number == 6:
            raw = _int(value, wire, FIXED64, "NumberDataPoint.as_int")
            number_value = float(_INT64.unpack(_UINT64.pack(raw))[0])
    return NumberPoint(tuple(sorted(attributes.items())), start, time, number_value)


def _number_data(data: memoryview, what: str) -> tuple[list[NumberPoint], int, bool]:
    points, temporality, monotonic = [], 0, False
    for number, wire, value in fields(data, what):
        if number == 1:
            points.append(_point(_bytes(value, wire, f"{what}.data_points")))
        elif number == 2 and what == "Sum":
            temporality = _int(value, wire, VARINT, "Sum.aggregation_temporality")
        elif number == 3 and what == "Sum":
            monotonic = bool(_int(value, wire, VARINT, "Sum.is_monotonic"))
    return points, temporality, monotonic


_OTHER_KINDS = {9: "histogram", 10: "exponential_histogram", 11: "summary"}


def _metric(data: memoryview, resource: tuple[tuple[str, str], ...]) -> OtlpMetric:
    name = description = unit = ""
    kind, temporality, monotonic = "empty", 0, False
    points: list[NumberPoint] = []
    for number, wire, value in fields(data, "Metric"):
        if number == 1:
            name = _text(value, wire, "Metric.name")
        elif number == 2:
            description = _text(value, wire, "Metric.description")
        elif number == 3:
            unit = _text(value, wire, "Metric.unit")
        elif number == 5:
            kind = "gauge"
            points, _, _ = _number_data(_bytes(value, wire, "Metric.gauge"), "Gauge")
        elif number == 7:
            kind = "sum"
            points, temporality, monotonic = _number_data(_bytes(value, wire, "Metric.sum"), "Sum")
        elif number in _OTHER_KINDS:
            _bytes(value, wire, f"Metric.{_OTHER_KINDS[number]}")
            kind = _OTHER_KINDS[number]
    return OtlpMetric(name, description, unit, kind, temporality, monotonic, tuple(points), resource)


def decode_metrics_data(data: bytes | memoryview) -> list[OtlpMetric]:
    """Every metric of a ``MetricsData`` message, in order, each with its resource's attributes."""
    out: list[OtlpMetric] = []
    for number, wire, value in fields(data, "MetricsData"):
        if number != 1:
            continue
        resource: tuple[tuple[str, str], ...] = ()
        scopes = []
        for n, w, v in fields(_bytes(value, wire, "MetricsData.resource_metrics"), "ResourceMetrics"):
            if n == 1:
                attributes = dict(
                    _key_value(_bytes(a, aw, "Resource.attributes"))
                    for an, aw, a in fields(_bytes(v, w, "ResourceMetrics.resource"), "Resource")
                    if an == 1
                )
                resource = tuple(sorted(attributes.items()))
            elif n == 2:
                scopes.append(_bytes(v, w, "ResourceMetrics.scope_metrics"))
        for scope in scopes:
            for n, w, v in fields(scope, "ScopeMetrics"):
                if n == 2:
                    out.append(_metric(_bytes(v, w, "ScopeMetrics.metrics"), resource))
    return out
