"""ClientConfig: Kafka names, parsing, validation, the idempotence rules and warnings for ignored keys."""

from __future__ import annotations

import warnings

import pytest

from spark_kafkalog.client import ClientConfig, ConfigError, RoundRobinPartitioner
from spark_kafkalog.records import Compression


def test_properties_with_string_values_are_parsed_to_types():
    cfg = ClientConfig.from_kafka_properties(
        {
            "bootstrap.servers": "a:9092, b:9093",
            "client.id": "etl",
            "acks": "1",
            "linger.ms": "20",
            "batch.size": "65536",
            "compression.type": "zstd",
            "enable.idempotence": "false",
            "isolation.level": "read_committed",
            "max.in.flight.requests.per.connection": "1",
        }
    )
    assert cfg.bootstrap_servers == ("a:9092", "b:9093")
    assert (cfg.client_id, cfg.acks, cfg.linger_ms, cfg.batch_size) == ("etl", 1, 20, 65536)
    assert cfg.compression_type is Compression.ZSTD
    assert cfg.enable_idempotence is False
    assert cfg.isolation_level == 1
    assert cfg.max_in_flight == 1


def test_keyword_names_with_underscores_and_attribute_names_are_accepted():
    cfg = ClientConfig.create(bootstrap_servers=["h:1"], request_timeout_ms=1500, max_in_flight=2)
    assert cfg.bootstrap_servers == ("h:1",)
    assert cfg.request_timeout_ms == 1500
    assert cfg.max_in_flight == 2
    assert {"bootstrap.servers", "request.timeout.ms", "max.in.flight.requests.per.connection"} <= cfg.explicit


@pytest.mark.parametrize("value, expected", [("all", -1), ("-1", -1), (-1, -1), ("0", 0), (1, 1)])
def test_acks_accepts_all_and_the_numeric_forms(value, expected):
    assert ClientConfig.create({"acks": value}).acks == expected


def test_unknown_key_names_the_key_and_suggests_the_closest_one():
    with pytest.raises(
        ConfigError, match=r"unknown client setting 'fetch\.max\.byte' \(did you mean 'fetch\.max\.bytes'\?\)"
    ):
        ClientConfig.create({"fetch.max.byte": "1"})


