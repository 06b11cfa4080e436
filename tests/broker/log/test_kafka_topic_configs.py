"""Every Kafka 3.9 topic config: accepted with Kafka's values or refused naming why; broker-side
recompression (``compression.type``), CreateTime bounds, roll jitter and ``max.compaction.lag.ms`` on the log."""

from __future__ import annotations

import pytest

from broker.config import ConfigError
from broker.log import TOPIC_CONFIG_KEYS, LogConfig
from broker.log.cleaner import clean_log, cleanable_range
from broker.log.errors import LogAppendError
from broker.log.recompression import recompress
from broker.log.validation import validate_leader_batches
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import Compression, build_control_batch, iter_batches
from spark_kafkalog.records.batch import CODEC_MASK, parse_batch_header, validate_batch

from .helpers import T0, batch, read_all

# Kafka 3.9's topic configs (kafka-configs --describe --all on a 3.9 topic) with Kafka's default values
KAFKA_TOPIC_DEFAULTS = {
    "cleanup.policy": "delete",
    "compression.gzip.level": "-1",
    "compression.lz4.level": "9",
    "compression.type": "producer",
    "compression.zstd.level": "3",
    "delete.retention.ms": "86400000",
    "file.delete.delay.ms": "60000",
    "flush.messages": "9223372036854775807",
    "flush.ms": "9223372036854775807",
    "follower.replication.throttled.replicas": "",
    "index.interval.bytes": "4096",
    "leader.replication.throttled.replicas": "",
    "local.retention.bytes": "-2",
    "local.retention.ms": "-2",
    "max.compaction.lag.ms": "9223372036854775807",
    "max.message.bytes": "1048588",
    "message.downconversion.enable": "true",
    "message.format.version": "3.0-IV1",
    "message.timestamp.after.max.ms": "9223372036854775807",
    "message.timestamp.before.max.ms": "9223372036854775807",
    "message.timestamp.difference.max.ms": "9223372036854775807",
    "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0",
    "min.insync.replicas": "1",
    "preallocate": "false",
    "remote.log.copy.disable": "false",
    "remote.log.delete.on.disable": "false",
    "remote.storage.enable": "false",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.index.bytes": "10485760",
    "segment.jitter.ms": "0",
    "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
}


def test_kafkalog_knows_exactly_kafkas_topic_configs():
    assert sorted(TOPIC_CONFIG_KEYS) == sorted(KAFKA_TOPIC_DEFAULTS)


@pytest.mark.parametrize("name", sorted(KAFKA_TOPIC_DEFAULTS))
def test_kafkas_default_value_is_accepted_and_is_kafkalogs_default(name):
    base = LogConfig()
    config = base.with_topic_overrides({name: KAFKA_TOPIC_DEFAULTS[name]})
    field = TOPIC_CONFIG_KEYS[name].field
    assert getattr(config, field) == getattr(base, field)
    (entry,) = [e for e in base.describe() if e.name == name]
    assert entry.value == KAFKA_TOPIC_DEFAULTS[name]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("remote.storage.enable", "true", "no tiered storage"),
        ("remote.log.copy.disable", "true", "no tiered storage"),
        ("remote.log.delete.on.disable", "true", "no tiered storage"),
        ("leader.replication.throttled.replicas", "0:1,1:2", "no replication quotas"),
        ("follower.replication.throttled.replicas", "*", "no replication quotas"),
        ("preallocate", "true", "does not preallocate"),
        ("compression.type", "brotli", "must be one of"),
        ("compression.gzip.level", "0", "not a valid value"),
        ("compression.gzip.level", "10", "at most 9"),
        ("compression.lz4.level", "18", "at most 17"),
        ("compression.zstd.level", "23", "at most 22"),
        ("message.format.version", "latest", "not a Kafka version"),
        ("max.compaction.lag.ms", "0", "at least 1"),
        ("message.timestamp.after.max.ms", "-1", "at least 0"),
        ("segment.jitter.ms", "-5", "at least 0"),
    ],
)
def test_a_value_kafkalog_cannot_honour_is_refused_naming_the_config_and_why(name, value, message):
    with pytest.raises(ConfigError, match=message) as info:
        LogConfig().with_topic_overrides({name: value})
    assert name in str(info.value)


