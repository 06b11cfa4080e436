"""Serializer objects through the real clients on an in-process broker: our Producer and Consumer with
Integer/Double/String/JSON serializers end to end (context, headers, errors naming topic, field, partition
and offset), and confluent-kafka's SerializingProducer/DeserializingConsumer with its own serializers on the
other side, both ways."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import OFFSET_BEGINNING, DeserializingConsumer, SerializingProducer
from confluent_kafka import TopicPartition as CKTP
from confluent_kafka import serialization as ck

from broker.server import EmbeddedBroker
from spark_kafkalog.client import (
    AdminClient,
    Consumer,
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    JSONDeserializer,
    JSONSerializer,
    KeySerializationError,
    MessageField,
    NewTopic,
    Producer,
    Serializer,
    StringDeserializer,
    StringSerializer,
    TopicPartition,
    ValueDeserializationError,
    ValueSerializationError,
)
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    broker = EmbeddedBroker(
        0, zookeeper_connect=f"memory:serde-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b")
    )
    broker.start()
    yield broker.bootstrap_servers
    broker.stop()


def new_topic(bootstrap: str, partitions: int = 1) -> str:
    name = f"serde-{uuid.uuid4().hex[:10]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


def poll_n(consumer: Consumer, n: int) -> list:
    got: list = []
    wait_until(lambda: got.extend(consumer.poll(200, 1000)) or len(got) >= n, 20, f"{n} records")
    return got


class Order:
    def __init__(self, order_id: int, item: str, price: float) -> None:
        self.order_id, self.item, self.price = order_id, item, price


class Versioned(Serializer[Order]):
    """JSON, and a header naming the schema: a user's serializer that uses its context."""

    def __init__(self) -> None:
        self.json = JSONSerializer(lambda order, ctx: vars(order))
        self.topics: list[str] = []

    def __call__(self, obj, ctx=None):
        if obj is None:  # called for a null value too, as confluent-kafka's SerializingProducer calls it
            return None
        self.topics.append(ctx.topic)
        ctx.headers.append(("schema", b"order-v1"))
        return self.json(obj, ctx)


def test_serializer_objects_round_trip_through_our_producer_and_consumer(bootstrap):
    topic = new_topic(bootstrap, 2)
    value_serializer = Versioned()
    with Producer(bootstrap, key_serializer=IntegerSerializer(), value_serializer=value_serializer) as producer:
        for i in range(20):
            producer.send(topic, Order(i, f"itém-{i}", i * 1.5), key=i, headers=[("seq", b"%d" % i)])
        producer.send(topic, None, key=99, headers=[])  # a tombstone: None is not serialized
        producer.flush()
    assert value_serializer.topics == [topic] * 20
    seen_contexts = []

    def from_dict(data, ctx):
        seen_contexts.append((ctx.topic, ctx.field, dict(ctx.headers)["schema"]))
        return Order(**data)

    with Consumer(
        bootstrap,
        auto_offset_reset="earliest",
        key_deserializer=IntegerDeserializer(),
        value_deserializer=JSONDeserializer(from_dict),
    ) as consumer:
        consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        records = poll_n(consumer, 21)
    by_key = {r.key: r for r in records}
    assert sorted(by_key) == [*range(20), 99]
    for i in range(20):
        record = by_key[i]
        assert (record.value.order_id, record.value.item, record.value.price) == (i, f"itém-{i}", i * 1.5)
        assert record.headers == [("seq", b"%d" % i), ("schema", b"order-v1")]
    assert by_key[99].value is None and by_key[99].headers == []
    assert seen_contexts == [(topic, MessageField.VALUE, b"order-v1")] * 20


def test_java_class_names_configure_our_clients_as_kafkas(bootstrap):
    topic = new_topic(bootstrap)
    java = "org.apache.kafka.common.serialization."
    with Producer(
        {
            "bootstrap.servers": bootstrap,
            "key.serializer": java + "StringSerializer",
            "value.serializer": java + "DoubleSerializer",
        }
    ) as producer:
        producer.send(topic, 2.25, key="temperature").result(10)
    with Consumer(
        {
            "bootstrap.servers": bootstrap,
            "auto.offset.reset": "earliest",
            "key.deserializer": java + "StringDeserializer",
            "value.deserializer": java + "DoubleDeserializer",
        }
    ) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        (record,) = poll_n(consumer, 1)
    assert (record.key, record.value) == ("temperature", 2.25)


