"""The seeds' Producer: configuration, encoders, partitioner and plug-in loading (tables); the async queue's
full-queue rules with a blocking event handler; and against an in-process broker on a real ZooKeeper, sync and
async sends with keys, partitioner, encoders and callbacks, Produce v0-v3 (message formats v0/v1/v2) with each
codec, read back with the SimpleConsumer and with kafka-python."""

from __future__ import annotations

import threading
import time

import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.legacy import (
    CallbackHandler,
    DefaultEncoder,
    DefaultPartitioner,
    Encoder,
    EventHandler,
    FetchRequest,
    Partitioner,
    Producer,
    ProducerConfig,
    ProducerData,
    QueueFullException,
    SimpleConsumer,
    StringEncoder,
)
from spark_kafkalog.legacy.event_handler import FailedToSendMessageException, encode_message_set
from spark_kafkalog.legacy.plugins import load_plugin
from spark_kafkalog.records import Compression

from ..waiting import wait_until
from .embedded import create_topic, host_port, start_cluster

NOWHERE = "127.0.0.1:1"  # for producers whose event handler never connects


# -- configuration -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("props", "attr", "expected"),
    [
        ({}, "producer_type", "sync"),
        ({"producer.type": "ASYNC"}, "producer_type", "async"),
        ({}, "queue_buffering_max_ms", 5000),
        ({"queue.time": "250"}, "queue_buffering_max_ms", 250),
        ({"queue.buffering.max.ms": 250}, "queue_buffering_max_ms", 250),
        ({}, "batch_num_messages", 200),
        ({"batch.size": "7"}, "batch_num_messages", 7),  # the seeds' batch.size counts messages
        ({"batch.num.messages": 7, "batch.size": 7}, "batch_num_messages", 7),
        ({}, "queue_buffering_max_messages", 10000),
        ({}, "queue_enqueue_timeout_ms", -1),
        ({"queue.enqueue.timeout.ms": "0"}, "queue_enqueue_timeout_ms", 0),
        ({}, "request_required_acks", 1),
        ({"request.required.acks": "-1"}, "request_required_acks", -1),
        ({"acks": "all"}, "request_required_acks", -1),
        ({"acks": 0}, "request_required_acks", 0),
        ({}, "compression_codec", 0),
        ({"compression.codec": "gzip"}, "compression_codec", 1),
        ({"compression.codec": 2}, "compression_codec", 2),
        ({"compression.type": "lz4"}, "compression_codec", 3),
        ({}, "message_send_max_retries", 3),
        ({"retries": "5"}, "message_send_max_retries", 5),
        ({}, "retry_backoff_ms", 100),
        ({}, "request_timeout_ms", 10000),
        ({}, "client_id", ""),
        ({"client.id": "app"}, "client_id", "app"),
        ({}, "produce_api_version", None),
        ({"produce.api.version": "latest"}, "produce_api_version", None),
        ({"produce.api.version": "0"}, "produce_api_version", 0),
        ({}, "serializer_class", "kafka.serializer.DefaultEncoder"),
        ({"serializer.class": "kafka.serializer.StringEncoder"}, "key_serializer_class", "kafka.serializer.StringEncoder"),
        ({"serializer.class": StringEncoder, "key.serializer.class": DefaultEncoder}, "key_serializer_class", DefaultEncoder),
        ({"batch_num_messages": 3}, "batch_num_messages", 3),  # Python spelling
    ],
)  # fmt: skip
def test_config_reads_the_seeds_names_and_todays_aliases(props, attr, expected):
    assert getattr(ProducerConfig({"metadata.broker.list": NOWHERE, **props}), attr) == expected