def test_min_compaction_lag_above_max_compaction_lag_is_refused():
    with pytest.raises(ConfigError, match="must not be larger than max.compaction.lag.ms"):
        LogConfig().with_topic_overrides({"min.compaction.lag.ms": "5000", "max.compaction.lag.ms": "1000"})


@pytest.mark.parametrize("version", ["2.8", "3.0-IV1", "0.10.2", "3.9"])
def test_message_format_version_takes_kafka_versions_and_is_ignored(version):
    assert LogConfig().with_topic_overrides({"message.format.version": version}).message_format_version == version


# -- compression.type -------------------------------------------------------------------------------------
CODECS = list(Compression)


def _values(n=20):
    return [b"value-%d-" % i + b"x" * (i * 7) for i in range(n)]


@pytest.mark.parametrize("source", CODECS, ids=lambda c: c.name)
@pytest.mark.parametrize("target", CODECS, ids=lambda c: c.name)
def test_recompress_keeps_records_and_producer_fields_and_changes_only_codec_length_and_crc(source, target):
    data = batch(
        _values(), keys=[b"k%d" % i for i in range(20)], codec=source, producer_id=7, producer_epoch=2, base_sequence=40
    )
    batches = validate_leader_batches(data, max_message_bytes=1 << 24, segment_bytes=1 << 30, compacted=False)
    out = recompress(data, batches, int(target), None)
    if source == target:
        assert out is None
        return
    buf, headers = out
    (pos, header), (_, before) = headers[0], batches[0]
    validate_batch(buf, pos)  # the CRC-32C matches the new bytes
    assert header.attributes & CODEC_MASK == int(target)
    assert header.attributes & ~CODEC_MASK == before.attributes & ~CODEC_MASK
    same = (
        "base_offset",
        "partition_leader_epoch",
        "last_offset_delta",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "records_count",
    )
    assert [getattr(header, f) for f in same] == [getattr(before, f) for f in same]
    assert parse_batch_header(buf, pos) == header
    (view,) = list(iter_batches(bytes(buf)))
    (original,) = list(iter_batches(bytes(data)))
    assert view.records() == original.records()


def test_recompress_leaves_control_batches_and_batches_already_in_the_codec_byte_for_byte():
    marker = bytearray(
        build_control_batch("commit", producer_id=9, producer_epoch=0, coordinator_epoch=1, timestamp_ms=T0)
    )
    gz = batch(_values(3), codec=Compression.GZIP)
    plain = batch(_values(3))
    data = marker + gz + plain
    batches = validate_leader_batches(
        data, max_message_bytes=1 << 24, segment_bytes=1 << 30, compacted=False, allow_control=True
    )
    buf, headers = recompress(data, batches, int(Compression.GZIP), None)
    assert bytes(buf[: len(marker) + len(gz)]) == bytes(marker + gz)
    assert headers[2][1].attributes & CODEC_MASK == int(Compression.GZIP)


def test_recompress_of_undecodable_records_is_corrupt_message():
    data = batch(_values(3), codec=Compression.GZIP)
    data[70:80] = b"\xff" * 10  # inside the gzip stream (the CRC is not checked here)

    header = parse_batch_header(data, 0)
    with pytest.raises(LogAppendError, match="cannot decompress its gzip records to store them as lz4") as info:
        recompress(data, [(0, header)], int(Compression.LZ4), None)
    assert info.value.error_code == ErrorCode.CORRUPT_MESSAGE