@pytest.mark.parametrize(
    "props, message",
    [
        ({"acks": "2"}, r"'acks' must be one of all, -1, 0, 1; got '2'"),
        ({"linger.ms": "soon"}, r"'linger.ms' must be an integer, got 'soon'"),
        ({"retries": "-1"}, r"'retries' must be >= 0, got -1"),
        ({"isolation.level": "serializable"}, r"'isolation.level' must be one of read_uncommitted, read_committed"),
        ({"compression.type": "brotli"}, r"'compression.type': unknown compression type 'brotli'"),
        ({"check.crcs": "yes"}, r"'check.crcs' must be true or false"),
        ({"bootstrap.servers": "localhost"}, r"'localhost' is not host:port"),
        ({"bootstrap.servers": " , "}, r"names no server"),
        ({"transaction.timeout.ms": "0"}, r"'transaction.timeout.ms' must be >= 1, got 0"),
        ({"security.protocol": "TLS"}, r"'security.protocol' must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
        ({"key.serializer": "AvroSerializer"}, r"'key.serializer': unknown name 'AvroSerializer'"),
    ],
)
def test_bad_values_raise_config_errors_naming_the_setting(props, message):
    with pytest.raises(ConfigError, match=message):
        ClientConfig.create(props)


def test_known_but_meaningless_java_keys_warn_instead_of_failing():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = ClientConfig.create(
            {
                "security.protocol": "PLAINTEXT",
                "reconnect.backoff.ms": "50",
                "ssl.keymanager.algorithm": "SunX509",  # JSSE plumbing, no meaning for OpenSSL
            }
        )
    texts = [str(w.message) for w in caught]
    assert not any("'security.protocol'" in t for t in texts)  # honoured now (issue 26)
    assert any("'reconnect.backoff.ms' is ignored" in t for t in texts)
    assert any("'ssl.keymanager.algorithm' is ignored" in t for t in texts)
    assert cfg.security_protocol == "PLAINTEXT"


def test_idempotence_defaults_on_and_is_silently_dropped_by_conflicting_defaults():
    assert ClientConfig.create().idempotence_enabled() is True
    assert ClientConfig.create(acks="1").idempotence_enabled() is False
    assert ClientConfig.create(retries=0).idempotence_enabled() is False
    assert ClientConfig.create(max_in_flight=6).idempotence_enabled() is False


def test_explicit_idempotence_conflicting_with_acks_is_an_error():
    cfg = ClientConfig.create({"enable.idempotence": "true", "acks": "1"})
    with pytest.raises(ConfigError, match=r"enable.idempotence=true conflicts with acks=1"):
        cfg.idempotence_enabled()


def test_delivery_timeout_must_cover_linger_and_request_timeout_when_set():
    with pytest.raises(ConfigError, match="delivery.timeout.ms"):
        ClientConfig.create({"delivery.timeout.ms": "1000", "request.timeout.ms": "30000"})


def test_partitioner_names_map_to_classes_including_java_class_names():
    cfg = ClientConfig.create({"partitioner.class": "org.apache.kafka.clients.producer.RoundRobinPartitioner"})
    assert cfg.partitioner is RoundRobinPartitioner
    assert ClientConfig.create(partitioner="round_robin").partitioner is RoundRobinPartitioner


def test_serializer_names_and_defaults():
    cfg = ClientConfig.create({"value.serializer": "StringSerializer"})
    assert cfg.value_serializer_fn()(12) == b"12"
    default = ClientConfig.create().key_serializer_fn()
    assert default(b"x") == b"x" and default("é") == "é".encode() and default(None) is None
    with pytest.raises(TypeError, match="cannot send a int without a serializer"):
        default(5)


def test_with_defaults_does_not_override_explicit_settings():
    cfg = ClientConfig.create(linger_ms=50).with_defaults(linger_ms=0, batch_size=1000)
    assert cfg.linger_ms == 50
    assert cfg.batch_size == 1000
    assert "batch.size" not in cfg.explicit


def test_to_kafka_properties_lists_explicit_settings_only():
    cfg = ClientConfig.create({"bootstrap.servers": "h:1", "acks": "0"})
    assert cfg.to_kafka_properties() == {"acks": 0, "bootstrap.servers": ("h:1",)}


def test_group_settings_are_parsed_with_kafka_defaults():
    default = ClientConfig.create()
    assert (default.session_timeout_ms, default.heartbeat_interval_ms, default.max_poll_interval_ms) == (
        45000,
        3000,
        300000,
    )
    assert default.partition_assignment_strategy == ("range", "cooperative-sticky")
    assert default.group_instance_id is None
    cfg = ClientConfig.create(
        {
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "group.instance.id": "worker-1",
            "partition.assignment.strategy": "org.apache.kafka.clients.consumer.RoundRobinAssignor, sticky",
            "group.protocol": "CLASSIC",
        }
    )
    assert (cfg.session_timeout_ms, cfg.heartbeat_interval_ms, cfg.group_instance_id) == (6000, 1000, "worker-1")
    assert cfg.partition_assignment_strategy == ("roundrobin", "sticky")
    kip848 = ClientConfig.create({"group.protocol": "Consumer", "group.remote.assignor": "uniform"})
    assert (kip848.group_protocol, kip848.group_remote_assignor) == ("consumer", "uniform")
    assert (default.group_protocol, default.group_remote_assignor) == ("classic", None)


@pytest.mark.parametrize(
    "props, message",
    [
        ({"group.protocol": "share"}, r"'group.protocol' must be classic .* or consumer \(KIP-848"),
        (
            {"group.protocol": "consumer", "partition.assignment.strategy": "range"},
            r"'partition.assignment.strategy' is not supported when 'group.protocol' is consumer",
        ),
        (
            {"group.protocol": "consumer", "session.timeout.ms": "6000"},
            r"'session.timeout.ms' is not supported when 'group.protocol' is consumer",
        ),
        (
            {"group.remote.assignor": "uniform"},
            r"'group.remote.assignor' is not supported when 'group.protocol' is classic",
        ),
        ({"partition.assignment.strategy": "balanced"}, r"'partition.assignment.strategy': unknown partition assignor"),
        ({"partition.assignment.strategy": " , "}, r"names no assignor"),
        ({"group.instance.id": " "}, r"'group.instance.id' must not be empty"),
        (
            {"session.timeout.ms": "6000", "heartbeat.interval.ms": "6000"},
            r"'heartbeat.interval.ms' \(6000\) must be below",
        ),
    ],
)
def test_bad_group_settings_raise_config_errors_naming_the_setting(props, message):
    with pytest.raises(ConfigError, match=message):
        ClientConfig.create(props)


def test_a_partitioner_may_be_named_by_its_python_import_path():
    by_colon = ClientConfig.create(
        {"partitioner.class": "spark_kafkalog.client.producer.partitioner:RoundRobinPartitioner"}
    )
    assert by_colon.partitioner is RoundRobinPartitioner
    by_dots = ClientConfig.create({"partitioner.class": "collections.OrderedDict"})  # any importable callable
    assert by_dots.partitioner.__name__ == "OrderedDict"
    with pytest.raises(ConfigError, match=r"cannot import 'com.example.MyPartitioner'.*module:Name"):
        ClientConfig.create({"partitioner.class": "com.example.MyPartitioner"})
    with pytest.raises(ConfigError, match="not a class or callable"):
        ClientConfig.create({"partitioner.class": "math:pi"})


@pytest.mark.parametrize(
    "props, message",
    [
        ({"enable.idempotence": "false"}, "enable.idempotence=false"),
        ({"acks": "1"}, r"acks=1 \(needs all\)"),
        ({"max.in.flight.requests.per.connection": "6"}, "max.in.flight.requests.per.connection=6"),
    ],
)
def test_a_transactional_id_needs_an_idempotent_producer(props, message):
    config = ClientConfig.create({"transactional.id": "t1", **props})
    with pytest.raises(
        ConfigError, match="transactional.id needs an idempotent producer; it conflicts with " + message
    ):
        config.idempotence_enabled()


def test_a_transactional_producer_is_idempotent():
    config = ClientConfig.create({"transactional.id": "t1", "transaction.timeout.ms": "30000"})
    assert config.idempotence_enabled() and config.transaction_timeout_ms == 30000
