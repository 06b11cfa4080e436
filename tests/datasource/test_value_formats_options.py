"""The Schema Registry format options of ``format("kafkalog")`` (pure: no Spark, no registry)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from spark_kafkalog.datasource.formats import FAILFAST, PERMISSIVE, RECORD_NAME, TOPIC_NAME, TOPIC_RECORD_NAME
from spark_kafkalog.datasource.options import (
    KafkaOptionError,
    parse_read_formats_only,
    parse_sink_options,
    parse_source_options,
)
from spark_kafkalog.datasource.stream_options import parse_stream_options, parse_stream_sink_options
from spark_kafkalog.schemas import AVRO, JSON, PROTOBUF

URL = "http://registry:8081"
BASE = {"kafka.bootstrap.servers": "b:9092", "subscribe": "orders"}
SINK = {"kafka.bootstrap.servers": "b:9092", "topic": "orders"}


def read(**options: str) -> Any:
    return parse_source_options({**BASE, **{k.replace("__", "."): v for k, v in options.items()}}).formats


def write(**options: str) -> Any:
    return parse_sink_options({**SINK, **{k.replace("__", "."): v for k, v in options.items()}}).formats


def formats_of(options: Any) -> Any:
    return options.formats


def formats_of_only(options: dict) -> Any:
    return parse_read_formats_only(options)


def test_raw_is_the_default_and_gives_no_formats():
    assert read() is None
    assert read(valueFormat="raw", keyFormat="RAW") is None
    assert write() is None


@pytest.mark.parametrize(
    ("given", "schema_type"), [("avro", AVRO), ("AVRO", AVRO), ("json-schema", JSON), ("Protobuf", PROTOBUF)]
)
def test_format_names_map_to_the_registrys_schema_types(given, schema_type):
    formats = read(valueFormat=given, schema__registry__url=URL)
    assert formats.value.schema_type == schema_type and formats.key is None


def test_read_defaults_subject_latest_version_and_failfast():
    formats = read(valueFormat="avro", keyFormat="avro", schema__registry__url=URL)
    assert (formats.value.subject, formats.value.version, formats.value.schema_id) == ("orders-value", "latest", None)
    assert formats.key.subject == "orders-key"
    assert formats.mode == FAILFAST and formats.corrupt_column == "_corrupt_record"
    assert formats.registry.client_conf() == {"url": URL}


def test_assign_of_one_topic_also_defaults_the_subject():
    options = {"kafka.bootstrap.servers": "b:9092", "assign": '{"t1":[0,1]}', "valueFormat": "avro"}
    formats = formats_of(parse_source_options({**options, "schema.registry.url": URL}))
    assert formats.value.subject == "t1-value"


def test_option_keys_are_case_insensitive_and_pins_are_kept():
    formats = read(
        VALUEFORMAT="avro",
        SCHEMA__REGISTRY__URL=URL,
        valuesubject="s1",
        ValueSchemaVersion="3",
        mode="permissive",
        columnNameOfCorruptRecord="bad",
    )
    assert (formats.value.subject, formats.value.version) == ("s1", 3)
    assert formats.mode == PERMISSIVE and formats.corrupt_column == "bad"
    assert read(valueFormat="avro", schema__registry__url=URL, valueSchemaId="42").value.schema_id == 42


def test_registry_settings_pass_through_without_the_prefix_and_stay_out_of_reprs():
    options = {
        **BASE,
        "valueFormat": "avro",
        "schema.registry.url": "https://alice:s3cret-url@registry:8081",
        "schema.registry.basic.auth.user.info": "bob:s3cret-info",
        "schema.registry.ssl.key.password": "s3cret-key",
        "schema.registry.ssl.ca.location": "/ca.pem",
    }
    parsed = parse_source_options(options)
    conf = formats_of(parsed).registry.client_conf()
    assert conf["basic.auth.user.info"] == "bob:s3cret-info" and conf["ssl.ca.location"] == "/ca.pem"
    assert conf["url"] == "https://alice:s3cret-url@registry:8081"
    shown = repr(parsed) + repr(parsed.formats) + repr(parse_stream_options(options))
    assert "s3cret" not in shown and "https://registry:8081" in shown
    assert pickle.loads(pickle.dumps(parsed)) == parsed


def test_a_stream_read_carries_the_formats():
    formats = formats_of(parse_stream_options({**BASE, "valueFormat": "protobuf", "schema.registry.url": URL}).source)
    assert formats.value.schema_type == PROTOBUF and formats.value.subject == "orders-value"


def test_parse_read_formats_only_ignores_the_batch_rules():
    options = {**BASE, "startingOffsets": "latest", "valueFormat": "avro", "schema.registry.url": URL}
    assert formats_of_only(options).value.subject == "orders-value"
    assert parse_read_formats_only(BASE) is None


def test_write_defaults_and_settings():
    formats = write(valueFormat="avro", keyFormat="json-schema", schema__registry__url=URL)
    assert formats.value.strategy == TOPIC_NAME and formats.key.schema_type == JSON
    assert (formats.auto_register, formats.use_latest_version, formats.normalize) == (True, False, False)
    assert (formats.record_name, formats.record_namespace) == ("topLevelRecord", "")
    assert formats.formatted("value") and formats.formatted("key")
    formats = write(
        valueFormat="avro",
        schema__registry__url=URL,
        value__subject__name__strategy="io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
        auto__register__schemas="false",
        use__latest__version="TRUE",
        normalize__schemas="true",
        valueSchema='"string"',
        recordName="Order",
        recordNamespace="shop",
    )
    assert formats.value.strategy == TOPIC_RECORD_NAME and formats.value.schema == '"string"'
    assert (formats.auto_register, formats.use_latest_version, formats.normalize) == (False, True, True)
    assert (formats.record_name, formats.record_namespace) == ("Order", "shop")
    assert write(valueFormat="avro", schema__registry__url=URL, value__subject__name__strategy="recordnamestrategy")
    assert (
        write(
            valueFormat="avro", schema__registry__url=URL, value__subject__name__strategy="RecordNameStrategy"
        ).value.strategy
        == RECORD_NAME
    )
    stream = parse_stream_sink_options({**SINK, "valueFormat": "avro", "schema.registry.url": URL, "queryName": "q"})
    assert formats_of(stream).value.schema_type == AVRO


INVALID_READ = [
    ({"valueFormat": "parquet"}, "Invalid value 'parquet' for option 'valueFormat'"),
    ({"valueFormat": "avro"}, "Option 'schema.registry.url' must be specified"),
    ({"valueFormat": "avro", "schema.registry.url": "registry:8081"}, "is not an http:// or https:// URL"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "schema.registry.basic.auth.user.inf": "x"}, "did you mean"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "schema.registry.timeout": " "}, "is empty"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "mode": "DROPMALFORMED"}, "option 'mode'"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "valueSchemaVersion": "0"}, "'valueSchemaVersion'"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "valueSchemaVersion": "x"}, "'valueSchemaVersion'"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "valueSchemaId": "-1"}, "'valueSchemaId'"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "valueSchemaId": "1", "valueSubject": "s"}, "alone"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "valueSubject": " "}, "'valueSubject' is empty"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "columnNameOfCorruptRecord": "value"}, "other than"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "valueProtobufMessage": "a.B"}, "only with option"),
    ({"keySubject": "s"}, "Option 'keySubject' applies only with option 'keyFormat'"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "keySchemaId": "3"}, "'keySchemaId' applies only"),
    ({"mode": "PERMISSIVE"}, "Option 'mode' applies only with valueFormat/keyFormat"),
    ({"schema.registry.url": URL}, "Option 'schema.registry.url' applies only"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "valueSchema": "{}"}, "does not apply to reads"),
    ({"valueFormt": "avro"}, "did you mean 'valueFormat'"),
]


@pytest.mark.parametrize(("options", "message"), INVALID_READ)
def test_invalid_read_options_name_the_option(options, message):
    with pytest.raises(KafkaOptionError, match=None) as e:
        parse_source_options({**BASE, **options})
    assert message in str(e.value)


def test_a_read_of_several_topics_needs_the_subject():
    options = {"kafka.bootstrap.servers": "b:9092", "subscribePattern": "o.*", "valueFormat": "avro"}
    with pytest.raises(KafkaOptionError, match="Option 'valueSubject' is required"):
        parse_source_options({**options, "schema.registry.url": URL})
    options = {**options, "schema.registry.url": URL, "valueSubject": "orders-value"}
    assert formats_of(parse_source_options(options)).value.subject == "orders-value"
    with pytest.raises(KafkaOptionError, match="Option 'keySubject' is required"):
        parse_source_options({**BASE, "subscribe": "a,b", "keyFormat": "avro", "schema.registry.url": URL})


INVALID_WRITE = [
    ({"valueFormat": "avro", "schema.registry.url": URL, "value.subject.name.strategy": "Foo"}, "Invalid value 'Foo'"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "auto.register.schemas": "yes"}, "must be true or false"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "valueSchema": " "}, "'valueSchema' is empty"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "recordName": " "}, "'recordName' is empty"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "keySchema": '"string"'}, "'keySchema' applies only"),
    ({"use.latest.version": "true"}, "Option 'use.latest.version' applies only"),
    ({"valueFormat": "avro", "schema.registry.url": URL, "mode": "PERMISSIVE"}, "does not apply to writes"),
]


@pytest.mark.parametrize(("options", "message"), INVALID_WRITE)
def test_invalid_write_options_name_the_option(options, message):
    with pytest.raises(KafkaOptionError) as e:
        parse_sink_options({**SINK, **options})
    assert message in str(e.value)


def test_errors_never_show_registry_secrets():
    options = {**BASE, "valueFormat": "avro", "schema.registry.url": "ftp://u:s3cret@h"}
    with pytest.raises(KafkaOptionError) as e:
        parse_source_options(options)
    assert "s3cret" not in str(e.value) and "ftp://h" in str(e.value)