@pytest.mark.parametrize("target", ["gzip", "snappy", "lz4", "zstd", "uncompressed"])
def test_a_topic_with_compression_type_stores_every_batch_with_it(open_log, target):
    plog = open_log(LogConfig().with_topic_overrides({"compression.type": target}))
    sent = [batch(_values(5), codec=c) for c in CODECS]
    for data in sent:
        plog.append_as_leader(bytearray(data), leader_epoch=3)
    stored = plog.read(0, 1 << 24).records.read_bytes()
    views = list(iter_batches(stored))
    assert [v.header().compression.name.lower() for v in views] == [target.replace("uncompressed", "none")] * 5
    for v in views:
        v.validate()
    assert [r.value for r in read_all(plog)] == _values(5) * 5
    assert [r.offset for r in read_all(plog)] == list(range(25))


def test_compression_type_producer_stores_the_producers_bytes(open_log):
    plog = open_log(LogConfig())
    data = batch(_values(5), codec=Compression.SNAPPY)
    plog.append_as_leader(bytearray(data), leader_epoch=0)
    stored = plog.read(0, 1 << 24).records.read_bytes()
    assert stored[16:] == bytes(data[16:])  # all but the offset, length and leader epoch the broker assigns


def test_recompression_that_grows_a_batch_past_max_message_bytes_is_refused(open_log):
    plog = open_log(LogConfig().with_topic_overrides({"compression.type": "uncompressed", "max.message.bytes": "400"}))
    data = batch([b"a" * 3000], codec=Compression.GZIP)  # small compressed, large once stored uncompressed
    assert len(data) < 400
    with pytest.raises(LogAppendError, match="once recompressed") as info:
        plog.append_as_leader(bytearray(data), leader_epoch=0)
    assert info.value.error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert plog.log_end_offset == 0


def test_recompression_keeps_idempotent_deduplication(open_log):
    plog = open_log(LogConfig().with_topic_overrides({"compression.type": "zstd"}))
    data = batch(_values(3), producer_id=5, producer_epoch=0, base_sequence=0)
    first = plog.append_as_leader(bytearray(data), leader_epoch=0)
    again = plog.append_as_leader(bytearray(data), leader_epoch=0)
    assert again.duplicate and (again.first_offset, again.last_offset) == (first.first_offset, first.last_offset)
    assert plog.log_end_offset == 3


# -- message.timestamp.before/after.max.ms ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("overrides", "offset_ms", "accepted"),
    [
        ({"message.timestamp.before.max.ms": "1000"}, -1000, True),
        ({"message.timestamp.before.max.ms": "1000"}, -1001, False),
        ({"message.timestamp.before.max.ms": "1000"}, 10**9, True),
        ({"message.timestamp.after.max.ms": "1000"}, 1000, True),
        ({"message.timestamp.after.max.ms": "1000"}, 1001, False),
        ({"message.timestamp.after.max.ms": "1000"}, -(10**9), True),
        ({"message.timestamp.difference.max.ms": "500"}, -501, False),
        ({"message.timestamp.difference.max.ms": "500"}, 501, False),
        ({"message.timestamp.difference.max.ms": "500", "message.timestamp.after.max.ms": "100"}, 101, False),
        ({"message.timestamp.difference.max.ms": "500", "message.timestamp.before.max.ms": "10000"}, -600, False),
        ({"message.timestamp.after.max.ms": "1000", "message.timestamp.type": "LogAppendTime"}, 10**9, True),
        ({}, 10**12, True),
    ],
)
def test_create_time_bounds(open_log, clock, overrides, offset_ms, accepted):
    plog = open_log(LogConfig().with_topic_overrides(overrides))
    now = clock.milliseconds()
    data = batch([b"ok", b"edge"], timestamps=[now, now + offset_ms])
    if accepted:
        plog.append_as_leader(data, leader_epoch=0)
        assert plog.log_end_offset == 2
        return
    with pytest.raises(LogAppendError, match="offset delta 1 has timestamp") as info:
        plog.append_as_leader(data, leader_epoch=0)
    assert info.value.error_code == ErrorCode.INVALID_TIMESTAMP
    assert plog.log_end_offset == 0


