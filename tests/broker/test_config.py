"""Broker configuration: Kafka names and defaults, validation errors that name the key, properties syntax."""

from pathlib import Path

import pytest

from broker.config import CONFIG_KEYS, BrokerConfig, ConfigError, parse_properties, render_docs

ROOT = Path(__file__).resolve().parents[2]
BASE = {"broker.id": "1", "zookeeper.connect": "localhost:2181"}


def test_defaults_follow_kafka():
    cfg = BrokerConfig.from_properties(BASE)
    assert cfg["num.partitions"] == 1
    assert cfg["auto.create.topics.enable"] is True
    assert cfg["message.max.bytes"] == 1048588
    assert cfg["log.segment.bytes"] == 1 << 30
    assert cfg["socket.request.max.bytes"] == 104857600
    assert [str(x) for x in cfg.listeners] == ["PLAINTEXT://127.0.0.1:9092"]  # loopback only, unlike Kafka
    assert cfg.log_dirs == ("/tmp/kafka-logs",)


@pytest.mark.parametrize("missing", ["broker.id", "zookeeper.connect"])
def test_required_keys_are_named(missing):
    props = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(ConfigError, match=missing.replace(".", r"\.")):
        BrokerConfig.from_properties(props)


@pytest.mark.parametrize(
    "key,value,fragment",
    [
        ("broker.id", "one", "expected int"),
        ("broker.id", "-1", "at least 0"),
        ("num.partitions", "0", "at least 1"),
        ("auto.create.topics.enable", "yes", "true or false"),
        ("listeners", "localhost:9092", "NAME://host:port"),
        ("listeners", "CLIENT://:9093", "no security protocol defined"),
        ("listeners", "PLAINTEXT://:99999", "out of range"),
        ("log.cleanup.policy", "compact,shred", "must be one of"),
        ("log.message.timestamp.type", "WallClock", "must be one of"),
    ],
)
def test_bad_values_name_the_key(key, value, fragment):
    with pytest.raises(ConfigError) as e:
        BrokerConfig.from_properties({**BASE, key: value})
    assert key in str(e.value) and fragment in str(e.value)


def test_unknown_keys_are_kept_and_reported():
    cfg = BrokerConfig.from_properties({**BASE, "ssl.keystore.lokation": "/x", "num.io.threads": "8"})
    assert cfg.unknown_keys == ("num.io.threads", "ssl.keystore.lokation")


def test_log_properties_are_the_log_section_only():
    cfg = BrokerConfig.from_properties(
        {**BASE, "log.retention.hours": "1", "num.partitions": "3", "min.insync.replicas": "2"}
    )
    assert cfg.log_properties() == {"log.retention.hours": "1", "min.insync.replicas": "2"}


def test_properties_syntax(tmp_path):
    text = "# comment\n! also\nbroker.id = 7\nzookeeper.connect: zk:2181/kafka\nlisteners PLAINTEXT://h:1,\\\n  REPL://h:2\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT,REPL:PLAINTEXT\nkey\\=x=\\u0041\n"
    props = parse_properties(text)
    assert props == {
        "broker.id": "7",
        "zookeeper.connect": "zk:2181/kafka",
        "listeners": "PLAINTEXT://h:1,REPL://h:2",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,REPL:PLAINTEXT",
        "key=x": "A",
    }
    f = tmp_path / "server.properties"
    f.write_text(text)
    cfg = BrokerConfig.from_file(f, ["broker.id=9", "num.partitions=4"])
    assert cfg.broker_id == 9 and cfg["num.partitions"] == 4
    with pytest.raises(ConfigError, match="expected key=value"):
        BrokerConfig.from_file(f, ["broker.id"])


def test_advertised_listeners_default_to_listeners_with_a_real_host():
    cfg = BrokerConfig.from_properties({**BASE, "listeners": "PLAINTEXT://:0"})
    (adv,) = cfg.advertised_listeners
    assert adv.host and adv.port == 0


def test_every_key_documented_and_docs_current():
    assert all(k.doc for k in CONFIG_KEYS)
    assert (ROOT / "docs" / "configuration.md").read_text() == render_docs() + "\n", "run `make docs`"


def test_log_defaults_agree_with_the_log_store():
    from broker.log import LogConfig

    cfg = BrokerConfig.from_properties(BASE)
    log_cfg = LogConfig.broker_defaults(cfg.log_properties())
    assert log_cfg == LogConfig.broker_defaults({})
    assert log_cfg.segment_bytes == cfg["log.segment.bytes"]
    assert log_cfg.max_message_bytes == cfg["message.max.bytes"]
    assert log_cfg.retention_ms == cfg["log.retention.hours"] * 3_600_000
    assert log_cfg.retention_bytes == cfg["log.retention.bytes"]
    assert log_cfg.index_interval_bytes == cfg["log.index.interval.bytes"]
    assert log_cfg.delete_retention_ms == cfg["log.cleaner.delete.retention.ms"]
    assert log_cfg.message_timestamp_type == cfg["log.message.timestamp.type"]
    assert log_cfg.min_insync_replicas == cfg["min.insync.replicas"]
    assert log_cfg.unclean_leader_election_enable == cfg["unclean.leader.election.enable"]
    from broker.config import KEYS_BY_NAME
    from broker.log.config import TOPIC_CONFIG_KEYS

    for key in TOPIC_CONFIG_KEYS.values():  # every topic default has a broker key, and it reaches LogConfig
        if not key.synonym:  # topic-only (tiered storage, throttles): no broker key, the default is the key's
            assert getattr(log_cfg, key.field) == key.default
            continue
        assert key.synonym in KEYS_BY_NAME, key.synonym
        default = KEYS_BY_NAME[key.synonym].default
        raw = {"int": "5", "long": "100", "double": "0.5", "list": "delete"}.get(key.type)
        if key.type == "int" and KEYS_BY_NAME[key.synonym].at_most is None:
            raw = "100000"
        if raw is None:  # boolean or string: its own default, spelled as in server.properties
            raw = str(default).lower() if isinstance(default, bool) else str(default)
        assert key.synonym in BrokerConfig.from_properties({**BASE, key.synonym: raw}).log_properties()


def test_broker_api_docs_current():
    from broker.handlers import render_docs as render_apis

    assert (ROOT / "docs" / "broker-apis.md").read_text() == render_apis(), "run `make docs`"
