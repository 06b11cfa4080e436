"""Builds OTLP ``MetricsData`` bytes by hand (protobuf wire format), for the tests of ``broker.telemetry``.

Field numbers as in opentelemetry-proto's ``metrics/v1/metrics.proto`` and ``common/v1/common.proto``; written
independently of the decoder under test (no shared code)."""

from __future__ import annotations

import struct


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def length(number: int, payload: bytes) -> bytes:
    return key(number, 2) + varint(len(payload)) + payload


def string(number: int, text: str) -> bytes:
    return length(number, text.encode("utf-8"))


def fixed64(number: int, value: int) -> bytes:
    return key(number, 1) + struct.pack("<Q", value & ((1 << 64) - 1))


def double(number: int, value: float) -> bytes:
    return key(number, 1) + struct.pack("<d", value)


def uint(number: int, value: int) -> bytes:
    return key(number, 0) + varint(value)


def attribute(k: str, v: str | int | bool | float) -> bytes:
    if isinstance(v, bool):
        any_value = uint(2, int(v))
    elif isinstance(v, int):
        any_value = uint(3, v)
    elif isinstance(v, float):
        any_value = double(4, v)
    else:
        any_value = string(1, v)
    return string(1, k) + length(2, any_value)


def point(value: float | int, attributes: dict | None = None, time_ns: int = 1_700_000_000_000_000_000) -> bytes:
    out = fixed64(2, time_ns - 1000) + fixed64(3, time_ns)
    out += fixed64(6, value) if isinstance(value, int) else double(4, value)
    for k, v in (attributes or {}).items():
        out += length(7, attribute(k, v))
    return out


def gauge(name: str, points: list[bytes], description: str = "", unit: str = "") -> bytes:
    data = b"".join(length(1, p) for p in points)
    return (
        string(1, name)
        + (string(2, description) if description else b"")
        + (string(3, unit) if unit else b"")
        + length(5, data)
    )


def sum_(name: str, points: list[bytes], *, temporality: int = 1, monotonic: bool = True) -> bytes:
    data = b"".join(length(1, p) for p in points) + uint(2, temporality) + uint(3, int(monotonic))
    return string(1, name) + length(7, data)


def histogram(name: str) -> bytes:
    return string(1, name) + length(9, length(1, fixed64(3, 1)))


def metrics_data(metrics: list[bytes], resource: dict | None = None, scope: str = "librdkafka") -> bytes:
    scope_metrics = length(1, string(1, scope)) + b"".join(length(2, m) for m in metrics)
    res = b"".join(length(1, attribute(k, v)) for k, v in (resource or {}).items())
    resource_metrics = length(1, res) + length(2, scope_metrics)
    return length(1, resource_metrics)
