"""The OTLP MetricsData reader over hand-built protobuf bytes, with each compression a client may use."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.telemetry.otlp import (
    CUMULATIVE,
    DELTA,
    OtlpDecodeError,
    PayloadTooLargeError,
    decode_metrics_data,
    decompress_payload,
)
from spark_kafkalog.records.compression import compress

from . import otlp_builder as b

PAYLOAD = b.metrics_data(
    [
        b.gauge(
            "org.apache.kafka.producer.record.queue.time.avg",
            [b.point(1.5, {"node.id": "1"}), b.point(2.25, {"node.id": "2"})],
            description="average queue time",
            unit="ms",
        ),
        b.sum_("org.apache.kafka.producer.record.send.total", [b.point(42, {"topic": "orders", "partition": 3})]),
        b.sum_("org.apache.kafka.client.connection.count", [b.point(-1)], temporality=CUMULATIVE, monotonic=False),
        b.histogram("org.apache.kafka.producer.latency"),
    ],
    resource={"client_rack": "r1", "transactional": False},
)


def test_gauges_and_sums_decode_with_their_points_attributes_and_resource():
    metrics = decode_metrics_data(PAYLOAD)
    assert [m.name for m in metrics] == [
        "org.apache.kafka.producer.record.queue.time.avg",
        "org.apache.kafka.producer.record.send.total",
        "org.apache.kafka.client.connection.count",
        "org.apache.kafka.producer.latency",
    ]
    gauge, total, conns, hist = metrics
    assert (gauge.kind, gauge.description, gauge.unit) == ("gauge", "average queue time", "ms")
    assert [(p.attributes, p.value) for p in gauge.points] == [((("node.id", "1"),), 1.5), ((("node.id", "2"),), 2.25)]
    assert gauge.points[0].time_unix_nano == 1_700_000_000_000_000_000
    assert gauge.points[0].start_time_unix_nano == 1_700_000_000_000_000_000 - 1000
    assert (total.kind, total.temporality, total.monotonic) == ("sum", DELTA, True)
    assert total.points[0].attributes == (("partition", "3"), ("topic", "orders"))
    assert total.points[0].value == 42.0
    assert (conns.temporality, conns.monotonic, conns.points[0].value) == (CUMULATIVE, False, -1.0)
    assert (hist.kind, hist.points) == ("histogram", ())
    assert gauge.resource == (("client_rack", "r1"), ("transactional", "false"))


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4], ids=["none", "gzip", "snappy", "lz4", "zstd"])
def test_each_compression_a_client_may_use_decodes(codec):
    data = decompress_payload(codec, compress(codec, PAYLOAD), max_size=1 << 20)
    assert data == PAYLOAD
    assert len(decode_metrics_data(data)) == 4


@pytest.mark.parametrize("codec", [0, 4])
def test_a_payload_larger_than_the_limit_once_decompressed_is_too_large(codec):
    big = b.metrics_data([b.gauge("x" * 5000, [b.point(1.0)])])
    with pytest.raises(PayloadTooLargeError):
        decompress_payload(codec, compress(codec, big), max_size=4096)


def test_bytes_that_do_not_decompress_are_a_decode_error():
    with pytest.raises(OtlpDecodeError, match="does not decompress"):
        decompress_payload(4, b"not zstd at all", max_size=1 << 20)


def test_unknown_fields_are_skipped():
    extra = b.uint(99, 7) + b.fixed64(98, 1) + b.key(97, 5) + b"\0\0\0\0" + b.string(96, "x")
    payload = b.length(1, b.length(2, b.length(2, b.string(1, "m") + extra + b.length(5, b.length(1, b.point(3.0))))))
    [metric] = decode_metrics_data(payload)
    assert (metric.name, metric.points[0].value) == ("m", 3.0)


@pytest.mark.parametrize(
    "payload, where",
    [
        (PAYLOAD[:-1], "claims"),  # truncated inside the last message
        (b"\x0a", "varint truncated"),  # a key with no length
        (b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "longer than 10 bytes"),
        (b"\x0b", "wire type 3"),  # a group
        (b"\x00", "field number 0"),
        (b.length(1, b.length(2, b.length(2, b.uint(1, 5)))), "Metric.name"),  # a name sent as a varint
        (b.length(1, b.length(2, b.length(2, b.string(1, "m") + b.length(5, b.length(1, b.uint(4, 1)))))), "as_double"),
        (b.length(1, b.length(2, b.length(2, b.length(1, b"\xff\xfe")))), "not UTF-8"),
    ],
)
def test_malformed_payloads_raise_a_decode_error_naming_the_place(payload, where):
    with pytest.raises(OtlpDecodeError, match=where):
        decode_metrics_data(payload)


def test_an_empty_payload_has_no_metrics():
    assert decode_metrics_data(b"") == []


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_decode_or_raise_only_a_decode_error(data):
    try:
        decode_metrics_data(data)
    except OtlpDecodeError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(PAYLOAD) - 1), st.integers(min_value=0, max_value=255))
def test_a_corrupted_byte_anywhere_decodes_or_raises_only_a_decode_error(position, value):
    data = bytearray(PAYLOAD)
    data[position] = value
    try:
        decode_metrics_data(bytes(data))
    except OtlpDecodeError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 2, 3, 4]), st.binary(max_size=200))
def test_arbitrary_compressed_bytes_decompress_or_raise_only_the_payload_errors(codec, data):
    try:
        decompress_payload(codec, data, max_size=4096)
    except (OtlpDecodeError, PayloadTooLargeError):
        pass
