"""``value_formats``: decoding and encoding Arrow batches of Spark's Kafka schema with a fake registry
(the real Avro and JSON Schema codecs; the registry client replaced in ``registry_cache``)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from fastavro import parse_schema as fastavro_parse
from fastavro import schemaless_writer

from spark_kafkalog.client.schema_registry import RegisteredSchema, Schema, SchemaRegistryError
from spark_kafkalog.datasource import registry_cache
from spark_kafkalog.datasource.arrow_decode import kafka_schema
from spark_kafkalog.datasource.formats import (
    PERMISSIVE,
    RECORD_NAME,
    TOPIC_RECORD_NAME,
    ColumnFormat,
    ReadFormats,
    RegistrySettings,
    WriteFormats,
)
from spark_kafkalog.datasource.options import KafkaOptionError
from spark_kafkalog.datasource.value_formats import (
    CORRUPT_RECORD_TYPE,
    FormatDecoder,
    FormatEncoder,
    RecordDecodeError,
    SchemaWriteError,
    prepare_write_formats,
    read_arrow_schema,
    resolve_read_formats,
)
from spark_kafkalog.schemas import AVRO, JSON, parse_schema
from spark_kafkalog.schemas.wire_format import frame, unframe

V1 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [{"name": "id", "type": "long"}]}
V2 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"], "default": None}],
}


class FakeRegistry:
    """What ``value_formats`` asks of ``SchemaRegistryClient``: schemas by id, versions, registrations."""

    def __init__(self) -> None:
        self.schemas: dict[int, Schema] = {}
        self.subjects: dict[str, list[int]] = {}
        self.refuse: dict[str, str] = {}
        self.calls: list[str] = []

    def add(self, subject: str, text: str, schema_type: str = AVRO) -> int:
        same = [i for i, schema in self.schemas.items() if schema.schema_str == text]
        schema_id = same[0] if same else len(self.schemas) + 1
        self.schemas[schema_id] = Schema(text, schema_type)
        versions = self.subjects.setdefault(subject, [])
        if schema_id not in versions:
            versions.append(schema_id)
        return schema_id

    def parsed(self, schema_id: int):
        self.calls.append(f"parsed {schema_id}")
        schema = self.schemas.get(schema_id)
        if schema is None:
            raise SchemaRegistryError(404, 40403, f"Schema {schema_id} not found")
        return parse_schema(schema.schema_type, schema.schema_str)

    def clear_latest_caches(self) -> None:
        pass

    def get_version(self, subject: str, version: int | str) -> RegisteredSchema:
        versions = self.subjects.get(subject)
        if not versions:
            raise SchemaRegistryError(404, 40401, f"Subject '{subject}' not found.")
        index = -1 if version == "latest" else int(version) - 1
        if index >= len(versions):
            raise SchemaRegistryError(404, 40402, f"Version {version} not found.")
        schema_id = versions[index]
        return RegisteredSchema(schema_id, self.schemas[schema_id], subject, index + 1)

    def get_latest_version(self, subject: str) -> RegisteredSchema:
        return self.get_version(subject, "latest")

    def register_schema(self, subject: str, schema: Schema, normalize_schemas: bool = False) -> int:
        self.calls.append(f"register {subject}")
        if subject in self.refuse:
            raise SchemaRegistryError(409, 409, self.refuse[subject])
        return self.add(subject, schema.schema_str, schema.schema_type)

    def lookup_schema(self, subject: str, schema: Schema, normalize_schemas: bool = False) -> RegisteredSchema:
        self.calls.append(f"lookup {subject}")
        for schema_id in self.subjects.get(subject, []):
            registered = self.schemas[schema_id]
            if canonical(registered) == canonical(schema):  # the registry compares canonical forms
                return RegisteredSchema(schema_id, self.schemas[schema_id], subject)
        raise SchemaRegistryError(404, 40403, "Schema not found")


def canonical(schema: Schema) -> str:
    return parse_schema(schema.schema_type, schema.schema_str).canonical


SETTINGS = RegistrySettings((("url", "http://fake:8081"),), ("http://fake:8081",))


@pytest.fixture
def registry():
    registry_cache.clear()
    fake = FakeRegistry()
    registry_cache._clients[SETTINGS.cache_key] = fake  # type: ignore[assignment]  # the fake stands in
    yield fake
    registry_cache.clear()


def avro_bytes(schema: dict, value: dict) -> bytes:
    import io

    out = io.BytesIO()
    schemaless_writer(out, fastavro_parse(schema), value)
    return out.getvalue()


def kafka_batch(values: list[bytes | None], keys: list[bytes | None] | None = None) -> pa.RecordBatch:
    n = len(values)
    columns: list[Any] = [
        pa.array(keys or [None] * n, pa.binary()),
        pa.array(values, pa.binary()),
        pa.array(["t"] * n, pa.string()),
        pa.array([0] * n, pa.int32()),
        pa.array(range(10, 10 + n), pa.int64()),
        pa.array([0] * n, pa.timestamp("us", tz="UTC")),
        pa.array([0] * n, pa.int32()),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=kafka_schema(False))


def read_formats(**kwargs: Any) -> ReadFormats:
    return ReadFormats(SETTINGS, value=ColumnFormat("value", AVRO, subject="t-value"), **kwargs)


# -- reading --------------------------------------------------------------------------------------------------


def test_resolve_pins_the_latest_version_and_the_arrow_schema_follows_the_reader(registry):
    registry.add("t-value", json.dumps(V1))
    v2 = registry.add("t-value", json.dumps(V2))
    resolved = resolve_read_formats(read_formats())
    assert resolved.value is not None and resolved.value.schema_id == v2
    schema = read_arrow_schema(resolved, include_headers=False)
    assert schema.field("value").type == pa.struct([pa.field("id", pa.int64(), nullable=False), ("note", pa.string())])
    assert schema.names == kafka_schema(False).names
    permissive = read_arrow_schema(resolve_read_formats(read_formats(mode=PERMISSIVE)), include_headers=True)
    assert permissive.names[-2:] == ["headers", "_corrupt_record"]
    assert permissive.field("_corrupt_record").type == CORRUPT_RECORD_TYPE


@pytest.mark.parametrize(
    ("column", "message"),
    [
        (ColumnFormat("value", AVRO, subject="nope-value"), "subject 'nope-value' version latest"),
        (ColumnFormat("value", AVRO, subject="t-value", version=7), "Version 7 not found"),
        (ColumnFormat("value", AVRO, schema_id=99), "schema id 99"),
        (ColumnFormat("value", JSON, subject="t-value"), "is AVRO, but option 'valueFormat' says json-schema"),
    ],
)
def test_resolve_errors_name_the_reader_schema(registry, column, message):
    registry.add("t-value", json.dumps(V1))
    with pytest.raises(KafkaOptionError) as e:
        resolve_read_formats(ReadFormats(SETTINGS, value=column))
    assert message in str(e.value)


def test_records_of_old_and_new_writer_schemas_decode_into_the_readers_type(registry):
    v1 = registry.add("t-value", json.dumps(V1))
    v2 = registry.add("t-value", json.dumps(V2))
    values = [
        frame(v1, avro_bytes(V1, {"id": 1})),
        None,
        frame(v2, avro_bytes(V2, {"id": 2, "note": "x"})),
        frame(v1, avro_bytes(V1, {"id": 3})),
    ]
    decoder = FormatDecoder(resolve_read_formats(read_formats()))
    out = decoder.decode(kafka_batch(values))
    assert out.column("value").to_pylist() == [
        {"id": 1, "note": None},
        None,
        {"id": 2, "note": "x"},
        {"id": 3, "note": None},
    ]
    assert out.column("offset").to_pylist() == [10, 11, 12, 13]
    decoder.decode(kafka_batch(values))
    assert registry.calls.count(f"parsed {v1}") == 1  # writer schemas are fetched once per process


def test_failfast_names_topic_partition_offset_and_schema_id(registry):
    v1 = registry.add("t-value", json.dumps(V1))
    decoder = FormatDecoder(resolve_read_formats(read_formats()))
    good = frame(v1, avro_bytes(V1, {"id": 1}))
    with pytest.raises(RecordDecodeError) as e:
        decoder.decode(kafka_batch([good, frame(v1, b"\x80")]))
    assert "topic 't' partition 0 offset 11 (schema id 1)" in str(e.value) and "PERMISSIVE" in str(e.value)
    with pytest.raises(RecordDecodeError, match="offset 10 .*magic byte"):
        decoder.decode(kafka_batch([b"\x01\x00\x00\x00\x01x"]))
    with pytest.raises(RecordDecodeError, match="no schema with id 77"):
        decoder.decode(kafka_batch([frame(77, b"")]))


def test_permissive_nulls_the_column_and_keeps_the_raw_record(registry):
    v1 = registry.add("t-value", json.dumps(V1))
    json_id = registry.add("other", json.dumps({"type": "object"}), JSON)
    decoder = FormatDecoder(resolve_read_formats(read_formats(mode=PERMISSIVE, corrupt_column="bad")))
    values = [frame(v1, avro_bytes(V1, {"id": 5})), b"xy", frame(v1, b"\x80"), frame(json_id, b"{}"), None]
    keys = [b"k0", b"k1", None, b"k3", b"k4"]
    out = decoder.decode(kafka_batch(values, keys))
    assert out.column("value").to_pylist() == [{"id": 5}, None, None, None, None]
    bad = out.column("bad").to_pylist()
    assert bad[0] is None and bad[4] is None
    assert bad[1]["key"] == b"k1" and bad[1]["value"] == b"xy" and "too short" in bad[1]["error"]
    assert bad[2]["key"] is None and bad[2]["error"].startswith(f"value (schema id {v1}): ")
    assert f"writer schema id {json_id} is JSON, not AVRO" in bad[3]["error"]


def test_a_registry_failure_is_not_record_corruption(registry):
    registry.add("t-value", json.dumps(V1))
    decoder = FormatDecoder(resolve_read_formats(read_formats(mode=PERMISSIVE)))

    def down(schema_id: int):
        raise SchemaRegistryError(-1, -1, "connection refused")

    registry.parsed = down
    with pytest.raises(SchemaRegistryError, match="connection refused"):
        decoder.decode(kafka_batch([frame(555, b"")]))


# -- writing --------------------------------------------------------------------------------------------------


def write_formats(**kwargs: Any) -> WriteFormats:
    column = kwargs.pop("value", ColumnFormat("value", AVRO))
    return WriteFormats(SETTINGS, value=column, **kwargs)


def writable(values: list[Any], value_type: pa.DataType, topics: list[str] | None = None) -> pa.RecordBatch:
    arrays = [pa.array(values, value_type)]
    names = ["value"]
    if topics is not None:
        arrays.append(pa.array(topics, pa.string()))
        names.append("topic")
    return pa.RecordBatch.from_arrays(arrays, names=names)


STRUCT = pa.struct([("id", pa.int64()), ("name", pa.string())])


def test_prepare_derives_the_schema_and_registers_it_under_the_topic_subject(registry):
    prepared = prepare_write_formats(write_formats(record_name="Thing", record_namespace="ns"), {"value": STRUCT}, "t")
    assert prepared.value is not None and prepared.value.schema is not None
    schema = json.loads(prepared.value.schema)
    assert (schema["name"], schema["namespace"]) == ("Thing", "ns")
    assert registry.calls == ["register t-value"]
    out = FormatEncoder(prepared).encode(writable([{"id": 1, "name": "a"}, None], STRUCT), "t")
    framed = out.column("value").to_pylist()
    assert framed[1] is None
    schema_id, _, payload = unframe(framed[0])
    assert schema_id == registry.subjects["t-value"][0]
    decoded = FormatDecoder(ReadFormats(SETTINGS, value=ColumnFormat("value", AVRO, schema_id=schema_id)))
    assert decoded.decode(kafka_batch([framed[0]])).column("value").to_pylist() == [{"id": 1, "name": "a"}]


def test_topic_column_rows_get_each_topics_subject_and_strategies_name_subjects(registry):
    prepared = prepare_write_formats(write_formats(), {"value": STRUCT}, None)
    assert registry.calls == []  # no topic option: subjects are known only in the tasks
    batch = writable([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], STRUCT, ["a", "b"])
    FormatEncoder(prepared).encode(batch, None)
    assert sorted(registry.subjects) == ["a-value", "b-value"]

    for strategy, subject in ((RECORD_NAME, "ns.R"), (TOPIC_RECORD_NAME, "t-ns.R")):
        column = ColumnFormat("value", AVRO, strategy=strategy)
        prepare_write_formats(
            write_formats(value=column, record_name="R", record_namespace="ns"), {"value": STRUCT}, "t"
        )
        assert subject in registry.subjects


def test_refusals_name_the_subject_and_the_registrys_message(registry):
    registry.refuse["t-value"] = "Schema being registered is incompatible with an earlier schema"
    with pytest.raises(SchemaWriteError, match="subject 't-value' refused the writer schema: Schema being registered"):
        prepare_write_formats(write_formats(), {"value": STRUCT}, "t")
    with pytest.raises(SchemaWriteError, match="holds no version matching .* auto.register.schemas is false"):
        prepare_write_formats(write_formats(auto_register=False), {"value": STRUCT}, "u")
    with pytest.raises(SchemaWriteError, match="has no latest version"):
        prepare_write_formats(write_formats(use_latest_version=True), {"value": STRUCT}, "u")
    with pytest.raises(KafkaOptionError, match="Cannot make a avro writer schema of option 'valueSchema'"):
        prepare_write_formats(write_formats(value=ColumnFormat("value", AVRO, schema="{nope")), {}, "t")


def test_lookup_and_latest_version_write_with_the_registered_id(registry):
    text = json.dumps(V1)
    schema_id = registry.add("t-value", text)
    explicit = ColumnFormat("value", AVRO, schema=text)
    prepared = prepare_write_formats(write_formats(value=explicit, auto_register=False), {}, "t")
    out = FormatEncoder(prepared).encode(writable([{"id": 9}], pa.struct([("id", pa.int64())])), "t")
    assert unframe(out.column("value")[0].as_py())[0] == schema_id
    assert "lookup t-value" in registry.calls and not any(c.startswith("register") for c in registry.calls)
    latest = prepare_write_formats(write_formats(use_latest_version=True), {"value": STRUCT}, "t")
    assert latest.value is not None and latest.value.schema_id == schema_id  # pinned for the tasks
    registry.add("t-value", json.dumps(V2))  # a version registered after save() does not change the tasks' id
    out = FormatEncoder(latest).encode(writable([{"id": 4}], pa.struct([("id", pa.int64())])), "t")
    assert unframe(out.column("value")[0].as_py())[0] == schema_id


def test_a_value_that_does_not_fit_the_writer_schema_names_its_row(registry):
    bad = pa.RecordBatch.from_arrays([pa.array([{"id": 1, "name": "a"}, {"id": None, "name": "b"}], STRUCT)], ["value"])
    explicit = ColumnFormat("value", AVRO, schema=json.dumps(V1))
    prepared = prepare_write_formats(write_formats(value=explicit), {}, "t")
    with pytest.raises(SchemaWriteError, match="row 1 of this batch"):
        FormatEncoder(prepared).encode(bad, "t")


@pytest.mark.parametrize("offset", [0, 1, 3])
def test_frames_are_split_alike_in_sliced_batches_with_nulls_short_values_and_several_ids(registry, offset):
    v1 = registry.add("t-value", json.dumps(V1))
    v2 = registry.add("t-value", json.dumps(V2))
    values = [
        frame(v1, avro_bytes(V1, {"id": 0})),
        b"",
        frame(v2, avro_bytes(V2, {"id": 2, "note": "b"})),
        None,
        b"\x00\x00\x00",
        frame(v1, avro_bytes(V1, {"id": 5})),
        b"\x02" + frame(v1, b"")[1:],
        frame(v2, avro_bytes(V2, {"id": 7, "note": None})),
    ]
    decoder = FormatDecoder(resolve_read_formats(read_formats(mode=PERMISSIVE)))
    out = decoder.decode(kafka_batch(values).slice(offset))
    expected: list[Any] = [
        {"id": 0, "note": None},
        None,
        {"id": 2, "note": "b"},
        None,
        None,
        {"id": 5, "note": None},
        None,
        {"id": 7, "note": None},
    ]
    assert out.column("value").to_pylist() == expected[offset:]
    bad = out.column("_corrupt_record").to_pylist()
    failed = {i + offset: b["error"] for i, b in enumerate(bad) if b is not None}
    assert sorted(failed) == [r for r in (1, 4, 6) if r >= offset]
    assert all("too short" in failed[r] for r in (1, 4) if r in failed)
    assert 6 not in failed or "magic byte 2" in failed[6]
