"""``valueFormat`` / ``keyFormat`` through Spark (local[2]) against a broker serving kafkalog's Schema Registry.

One broker with the registry serves this module (its own in-memory ZooKeeper registry); each test uses its
own topics, so the default subjects ``<topic>-value`` / ``<topic>-key`` do not meet. Records are produced by
kafkalog's Spark sink and by confluent-kafka's own serializers, and read back both ways.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer as CKConsumer
from confluent_kafka import Producer as CKProducer
from confluent_kafka.schema_registry import Schema as CKSchema
from confluent_kafka.schema_registry import SchemaRegistryClient as CKRegistry
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from pyspark.sql import Row
from pyspark.sql import functions as F

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, NewTopic, Producer
from spark_kafkalog.datasource import registry_cache
from spark_kafkalog.schemas.wire_format import frame, unframe

pytestmark = pytest.mark.integration

_names = itertools.count()

ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
}
ORDER_V2 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {"name": "qty", "type": "int", "default": 1},
    ],
}


@pytest.fixture(scope="module")
def sr(tmp_path_factory):
    """``(bootstrap, registry URL)`` of one broker serving the registry."""
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:vf-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("vf-broker"),
        schema_registry_listeners="http://127.0.0.1:0",
    )
    broker.start()
    try:
        url = broker.wait_schema_registry()  # its _schemas topic created and read
        assert url, "the broker reports no Schema Registry URL"
        yield broker.bootstrap_servers, url
    finally:
        broker.stop()
        registry_cache.clear()


@pytest.fixture
def topic(sr, request):
    bootstrap, _ = sr
    name = f"vf-{request.node.name[:40].replace('[', '-').replace(']', '')}-{next(_names)}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, 2, 1, {})])
    return name


def read(spark, sr, topic, **options):
    bootstrap, url = sr
    r = spark.read.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    if "valueFormat" in options or "keyFormat" in options:
        r = r.option("schema.registry.url", url)
    for key, value in options.items():
        r = r.option(key.replace("__", "."), str(value))
    return r.load()


def write(df, sr, topic, **options):
    bootstrap, url = sr
    w = (
        df.write.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("schema.registry.url", url)
    )
    for key, value in options.items():
        w = w.option(key.replace("__", "."), str(value))
    w.mode("append").save()


def ck_produce(sr, topic, serializer, values, key_serializer=None, keys=None):
    bootstrap, _ = sr
    producer = CKProducer({"bootstrap.servers": bootstrap})
    for i, value in enumerate(values):
        key = None
        if key_serializer is not None and keys is not None:
            key = key_serializer(keys[i], SerializationContext(topic, MessageField.KEY))
        producer.produce(topic, value=serializer(value, SerializationContext(topic, MessageField.VALUE)), key=key)
    assert producer.flush(30) == 0


def ck_consume(sr, topic, n):
    bootstrap, _ = sr
    consumer = CKConsumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    out: list = []
    try:
        for _ in range(200):
            if len(out) >= n:
                break
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                out.append(msg)
    finally:
        consumer.close()
    assert len(out) == n, f"consumed {len(out)} of {n} records"
    return out


# -- Avro ---------------------------------------------------------------------------------------------------


def test_avro_write_then_read_round_trip_registers_the_derived_schema_under_the_topic_subject(spark, sr, topic):
    rows = [(f"k{i}", i, f"item-{i}", None if i % 3 == 0 else float(i) / 2) for i in range(50)]
    df = spark.createDataFrame(rows, "k string, id long, item string, price double").select(
        F.col("k").alias("key"), F.struct("id", "item", "price").alias("value")
    )
    write(df, sr, topic, valueFormat="avro")

    registry = CKRegistry({"url": sr[1]})
    latest = registry.get_latest_version(f"{topic}-value")
    assert latest.schema.schema_str is not None
    schema = json.loads(latest.schema.schema_str)
    assert schema["name"] == "topLevelRecord"
    assert [f["name"] for f in schema["fields"]] == ["id", "item", "price"]

    got = read(spark, sr, topic, valueFormat="avro")
    assert got.schema["value"].dataType.simpleString() == "struct<id:bigint,item:string,price:double>"
    actual = sorted((r.key.decode(), r.value.id, r.value.item, r.value.price) for r in got.collect())
    assert actual == sorted(rows)
    raw = read(spark, sr, topic).select("value").collect()
    assert {unframe(r.value)[0] for r in raw} == {latest.schema_id}


def test_records_written_by_confluent_kafkas_avro_serializer_read_as_struct_columns(spark, sr, topic):
    registry = CKRegistry({"url": sr[1]})
    serializer = AvroSerializer(registry, json.dumps(ORDER_V1))
    key_serializer = AvroSerializer(registry, '"string"')
    orders = [{"id": i, "item": f"i{i}"} for i in range(20)]
    ck_produce(sr, topic, serializer, orders, key_serializer, [f"c{i % 4}" for i in range(20)])

    got = read(spark, sr, topic, valueFormat="avro", keyFormat="avro")
    assert got.schema["key"].dataType.simpleString() == "string"
    assert got.schema["value"].dataType.simpleString() == "struct<id:bigint,item:string>"
    actual = sorted((r.key, r.value.id, r.value.item) for r in got.collect())
    assert actual == sorted((f"c{i % 4}", i, f"i{i}") for i in range(20))


def test_records_spark_wrote_read_by_confluent_kafkas_avro_deserializer(spark, sr, topic):
    df = spark.createDataFrame([(i, f"n{i}", dt.date(2024, 1, 1 + i)) for i in range(5)], "id int, name string, d date")
    write(df.select(F.struct("id", "name", "d").alias("value")), sr, topic, valueFormat="avro", recordName="Person")
    deserializer = AvroDeserializer(CKRegistry({"url": sr[1]}))
    values = [
        deserializer(m.value(), SerializationContext(topic, MessageField.VALUE)) for m in ck_consume(sr, topic, 5)
    ]
    assert sorted(values, key=lambda v: v["id"]) == [
        {"id": i, "name": f"n{i}", "d": dt.date(2024, 1, 1 + i)} for i in range(5)
    ]


def test_old_records_are_read_with_the_latest_schema_after_a_compatible_evolution(spark, sr, topic):
    registry = CKRegistry({"url": sr[1]})
    ck_produce(sr, topic, AvroSerializer(registry, json.dumps(ORDER_V1)), [{"id": 1, "item": "old"}])
    ck_produce(sr, topic, AvroSerializer(registry, json.dumps(ORDER_V2)), [{"id": 2, "item": "new", "qty": 5}])
    assert registry.get_versions(f"{topic}-value") == [1, 2]

    latest = read(spark, sr, topic, valueFormat="avro")
    assert latest.schema["value"].dataType.simpleString() == "struct<id:bigint,item:string,qty:int>"
    assert sorted(tuple(r.value) for r in latest.collect()) == [(1, "old", 1), (2, "new", 5)]
    pinned = read(spark, sr, topic, valueFormat="avro", valueSchemaVersion=1)
    assert sorted(tuple(r.value) for r in pinned.collect()) == [(1, "old"), (2, "new")]


def test_failfast_names_the_record_and_permissive_keeps_it_in_the_corrupt_record_column(spark, sr, topic):
    registry = CKRegistry({"url": sr[1]})
    ck_produce(sr, topic, AvroSerializer(registry, json.dumps(ORDER_V1)), [{"id": 7, "item": "ok"}])
    schema_id = registry.get_latest_version(f"{topic}-value").schema_id
    assert schema_id is not None
    with Producer(sr[0]) as producer:
        producer.send(topic, b"not framed", b"k1", partition=0)
        producer.send(topic, frame(schema_id, b"\xff\xff\xff"), b"k2", partition=0)  # truncated payload
        producer.send(topic, frame(999_999, b"\x02"), b"k3", partition=0)  # unknown schema id
        producer.send(topic, None, b"tombstone", partition=0)
        producer.flush()

    with pytest.raises(Exception) as failed:
        read(spark, sr, topic, valueFormat="avro").collect()
    text = str(failed.value)
    assert f"topic '{topic}' partition 0 offset" in text and "PERMISSIVE" in text

    got = read(spark, sr, topic, valueFormat="avro", mode="PERMISSIVE")
    assert got.schema["_corrupt_record"].dataType.simpleString() == "struct<error:string,key:binary,value:binary>"
    rows = {(r.key or b"").decode(): r for r in got.collect()}
    assert len(rows) == 5
    good = [r for r in rows.values() if r.value is not None]
    assert [tuple(r.value) for r in good] == [(7, "ok")] and good[0]._corrupt_record is None
    assert rows["tombstone"].value is None and rows["tombstone"]._corrupt_record is None
    assert "magic byte" in rows["k1"]._corrupt_record.error and rows["k1"]._corrupt_record.value == b"not framed"
    assert f"schema id {schema_id}" in rows["k2"]._corrupt_record.error
    assert "999999" in rows["k3"]._corrupt_record.error and rows["k3"].value is None
    assert rows["k3"]._corrupt_record.key == b"k3"


# -- JSON Schema and Protobuf -------------------------------------------------------------------------------


def test_json_schema_round_trip_and_confluent_kafkas_json_serializer_records(spark, sr, topic):
    df = spark.createDataFrame([(i, f"t{i}", [i, i + 1]) for i in range(10)], "id long, tag string, xs array<long>")
    write(df.select(F.struct("id", "tag", "xs").alias("value")), sr, topic, valueFormat="json-schema")
    schema_text = CKRegistry({"url": sr[1]}).get_latest_version(f"{topic}-value").schema.schema_str
    serializer = JSONSerializer(schema_text, CKRegistry({"url": sr[1]}), conf={"auto.register.schemas": False})
    ck_produce(sr, topic, serializer, [{"id": 100, "tag": "ck", "xs": [1]}])

    got = read(spark, sr, topic, valueFormat="json-schema")
    assert got.schema["value"].dataType.simpleString() == "struct<id:bigint,tag:string,xs:array<bigint>>"
    actual = sorted((r.value.id, r.value.tag, list(r.value.xs)) for r in got.collect())
    assert actual == [(i, f"t{i}", [i, i + 1]) for i in range(10)] + [(100, "ck", [1])]
    deserializer = JSONDeserializer(None, schema_registry_client=CKRegistry({"url": sr[1]}))
    decoded = [
        deserializer(m.value(), SerializationContext(topic, MessageField.VALUE)) for m in ck_consume(sr, topic, 11)
    ]
    assert {d["id"] for d in decoded} == set(range(10)) | {100}


def test_protobuf_round_trip_with_a_derived_schema(spark, sr, topic):
    df = spark.createDataFrame([(i, f"p{i}") for i in range(8)], "id long, name string")
    write(df.select(F.struct("id", "name").alias("value")), sr, topic, valueFormat="protobuf", recordName="Thing")
    got = read(spark, sr, topic, valueFormat="protobuf")
    assert got.schema["value"].dataType.simpleString() == "struct<id:bigint,name:string>"
    assert sorted(tuple(r.value) for r in got.collect()) == [(i, f"p{i}") for i in range(8)]
    raw = read(spark, sr, topic).select("value").collect()
    assert all(unframe(r.value, protobuf=True)[1] == (0,) for r in raw)


# -- writing: strategies, refusals --------------------------------------------------------------------------


def test_record_name_strategy_registers_under_the_records_full_name(spark, sr, topic):
    df = spark.createDataFrame([Row(id=1)]).select(F.struct("id").alias("value"))
    namespace = f"ns{uuid.uuid4().hex[:6]}"
    write(
        df,
        sr,
        topic,
        valueFormat="avro",
        value__subject__name__strategy="io.confluent.kafka.serializers.subject.RecordNameStrategy",
        recordName="Thing",
        recordNamespace=namespace,
    )
    subjects = CKRegistry({"url": sr[1]}).get_subjects()
    assert f"{namespace}.Thing" in subjects and f"{topic}-value" not in subjects


def test_an_incompatible_writer_schema_is_refused_naming_the_subject(spark, sr, topic):
    CKRegistry({"url": sr[1]}).register_schema(f"{topic}-value", CKSchema(json.dumps(ORDER_V1), "AVRO"))
    df = spark.createDataFrame([Row(id="x")]).select(F.struct("id").alias("value"))
    with pytest.raises(Exception) as refused:
        write(df, sr, topic, valueFormat="avro")
    assert f"subject '{topic}-value' refused the writer schema" in str(refused.value)

    with pytest.raises(Exception) as missing:
        write(df, sr, topic, valueFormat="avro", auto__register__schemas="false")
    assert f"subject '{topic}-value' holds no version matching the writer schema" in str(missing.value)


def test_use_latest_version_writes_with_the_registered_schema(spark, sr, topic):
    registry = CKRegistry({"url": sr[1]})
    schema_id = registry.register_schema(f"{topic}-value", CKSchema(json.dumps(ORDER_V1), "AVRO"))
    df = spark.createDataFrame([Row(id=3, item="z")], "id long, item string").select(
        F.struct("id", "item").alias("value")
    )
    write(df, sr, topic, valueFormat="avro", use__latest__version="true", auto__register__schemas="false")
    [msg] = ck_consume(sr, topic, 1)
    assert unframe(msg.value())[0] == schema_id
    assert AvroDeserializer(registry)(msg.value(), SerializationContext(topic, MessageField.VALUE)) == {
        "id": 3,
        "item": "z",
    }


# -- option errors reaching Spark ---------------------------------------------------------------------------


def test_a_missing_subject_fails_at_load_naming_it(spark, sr, topic):
    with pytest.raises(Exception) as failed:
        read(spark, sr, topic, valueFormat="avro")
    assert f"subject '{topic}-value' version latest" in str(failed.value)


def test_streaming_read_decodes_values(spark, sr, topic, tmp_path):
    registry = CKRegistry({"url": sr[1]})
    ck_produce(sr, topic, AvroSerializer(registry, json.dumps(ORDER_V1)), [{"id": i, "item": "s"} for i in range(6)])
    bootstrap, url = sr
    stream = (
        spark.readStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("schema.registry.url", url)
        .option("valueFormat", "avro")
        .load()
    )
    name = f"vf_stream_{next(_names)}"
    query = (
        stream.select("value.id", "value.item")
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert sorted(tuple(r) for r in spark.table(name).collect()) == [(i, "s") for i in range(6)]


def _order_class(package: str) -> Any:
    """A generated-like message class ``<package>.Order`` (a ``Line`` first, so Order is message index 1)."""
    t = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name=f"{package.replace('.', '/')}/order.proto", package=package)
    fdp.syntax = "proto3"
    line = fdp.message_type.add(name="Line")
    line.field.add(name="sku", number=1, type=t.TYPE_STRING, label=t.LABEL_OPTIONAL)
    order = fdp.message_type.add(name="Order")
    order.field.add(name="id", number=1, type=t.TYPE_INT64, label=t.LABEL_OPTIONAL)
    order.field.add(name="tags", number=2, type=t.TYPE_STRING, label=t.LABEL_REPEATED)
    order.field.add(name="lines", number=3, type=t.TYPE_MESSAGE, label=t.LABEL_REPEATED, type_name=f".{package}.Line")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Order"))


def test_records_written_by_confluent_kafkas_protobuf_serializer_read_as_struct_columns(spark, sr, topic):
    package = f"vf.p{uuid.uuid4().hex[:8]}"
    order_cls = _order_class(package)
    orders = [order_cls(id=i, tags=[f"t{i}"] if i else []) for i in range(4)]
    orders[1].lines.add(sku="s-1")
    serializer = ProtobufSerializer(order_cls, CKRegistry({"url": sr[1]}), {"use.deprecated.format": False})
    ck_produce(sr, topic, serializer, orders)

    got = read(spark, sr, topic, valueFormat="protobuf", valueProtobufMessage=f"{package}.Order")
    assert (
        got.schema["value"].dataType.simpleString()
        == "struct<id:bigint,tags:array<string>,lines:array<struct<sku:string>>>"
    )
    # proto3 scalars at their default (id 0) are null, as from_protobuf's emit.default.values=false; empty
    # repeated fields are the codec's choice (empty or null): both read as empty here
    actual = sorted(
        ((r.value.id or 0), list(r.value.tags or []), [tuple(x) for x in r.value.lines or []]) for r in got.collect()
    )
    assert actual == [(0, [], []), (1, ["t1"], [("s-1",)]), (2, ["t2"], []), (3, ["t3"], [])]
    assert sum(r.value.id is None for r in got.collect()) == 1


def test_exactly_once_and_stream_writes_encode_values_too(spark, sr, topic, tmp_path):
    bootstrap, url = sr
    df = spark.createDataFrame([(i, f"e{i}") for i in range(4)], "id long, item string")
    write(df.select(F.struct("id", "item").alias("value")), sr, topic, valueFormat="avro", exactlyOnce="true")

    source = (
        spark.readStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("schema.registry.url", url)
        .option("valueFormat", "avro")
        .load()
    )
    copy = f"{topic}-copy"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(copy, 1, 1, {})])
    query = (
        source.select(F.struct((F.col("value.id") * 10).alias("id10")).alias("value"))
        .writeStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", copy)
        .option("schema.registry.url", url)
        .option("valueFormat", "avro")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    committed = read(spark, sr, topic, valueFormat="avro", kafka__isolation__level="read_committed")
    assert sorted(tuple(r.value) for r in committed.collect()) == [(i, f"e{i}") for i in range(4)]
    copied = read(spark, sr, copy, valueFormat="avro")
    assert copied.schema["value"].dataType.simpleString() == "struct<id10:bigint>"
    assert sorted(r.value.id10 for r in copied.collect()) == [0, 10, 20, 30]