# -- segment.jitter.ms and max.compaction.lag.ms rolls ----------------------------------------------------
def test_segment_jitter_rolls_each_segment_a_random_time_before_segment_ms(open_log, clock):
    plog = open_log(LogConfig().with_topic_overrides({"segment.ms": "10000", "segment.jitter.ms": "4000"}))
    seen = set()
    for _ in range(30):
        jitter = plog.roll_jitter_ms
        assert 0 <= jitter < 4000
        seen.add(jitter)
        plog.append_as_leader(batch([b"a"]), leader_epoch=0)
        segments = len(plog.segments)
        clock.advance(10_000 - jitter)  # exactly segment.ms - jitter: not yet
        plog.append_as_leader(batch([b"b"]), leader_epoch=0)
        assert len(plog.segments) == segments
        clock.advance(1)
        plog.append_as_leader(batch([b"c"]), leader_epoch=0)
        assert len(plog.segments) == segments + 1
    assert len(seen) > 1  # drawn again for every segment


def test_without_jitter_a_segment_rolls_at_segment_ms(open_log, clock):
    plog = open_log(LogConfig().with_topic_overrides({"segment.ms": "10000"}))
    assert plog.roll_jitter_ms == 0
    plog.append_as_leader(batch([b"a"]), leader_epoch=0)
    clock.advance(10_000)
    plog.append_as_leader(batch([b"b"]), leader_epoch=0)
    assert len(plog.segments) == 1
    clock.advance(1)
    plog.append_as_leader(batch([b"c"]), leader_epoch=0)
    assert len(plog.segments) == 2


@pytest.mark.parametrize(
    ("policy", "lag", "rolls_at"),
    [("compact", "3000", 3000), ("delete", "3000", 10_000), ("compact", "20000", 10_000)],
)
def test_a_compacted_topic_rolls_at_max_compaction_lag_when_below_segment_ms(open_log, clock, policy, lag, rolls_at):
    plog = open_log(
        LogConfig().with_topic_overrides(
            {"segment.ms": "10000", "cleanup.policy": policy, "max.compaction.lag.ms": lag}
        )
    )
    plog.append_as_leader(batch([b"a"], keys=[b"k"]), leader_epoch=0)
    clock.advance(rolls_at)
    plog.append_as_leader(batch([b"b"], keys=[b"k"]), leader_epoch=0)
    assert len(plog.segments) == 1
    clock.advance(1)
    plog.append_as_leader(batch([b"c"], keys=[b"k"]), leader_epoch=0)
    assert len(plog.segments) == 2


def test_max_compaction_lag_cleans_a_log_below_the_dirty_ratio(open_log, clock):
    config = LogConfig(cleanup_policy=("compact",), segment_bytes=400, min_cleanable_dirty_ratio=0.99)
    now = clock.milliseconds()
    plog = open_log(config.update(max_compaction_lag_ms=60_000))
    for i in range(20):
        plog.append_as_leader(batch([b"v%d" % i], keys=[b"k%d" % (i % 2)], timestamps=[now]), leader_epoch=0)
    plog.roll()
    plog.high_watermark = plog.log_end_offset
    assert clean_log(plog, clock.milliseconds()) is not None  # first cleaning: everything is dirty (ratio 1)
    plog.append_as_leader(batch([b"late"], keys=[b"k0"], timestamps=[clock.milliseconds()]), leader_epoch=0)
    plog.roll()
    plog.high_watermark = plog.log_end_offset
    assert cleanable_range(plog, clock.milliseconds()).dirty_ratio < 0.99
    clock.advance(60_000)
    assert clean_log(plog, clock.milliseconds()) is None  # not older than the lag yet
    clock.advance(1)
    assert clean_log(plog, clock.milliseconds()) is not None
    assert sorted(r.value for r in read_all(plog)) == [b"late", b"v19"]