def test_config_takes_bootstrap_servers_for_the_broker_list():
    assert ProducerConfig({"bootstrap.servers": "a:1, b:2"}).broker_list == "a:1,b:2"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"metadata.broker.list": NOWHERE, "queue.tme": 5}, r"unknown producer setting 'queue.tme': did you mean 'queue.time'"),
        ({"metadata.broker.list": NOWHERE, "zk.connect": "zk:2181"}, r"'zk.connect'.*set metadata.broker.list"),
        ({}, r"'metadata.broker.list' \(or 'bootstrap.servers'\) is required"),
        ({"metadata.broker.list": "nohostport"}, r"'metadata.broker.list' must list brokers"),
        ({"metadata.broker.list": NOWHERE, "producer.type": "batch"}, r"'producer.type' must be sync or async"),
        ({"metadata.broker.list": NOWHERE, "request.required.acks": 2}, r"'request.required.acks' must be in \[-1, 1\]"),
        ({"metadata.broker.list": NOWHERE, "compression.codec": "zstd"}, r"none, gzip, snappy or lz4"),
        ({"metadata.broker.list": NOWHERE, "produce.api.version": 10}, r"'produce.api.version' must be in \[0, 9\]"),
        ({"metadata.broker.list": NOWHERE, "queue.enqueue.timeout.ms": -2}, r"must be in \[-1,"),
        ({"metadata.broker.list": NOWHERE, "batch.num.messages": "many"}, r"'batch.num.messages' must be an integer"),
        ({"metadata.broker.list": NOWHERE, "queue.time": 5, "queue.buffering.max.ms": 6}, r"'queue.time' and 'queue.buffering.max.ms' name the same setting"),
    ],
)  # fmt: skip
def test_config_errors_name_the_key(props, message):
    with pytest.raises(ConfigError, match=message):
        ProducerConfig(props)


# -- encoders, partitioner, plug-ins ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("encoder", "obj", "expected"),
    [
        (DefaultEncoder(), b"raw", b"raw"),
        (DefaultEncoder(), bytearray(b"ba"), b"ba"),
        (DefaultEncoder(), memoryview(b"mv"), b"mv"),
        (DefaultEncoder(), None, None),
        (StringEncoder(), "héllo", "héllo".encode()),
        (StringEncoder("latin-1"), "héllo", "héllo".encode("latin-1")),
        (StringEncoder(), 42, b"42"),
        (StringEncoder(), b"raw", b"raw"),
        (StringEncoder(), None, None),
    ],
)
def test_encoders_turn_objects_into_message_bytes(encoder, obj, expected):
    assert encoder.to_message(obj) == expected


def test_default_encoder_refuses_what_is_not_bytes():
    with pytest.raises(TypeError, match=r"cannot encode str 'text'.*serializer.class"):
        DefaultEncoder().to_message("text")


@pytest.mark.parametrize("key", [b"", b"a", b"user-42", bytes(range(40)), "clé".encode()])
@pytest.mark.parametrize("partitions", [1, 3, 7, 100])
def test_default_partitioner_hashes_key_bytes_like_kafka_python(key, partitions):
    expected = (kafka_python_murmur2(key) & 0x7FFFFFFF) % partitions
    assert DefaultPartitioner().partition(key, partitions) == expected


@pytest.mark.parametrize(("key", "same_as"), [("clé", "clé".encode()), (1234, b"1234"), (bytearray(b"ab"), b"ab")])
def test_default_partitioner_hashes_str_and_int_keys_as_their_bytes(key, same_as):
    assert DefaultPartitioner().partition(key, 13) == DefaultPartitioner().partition(same_as, 13)


def test_default_partitioner_picks_random_partitions_for_null_keys_and_refuses_other_types():
    assert {DefaultPartitioner().partition(None, 4) for _ in range(200)} == {0, 1, 2, 3}
    with pytest.raises(TypeError, match=r"not float 1.5.*partitioner.class"):
        DefaultPartitioner().partition(1.5, 4)


class ModPartitioner(Partitioner):
    """Integer keys modulo the partition count (loaded by dotted path in the tests below)."""

    def partition(self, key, num_partitions: int) -> int:
        return int(key) % num_partitions


class NeedsArguments(Encoder):
    def __init__(self, charset: str) -> None:
        self.charset = charset


@pytest.mark.parametrize(
    ("spec", "kind", "expected_type"),
    [
        ("kafka.serializer.StringEncoder", Encoder, StringEncoder),
        ("kafka.serializer.DefaultEncoder", Encoder, DefaultEncoder),
        ("kafka.producer.DefaultPartitioner", Partitioner, DefaultPartitioner),
        ("spark_kafkalog.legacy.plugins.StringEncoder", Encoder, StringEncoder),
        ("tests.legacy.test_producer:ModPartitioner", Partitioner, ModPartitioner),
        (ModPartitioner, Partitioner, ModPartitioner),
        (StringEncoder("ascii"), Encoder, StringEncoder),
    ],
)
def test_plugins_load_from_classes_dotted_paths_seeds_names_and_instances(spec, kind, expected_type):
    assert type(load_plugin("some.setting", spec, kind)) is expected_type