def test_a_value_the_serializer_refuses_raises_from_send_naming_topic_and_field(bootstrap):
    topic = new_topic(bootstrap)
    with Producer(bootstrap, key_serializer=StringSerializer(), value_serializer=IntegerSerializer()) as producer:
        with pytest.raises(
            ValueSerializationError, match=rf"2147483648 is outside int32.*\(value of topic '{topic}'\)"
        ):
            producer.send(topic, 2**31, key="k")
        with pytest.raises(
            KeySerializationError, match=rf"StringSerializer takes a str, got int \(key of topic '{topic}'\)"
        ):
            producer.send(topic, 1, key=7)
        producer.send(topic, 1, key="k").result(10)
    with Consumer(bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        records = poll_n(consumer, 1)
    assert [(r.key, r.value) for r in records] == [(b"k", b"\x00\x00\x00\x01")]  # only the good record was sent


def test_a_record_the_deserializer_refuses_stops_the_consumer_there_until_it_seeks_past(bootstrap):
    topic = new_topic(bootstrap)
    with Producer(bootstrap) as producer:
        for value in (b"\x00\x00\x00\x01", b"\x00\x00\x00\x02", b"bad", b"\x00\x00\x00\x04"):
            producer.send(topic, value)
    tp = TopicPartition(topic, 0)
    with Consumer(bootstrap, auto_offset_reset="earliest", value_deserializer=IntegerDeserializer()) as consumer:
        consumer.assign([tp])
        got = []
        error = None
        for _ in range(50):
            try:
                got.extend(r.value for r in consumer.poll(200))
            except ValueDeserializationError as e:
                error = e
                break
        assert got == [1, 2]
        assert error is not None, "the bad record raised nothing"
        assert (error.topic, error.partition, error.offset, error.field) == (topic, 0, 2, MessageField.VALUE)
        assert f"(value of topic '{topic}'); record at offset 2 of partition 0" in str(error)
        assert "IntegerDeserializer needs exactly 4 bytes, got 3" in str(error)
        assert consumer.position(tp) == 2
        with pytest.raises(ValueDeserializationError):  # it stays there
            consumer.poll(200)
        consumer.seek(tp, 3)
        assert [r.value for r in poll_n(consumer, 1)] == [4]


def test_records_taken_before_a_bad_record_of_another_partition_are_returned_not_lost(bootstrap):
    topic = new_topic(bootstrap, 2)
    with Producer(bootstrap) as producer:
        for i in range(5):
            producer.send(topic, b"%d" % i, partition=0)
        producer.send(topic, b"\xff", partition=1)
    good, bad = TopicPartition(topic, 0), TopicPartition(topic, 1)
    with Consumer(bootstrap, auto_offset_reset="earliest", value_deserializer=StringDeserializer()) as consumer:
        consumer.assign([good, bad])
        values = []
        errors = []
        for _ in range(50):
            try:
                values.extend(r.value for r in consumer.poll(200))
            except ValueDeserializationError as e:
                errors.append(e)
            if len(values) == 5 and errors:
                break
        assert values == ["0", "1", "2", "3", "4"]
        assert errors and errors[0].partition == 1 and errors[0].offset == 0
        assert consumer.position(good) == 5 and consumer.position(bad) == 0


# --- confluent-kafka's serializing clients on the other side -------------------------------------------


def test_confluent_kafkas_deserializing_consumer_reads_what_our_serializers_wrote(bootstrap):
    topic = new_topic(bootstrap)
    rows = [(i, i / 3, f"naïve-{i}") for i in (-(2**31), -1, 0, 1, 2**31 - 1)]
    with Producer(bootstrap, key_serializer=IntegerSerializer(), value_serializer=DoubleSerializer()) as producer:
        for key, value, text in rows:
            producer.send(topic, value, key=key, headers=[("text", StringSerializer()(text))])
    consumer = DeserializingConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "key.deserializer": ck.IntegerDeserializer(),
            "value.deserializer": ck.DoubleDeserializer(),
        }
    )
    consumer.assign([CKTP(topic, 0, OFFSET_BEGINNING)])
    got = []

    def read() -> bool:
        message = consumer.poll(0.5)
        if message is not None:
            assert message.error() is None, message.error()
            got.append((message.key(), message.value(), ck.StringDeserializer()(dict(message.headers())["text"])))
        return len(got) >= len(rows)

    try:
        wait_until(read, 30, "confluent-kafka to read the records")
    finally:
        consumer.close()
    assert got == rows


def test_our_consumer_reads_what_confluent_kafkas_serializing_producer_wrote(bootstrap):
    topic = new_topic(bootstrap)
    rows = [(i, i * 0.25, f"wört-{i}") for i in (-7, 0, 65536, 2**31 - 1)]
    producer = SerializingProducer(
        {
            "bootstrap.servers": bootstrap,
            "key.serializer": ck.IntegerSerializer(),
            "value.serializer": ck.DoubleSerializer(),
        }
    )
    for key, value, text in rows:
        producer.produce(topic, key=key, value=value, headers=[("text", ck.StringSerializer()(text))])
    assert producer.flush(30) == 0
    with Consumer(
        bootstrap,
        auto_offset_reset="earliest",
        key_deserializer=IntegerDeserializer(),
        value_deserializer=DoubleDeserializer(),
    ) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        records = poll_n(consumer, len(rows))
    assert [(r.key, r.value, StringDeserializer()(dict(r.headers)["text"])) for r in records] == rows


def test_confluent_kafkas_serializer_objects_plug_into_our_clients(bootstrap):
    topic = new_topic(bootstrap)
    with Producer(bootstrap, key_serializer=ck.StringSerializer(), value_serializer=ck.IntegerSerializer()) as producer:
        producer.send(topic, 42, key="answer").result(10)
    with Consumer(
        bootstrap,
        auto_offset_reset="earliest",
        key_deserializer=ck.StringDeserializer(),
        value_deserializer=ck.IntegerDeserializer(),
    ) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        (record,) = poll_n(consumer, 1)
    assert (record.key, record.value) == ("answer", 42)
