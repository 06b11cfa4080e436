"""KIP-390 compression levels: ``compression.gzip.level``, ``compression.lz4.level``, ``compression.zstd.level``.

The settings' ranges as Kafka's; the level reaching the bytes of batches built by ``send`` and ``send_batch``
(the gzip header's XFL byte records zlib's level: 2 for level 9, 4 for level 1, 0 otherwise); every level's
output read back by our client and by confluent-kafka."""

from __future__ import annotations

import uuid

import confluent_kafka
import pyarrow as pa
import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, KafkaClient, NewTopic, OffsetSpec, Producer, TopicPartition
from spark_kafkalog.client.config import ClientConfig, ConfigError
from spark_kafkalog.records import Compression
from spark_kafkalog.records.batch import BATCH_HEADER_SIZE
from spark_kafkalog.records.compression import compress, decompress

from .test_batch_producer import read_all

VALUES = [b'{"id":%d,"payload":"%s"}' % (i, b"abcdef0123" * (i % 7 + 1)) for i in range(2000)]


@pytest.mark.parametrize(
    ("settings", "codec", "level"),
    [
        ({"compression.type": "gzip"}, Compression.GZIP, None),
        ({"compression.type": "gzip", "compression.gzip.level": -1}, Compression.GZIP, None),
        ({"compression.type": "gzip", "compression.gzip.level": "9"}, Compression.GZIP, 9),
        ({"compression.type": "lz4"}, Compression.LZ4, None),
        ({"compression.type": "lz4", "compression.lz4.level": 17}, Compression.LZ4, 17),
        ({"compression.type": "zstd"}, Compression.ZSTD, 3),
        ({"compression.type": "zstd", "compression.zstd.level": "-5"}, Compression.ZSTD, -5),
        ({"compression.type": "snappy", "compression.zstd.level": 19}, Compression.SNAPPY, None),
        ({"compression.zstd.level": 19}, Compression.NONE, None),
    ],
)
def test_the_level_of_the_configured_codec(settings, codec, level):
    cfg = ClientConfig.create(settings)
    assert cfg.compression_type == codec
    assert cfg.compression_level() == level


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("compression.gzip.level", 0, "must be -1 (the default) or between 1 and 9, got 0"),
        ("compression.gzip.level", 10, "must be <= 9, got 10"),
        ("compression.gzip.level", -2, "must be >= -1, got -2"),
        ("compression.lz4.level", 0, "must be >= 1, got 0"),
        ("compression.lz4.level", 18, "must be <= 17, got 18"),
        ("compression.zstd.level", 23, "must be <= 22, got 23"),
        ("compression.zstd.level", -131073, "must be >= -131072, got -131073"),
        ("compression.zstd.level", "fast", "must be an integer, got 'fast'"),
    ],
)
def test_out_of_range_levels_are_refused_naming_the_setting(key, value, message):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as raised:
        ClientConfig.create({key: value})
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("codec", "levels"),
    [(Compression.GZIP, (1, 6, 9)), (Compression.LZ4, (1, 9, 12, 17)), (Compression.ZSTD, (-7, 1, 19))],
)
def test_every_level_round_trips_and_levels_trade_size(codec, levels):
    data = b"".join(VALUES)
    sizes = {}
    for level in (None, *levels):
        packed = compress(codec, data, level=level)
        assert decompress(codec, packed) == data
        sizes[level] = len(packed)
    assert sizes[levels[-1]] < sizes[levels[0]], sizes  # the highest level compresses better than the lowest


def test_lz4_levels_above_hc_maximum_write_what_level_12_writes():
    data = b"".join(VALUES)
    assert compress(Compression.LZ4, data, level=17) == compress(Compression.LZ4, data, level=12)


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    broker = EmbeddedBroker(
        0, zookeeper_connect=f"memory:levels-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b")
    )
    broker.start()
    yield broker.bootstrap_servers
    broker.stop()


def stored_batches(bootstrap: str, topic: str) -> list[bytes]:
    tp = TopicPartition(topic, 0)
    with KafkaClient(bootstrap) as client:
        end = client.list_offsets({tp: OffsetSpec.LATEST})[tp]
        return [bytes(fetched.batch.data) for fetched in client.fetch_batches(tp, 0, end)]


def gzip_xfl(batch: bytes) -> int:
    member = batch[BATCH_HEADER_SIZE:]
    assert member[:2] == b"\x1f\x8b"
    return member[8]


@pytest.mark.integration
@pytest.mark.parametrize("path", ["send", "send_batch"])
@pytest.mark.parametrize(("level", "xfl"), [(9, 2), (1, 4), (6, 0)])
def test_gzip_level_reaches_the_batches_both_send_paths_write(bootstrap, path, level, xfl):
    topic = f"levels-{uuid.uuid4().hex[:10]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 1, 1, {})])
    with Producer(bootstrap, compression_type="gzip", compression_gzip_level=level, batch_size=64 * 1024) as producer:
        if path == "send":
            for value in VALUES:
                producer.send(topic, value, partition=0)
            producer.flush()
        else:
            producer.send_batch(topic, pa.array(VALUES, pa.binary()), partition=0).result(30)
    batches = stored_batches(bootstrap, topic)
    assert batches and {gzip_xfl(b) for b in batches} == {xfl}
    assert [r[1] for r in read_all(bootstrap, topic, 1)[0]] == VALUES


@pytest.mark.integration
@pytest.mark.parametrize(
    ("codec", "setting", "level"), [("zstd", "compression_zstd_level", 19), ("lz4", "compression_lz4_level", 9)]
)
def test_levelled_batches_are_read_by_confluent_kafka(bootstrap, codec, setting, level):
    topic = f"levels-{uuid.uuid4().hex[:10]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 1, 1, {})])
    with Producer(bootstrap, compression_type=codec, **{setting: level}) as producer:
        producer.send_batch(topic, pa.array(VALUES[:1000], pa.binary()), partition=0).result(30)
        for value in VALUES[1000:]:
            producer.send(topic, value, partition=0)
        producer.flush()
    with Producer(bootstrap, compression_type=codec) as producer:
        other = f"{topic}-default"
        with AdminClient(bootstrap) as admin:
            admin.create_topics([NewTopic(other, 1, 1, {})])
        producer.send_batch(other, pa.array(VALUES[:1000], pa.binary()), partition=0).result(30)
    default_sizes = [len(b) for b in stored_batches(bootstrap, other)]
    levelled_sizes = [len(b) for b in stored_batches(bootstrap, topic)]
    assert levelled_sizes[0] < default_sizes[0]  # the same 1,000 records, smaller at the higher level
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"}
    )
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
    got = []
    while len(got) < len(VALUES):
        messages = consumer.consume(500, timeout=10)
        assert messages, f"confluent-kafka read {len(got)} of {len(VALUES)} records"
        for message in messages:
            assert message.error() is None, message.error()
            got.append(message.value())
    consumer.close()
    assert got == VALUES