@pytest.mark.parametrize(
    ("spec", "kind", "message"),
    [
        ("no_such_module_xyz.Encoder", Encoder, r"'serializer.class': cannot import module 'no_such_module_xyz'"),
        ("spark_kafkalog.legacy.plugins.Nope", Encoder, r"has no attribute 'Nope'"),
        ("Plain", Encoder, r"must name a class as 'package.module.Class'"),
        (NeedsArguments, Encoder, r"NeedsArguments\(\) cannot be created without arguments"),
        (object(), Encoder, r"must be a Encoder \(with a to_message method\)"),
        (ModPartitioner(), CallbackHandler, r"must be a CallbackHandler subclass"),
    ],
)
def test_plugin_errors_name_the_setting(spec, kind, message):
    with pytest.raises(ConfigError, match=message):
        load_plugin("serializer.class", spec, kind)


def test_producer_data_holds_one_message_or_a_list_of_them():
    assert ProducerData("t", "k", "v").messages == ["v"]
    assert ProducerData("t", "k", ["a", "b"]).messages == ["a", "b"]
    assert ProducerData("t", data=b"v").key is None
    with pytest.raises(ValueError, match="non-empty topic"):
        ProducerData("", None, b"v")


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1), (3, 2), (9, 2)])
def test_produce_versions_carry_their_message_format(version, magic):
    data = encode_message_set(version, Compression.NONE, [(b"k", b"v")])
    assert data[16] == magic  # the magic byte sits at the same place in log entries and record batches


# -- the async queue, with an event handler that blocks ---------------------------------------------------
class BlockingHandler(EventHandler):
    """Records batches; blocks in ``handle`` until released."""

    def __init__(self) -> None:
        self.batches: list[list[ProducerData]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.closed = False

    def handle(self, batch):
        self.entered.set()
        self.release.wait(30)
        self.batches.append(list(batch))

    def close(self):
        self.closed = True


class Recorder(CallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def after_enqueue(self, data, added):
        self.events.append(("after_enqueue", data.data, added))

    def after_dequeuing(self, batch):
        self.events.append(("after_dequeuing", [d.data for d in batch]))
        return batch

    def before_sending(self, batch):
        self.events.append(("before_sending", len(batch)))
        return batch

    def after_serialization(self, messages):
        self.events.append(("after_serialization", messages))

    def after_sending(self, batch, error):
        self.events.append(("after_sending", len(batch), error))

    def last_batch_before_close(self):
        self.events.append(("last_batch_before_close",))
        return []

    def names(self) -> list[str]:
        return [e[0] for e in self.events]


def blocked_async_producer(timeout_ms: int) -> tuple[Producer, BlockingHandler, Recorder]:
    """An async producer whose send thread is stuck in ``handle`` with a queue of 2 that is full."""
    handler, recorder = BlockingHandler(), Recorder()
    producer = Producer(
        {
            "metadata.broker.list": NOWHERE,
            "producer.type": "async",
            "event.handler": handler,
            "callback.handler": recorder,
            "batch.num.messages": 1,
            "queue.buffering.max.messages": 2,
            "queue.enqueue.timeout.ms": timeout_ms,
        }
    )
    producer.send(ProducerData("t", None, b"m1"))
    assert handler.entered.wait(10), "the send thread never called the event handler"
    producer.send([ProducerData("t", None, b"m2"), ProducerData("t", None, b"m3")])
    return producer, handler, recorder


@pytest.mark.parametrize(("timeout_ms", "min_s", "max_s"), [(0, 0.0, 0.5), (300, 0.3, 5.0)])
def test_full_queue_raises_at_once_or_after_the_enqueue_timeout(timeout_ms, min_s, max_s):
    producer, handler, recorder = blocked_async_producer(timeout_ms)
    started = time.monotonic()
    with pytest.raises(QueueFullException, match=r"full \(2 messages, queue.buffering.max.messages\)"):
        producer.send(ProducerData("t", None, b"m4"))
    assert min_s <= time.monotonic() - started < max_s
    assert ("after_enqueue", b"m4", False) in recorder.events
    handler.release.set()
    producer.close()
    assert [[d.data for d in b] for b in handler.batches] == [[b"m1"], [b"m2"], [b"m3"]] and handler.closed


def test_full_queue_blocks_until_there_is_room_with_timeout_minus_one():
    producer, handler, recorder = blocked_async_producer(-1)
    sender = threading.Thread(target=producer.send, args=(ProducerData("t", None, b"m4"),))
    sender.start()
    sender.join(0.5)
    assert sender.is_alive(), "send returned although the queue was full"
    handler.release.set()
    sender.join(10)
    assert not sender.is_alive()
    producer.close()
    assert [b[0].data for b in handler.batches] == [b"m1", b"m2", b"m3", b"m4"]
    assert ("after_enqueue", b"m4", True) in recorder.events


def test_close_waits_for_a_send_in_progress_and_delivers_its_data():
    producer, handler, _ = blocked_async_producer(-1)
    sender = threading.Thread(target=producer.send, args=(ProducerData("t", None, b"m4"),))
    sender.start()
    closer = threading.Thread(target=producer.close)
    wait_until(lambda: producer._active_sends == 1, 10, "the send to block on the full queue")
    closer.start()
    closer.join(0.3)
    assert closer.is_alive(), "close returned while data was still being queued"
    handler.release.set()
    sender.join(10)
    closer.join(10)
    assert not sender.is_alive() and not closer.is_alive()
    assert [b[0].data for b in handler.batches] == [b"m1", b"m2", b"m3", b"m4"]


def test_event_handler_replaces_sending_in_sync_mode():
    handler = BlockingHandler()
    handler.release.set()
    with Producer({"metadata.broker.list": NOWHERE, "event.handler": handler}) as producer:
        batch = [ProducerData("t", "k", ["a", "b"]), ProducerData("u", None, "c")]
        producer.send(batch)
    assert handler.batches == [batch] and handler.closed


def test_sync_send_to_an_address_without_a_broker_fails_within_seconds():
    started = time.monotonic()
    with Producer({"metadata.broker.list": NOWHERE}) as producer:
        with pytest.raises(
            FailedToSendMessageException, match=r"t: cannot connect to any bootstrap server: 127.0.0.1:1"
        ):
            producer.send(ProducerData("t", None, b"x"))
    assert time.monotonic() - started < 30


def test_send_after_close_is_refused():
    producer = Producer({"metadata.broker.list": NOWHERE, "event.handler": BlockingHandler()})
    producer.close()
    producer.close()
    with pytest.raises(Exception, match="closed"):
        producer.send(ProducerData("t", None, b"x"))


# -- against a broker --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def broker(zookeeper, tmp_path_factory):
    (b,) = start_cluster(zookeeper, tmp_path_factory, 1, num_partitions=3)
    yield b
    b.stop()


def read_partition(broker, topic: str, partition: int, *, fetch_version: int = 0) -> list:
    host, port = host_port(broker)
    with SimpleConsumer(host, port, 10000, 64 * 1024, "legacy-test", fetch_version=fetch_version) as consumer:
        return list(consumer.fetch(FetchRequest(topic, partition, 0, 1_000_000)))


def read_all(broker, topic: str, partitions: int = 3) -> dict[int, list[tuple[bytes | None, bytes | None]]]:
    return {p: [(m.message.key, m.message.value) for m in read_partition(broker, topic, p)] for p in range(partitions)}


def read_with_kafka_python(broker, topic: str, expected: int, partitions: int = 3) -> dict[int, list[tuple]]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=None)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    got: dict[int, list[tuple]] = {}

    def read_expected() -> bool:
        for tp, records in consumer.poll(timeout_ms=500).items():
            got.setdefault(tp.partition, []).extend((r.key, r.value) for r in records)
        return sum(map(len, got.values())) >= expected

    try:
        wait_until(read_expected, 60, f"kafka-python to read {expected} records")
    finally:
        consumer.close()
    return got


@pytest.mark.integration
def test_sync_send_places_keys_by_murmur2_and_kafka_python_reads_them(broker):
    topic = create_topic([broker], partitions=3)
    config = {"metadata.broker.list": broker.bootstrap_servers, "serializer.class": "kafka.serializer.StringEncoder"}
    with Producer(config) as producer:
        for i in range(10):
            producer.send(ProducerData(topic, f"user-{i}", [f"user-{i}-a", f"user-{i}-b"]))
    expected: dict[int, list[tuple[bytes, bytes]]] = {}
    for i in range(10):
        key = f"user-{i}".encode()
        p = (kafka_python_murmur2(key) & 0x7FFFFFFF) % 3
        expected.setdefault(p, []).extend([(key, key + b"-a"), (key, key + b"-b")])
    assert {p: v for p, v in read_all(broker, topic).items() if v} == expected
    assert read_with_kafka_python(broker, topic, 20) == expected


@pytest.mark.integration
def test_null_keys_go_to_random_partitions(broker):
    topic = create_topic([broker], partitions=3)
    with Producer({"metadata.broker.list": broker.bootstrap_servers}) as producer:
        for i in range(30):
            producer.send(ProducerData(topic, None, b"v%d" % i))
    got = read_all(broker, topic)
    assert sum(map(len, got.values())) == 30 and sum(1 for v in got.values() if v) > 1


@pytest.mark.integration
def test_sync_send_runs_the_callbacks_around_the_event_handler(broker):
    topic = create_topic([broker], partitions=3)
    recorder = Recorder()
    config = {
        "metadata.broker.list": broker.bootstrap_servers,
        "serializer.class": "kafka.serializer.StringEncoder",
        "partitioner.class": "tests.legacy.test_producer.ModPartitioner",
        "callback.handler": recorder,
    }
    with Producer(config) as producer:
        producer.send([ProducerData(topic, 4, "four"), ProducerData(topic, 2, ["two", "deux"])])
    assert recorder.events == [
        ("before_sending", 2),
        ("after_serialization", {(topic, 1): [(b"4", b"four")], (topic, 2): [(b"2", b"two"), (b"2", b"deux")]}),
        ("after_sending", 2, None),
    ]
    assert read_all(broker, topic) == {0: [], 1: [(b"4", b"four")], 2: [(b"2", b"two"), (b"2", b"deux")]}


@pytest.mark.integration
def test_async_send_batches_by_count_and_by_queue_time(broker):
    topic = create_topic([broker], partitions=3)
    recorder = Recorder()
    config = {
        "metadata.broker.list": broker.bootstrap_servers,
        "producer.type": "async",
        "batch.num.messages": 4,
        "queue.time": 60_000,
        "callback.handler": recorder,
        "partitioner.class": ModPartitioner,
        "key.serializer.class": StringEncoder,
    }
    with Producer(config) as producer:
        producer.send([ProducerData(topic, i, b"v%d" % i) for i in range(8)])  # 8 items: two full batches
        wait_until(lambda: recorder.names().count("after_sending") == 2, 30, "two full batches")
        dequeued = [e[1] for e in recorder.events if e[0] == "after_dequeuing"]
        assert dequeued == [[b"v0", b"v1", b"v2", b"v3"], [b"v4", b"v5", b"v6", b"v7"]]
        assert [e[2] for e in recorder.events if e[0] == "after_sending"] == [None, None]
    quick = Recorder()
    with Producer({**config, "queue.time": 200, "batch.num.messages": 100, "callback.handler": quick}) as producer:
        started = time.monotonic()
        producer.send([ProducerData(topic, 0, b"late-%d" % i) for i in range(3)])
        wait_until(lambda: "after_sending" in quick.names(), 30, "the batch due by queue.time")
        assert time.monotonic() - started >= 0.15
        assert [e[1] for e in quick.events if e[0] == "after_dequeuing"] == [[b"late-0", b"late-1", b"late-2"]]
    assert [v for _, v in read_all(broker, topic)[0]] == [b"v0", b"v3", b"v6", b"late-0", b"late-1", b"late-2"]


@pytest.mark.integration
def test_async_close_sends_everything_still_queued(broker):
    topic = create_topic([broker], partitions=1)
    recorder = Recorder()
    config = {
        "metadata.broker.list": broker.bootstrap_servers,
        "producer.type": "async",
        "queue.buffering.max.ms": 60_000,
        "callback.handler": recorder,
    }
    with Producer(config) as producer:
        producer.send(ProducerData(topic, b"k", [b"a", b"b", b"c"]))
        assert "after_sending" not in recorder.names()
    assert recorder.names()[-5:] == [
        "last_batch_before_close",
        "after_dequeuing",
        "before_sending",
        "after_serialization",
        "after_sending",
    ]
    assert read_all(broker, topic, 1) == {0: [(b"k", b"a"), (b"k", b"b"), (b"k", b"c")]}
    assert producer.failed_batches == 0


@pytest.mark.integration
@pytest.mark.parametrize(
    ("version", "codec", "stored_timestamps"),
    [
        (0, "none", False),
        (0, "gzip", False),
        (0, "snappy", False),
        (0, "lz4", False),
        (1, "gzip", False),
        (2, "none", True),
        (2, "lz4", True),
        (3, "snappy", True),
        ("latest", "gzip", True),
    ],
)
def test_old_produce_versions_and_codecs_round_trip(broker, version, codec, stored_timestamps):
    topic = create_topic([broker], partitions=1)
    config = {
        "metadata.broker.list": broker.bootstrap_servers,
        "produce.api.version": version,
        "compression.codec": codec,
    }
    with Producer(config) as producer:
        producer.send(ProducerData(topic, b"key", [b"m%d" % i for i in range(5)]))
        producer.send(ProducerData(topic, None, b"m5"))
    want = [(b"key", b"m%d" % i) for i in range(5)] + [(None, b"m5")]
    assert read_all(broker, topic, 1) == {0: want}
    # record batches (Fetch v4) show what the broker stored: message format v0 has no timestamps
    stored = read_partition(broker, topic, 0, fetch_version=4)
    assert [(m.message.timestamp > 0) for m in stored] == [stored_timestamps] * 6
    assert read_with_kafka_python(broker, topic, 6, 1) == {0: want}


@pytest.mark.integration
def test_acks_zero_sends_without_waiting_for_an_answer(broker):
    topic = create_topic([broker], partitions=1)
    config = {"metadata.broker.list": broker.bootstrap_servers, "request.required.acks": 0, "produce.api.version": 0}
    with Producer(config) as producer:
        producer.send(ProducerData(topic, None, [b"fire", b"forget"]))
        assert not producer.event_handler.last_base_offsets
    wait_until(lambda: len(read_partition(broker, topic, 0)) == 2, 30, "the two messages")


@pytest.mark.integration
def test_auto_created_topic_takes_the_brokers_partition_count(broker):
    topic = f"auto-{time.monotonic_ns()}"
    with Producer({"metadata.broker.list": broker.bootstrap_servers}) as producer:
        producer.send([ProducerData(topic, b"k%d" % i, b"v") for i in range(9)])
    assert sum(len(v) for v in read_all(broker, topic).values()) == 9


class OutOfRange(Partitioner):
    def partition(self, key, num_partitions: int) -> int:
        return 7


@pytest.mark.integration
@pytest.mark.parametrize(
    ("settings", "key", "value", "message"),
    [
        ({"partitioner.class": OutOfRange}, b"k", b"v", r"after 1 attempts.*returned 7 for key b'k' of topic .*, which has 3 partitions"),
        ({}, None, b"x" * 2_000_000, r"after 1 attempts.*MESSAGE_TOO_LARGE"),
    ],
)  # fmt: skip
def test_send_failures_that_retries_cannot_mend_raise_at_once(broker, settings, key, value, message):
    topic = create_topic([broker], partitions=3)
    config = {"metadata.broker.list": broker.bootstrap_servers, "retry.backoff.ms": 1000, **settings}
    started = time.monotonic()
    with Producer(config) as producer:
        with pytest.raises(FailedToSendMessageException, match=message):
            producer.send(ProducerData(topic, key, value))
    assert time.monotonic() - started < 5  # not 3 retries after 1 s each


@pytest.mark.parametrize(
    ("fetch_range", "version", "refused"),
    [((4, 18), 0, True), ((4, 18), 2, True), ((0, 17), 0, False), ((0, 17), 2, False), ((4, 18), 3, False)],
)
def test_produce_v0_to_v2_fails_clearly_at_a_broker_that_dropped_fetch_v0_to_v3(fetch_range, version, refused):
    from spark_kafkalog.client.errors import NoCommonVersionError
    from spark_kafkalog.client.network.versions import ApiVersionTable
    from spark_kafkalog.legacy.event_handler import _refuses_old_produce

    # Kafka 4.0+ (KIP-896): Produce v0-13 advertised, Fetch v4+; Kafka 3.9: Produce v0-11, Fetch v0-17
    table = ApiVersionTable({0: (0, 13), 1: fetch_range}, peer="b:1")
    error = _refuses_old_produce(table, 1, version) if version <= 2 else None
    assert (error is not None) == refused
    if refused:
        assert isinstance(error, NoCommonVersionError) and not error.retriable
        assert f"refuses Produce v{version}" in str(error) and "produce.api.version to 3 or later" in str(error)
