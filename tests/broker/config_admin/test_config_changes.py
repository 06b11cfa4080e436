"""AlterConfigs / IncrementalAlterConfigs on an in-process broker: what is written, what is refused, what
DescribeConfigs then reports, and that the partition logs follow at once (retention, min.insync.replicas)."""

from __future__ import annotations

import time
import uuid

import pytest

from broker.config_admin.dynamic import DEFAULT_ENTITY
from spark_kafkalog.client import AdminClient, AdminOperationError, NewTopic, Producer
from spark_kafkalog.client.admin.admin_configs import APPEND, DELETE, SET, SUBTRACT, AlterConfigOp, ConfigResource
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.waiting import stays_true, wait_until

from ..conftest import start_brokers
from ..wire import Wire


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, log_retention_check_interval_ms=200, log_segment_delete_delay_ms=0)
    yield b
    b.stop()


@pytest.fixture(scope="module")
def admin(broker):
    with AdminClient(broker.bootstrap_servers) as a:
        yield a


def new_topic(admin, **configs) -> str:
    name = f"cfg-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, 1, 1, config={k: str(v) for k, v in configs.items()})])
    return name


def topic_entries(admin, name):
    (entries,) = admin.describe_resource_configs([ConfigResource(2, name)], synonyms=True).values()
    return {e.name: e for e in entries}


def plog(broker, topic):
    return broker.broker.log_manager.get_log(topic, 0)


def error_of(exc_info, resource):
    return exc_info.value.errors[resource].error_code


def test_alter_configs_replaces_the_topic_overrides_and_the_open_log_follows(broker, admin):
    name = new_topic(admin, **{"retention.ms": 1000, "segment.bytes": 4096})
    admin.alter_configs({ConfigResource(2, name): {"segment.bytes": "2048", "max.message.bytes": "5000"}})
    entries = topic_entries(admin, name)
    assert (entries["segment.bytes"].value, entries["segment.bytes"].source_name) == ("2048", "DYNAMIC_TOPIC_CONFIG")
    assert entries["retention.ms"].source_name == "DEFAULT_CONFIG"  # replaced: no longer overridden
    assert entries["retention.ms"].value == str(7 * 24 * 3600 * 1000)
    assert broker.broker.registry.topic_config(name) == {"segment.bytes": "2048", "max.message.bytes": "5000"}
    wait_until(lambda: plog(broker, name).config.segment_bytes == 2048, 20, "the log to take segment.bytes=2048")
    assert plog(broker, name).config.max_message_bytes == 5000
    assert plog(broker, name).config.retention_ms == 7 * 24 * 3600 * 1000


def test_incremental_alter_configs_sets_deletes_appends_and_subtracts(broker, admin):
    name = new_topic(admin, **{"retention.ms": 1000})
    res = ConfigResource(2, name)
    admin.incremental_alter_configs(
        {res: [AlterConfigOp("segment.bytes", "8192", SET), AlterConfigOp("retention.ms", None, DELETE)]}
    )
    assert broker.broker.registry.topic_config(name) == {"segment.bytes": "8192"}
    admin.incremental_alter_configs({res: [AlterConfigOp("cleanup.policy", "compact", APPEND)]})
    assert broker.broker.registry.topic_config(name)["cleanup.policy"] == "delete,compact"
    admin.incremental_alter_configs({res: [AlterConfigOp("cleanup.policy", "delete", SUBTRACT)]})
    assert broker.broker.registry.topic_config(name)["cleanup.policy"] == "compact"
    wait_until(lambda: plog(broker, name).config.cleanup_policy == ("compact",), 20, "the log to become compacted")
    with pytest.raises(AdminOperationError) as e:
        admin.incremental_alter_configs({res: [AlterConfigOp("retention.ms", "5", APPEND)]})
    assert error_of(e, res) == ErrorCode.INVALID_CONFIG and "list configs only" in str(e.value)


def test_refusals_are_per_resource_and_nothing_is_written(broker, admin):
    name = new_topic(admin, **{"retention.ms": 1000})
    res, missing = ConfigResource(2, name), ConfigResource(2, "no-such-" + name)
    for bad in ({"retention.ms": "soon"}, {"no.such.key": "1"}, {"segment.bytes": "3"}):
        with pytest.raises(AdminOperationError) as e:
            admin.alter_configs({res: bad})
        assert error_of(e, res) == ErrorCode.INVALID_CONFIG
        assert list(bad)[0] in str(e.value)
    with pytest.raises(AdminOperationError) as e:
        admin.alter_configs({missing: {"retention.ms": "5"}})
    assert error_of(e, missing) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    admin.alter_configs({res: {"retention.ms": "77"}}, validate_only=True)
    admin.incremental_alter_configs({res: [AlterConfigOp("retention.ms", None, DELETE)]}, validate_only=True)
    assert broker.broker.registry.topic_config(name) == {"retention.ms": "1000"}


def test_bad_resource_types_duplicates_and_unknown_operations_are_invalid_requests(broker, admin):
    name = new_topic(admin)
    R = API_BY_KEY[ApiKey.INCREMENTAL_ALTER_CONFIGS].Request
    C = R.AlterConfigsResource.AlterableConfig
    body = R(
        resources=[
            R.AlterConfigsResource(resource_type=1, resource_name="x", configs=[]),
            R.AlterConfigsResource(
                resource_type=2,
                resource_name=name,
                configs=[
                    C(name="retention.ms", config_operation=0, value="1"),
                    C(name="retention.ms", config_operation=1, value=None),
                ],
            ),
            R.AlterConfigsResource(
                resource_type=2,
                resource_name=name + "x",
                configs=[C(name="retention.ms", config_operation=9, value="1")],
            ),
        ],
        validate_only=False,
    )
    with Wire(broker.bootstrap_servers) as w:
        for version in (0, 1):
            codes = [r.error_code for r in w.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, version, body).responses]
            assert codes == [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
        A = API_BY_KEY[ApiKey.ALTER_CONFIGS].Request
        null = A(
            resources=[
                A.AlterConfigsResource(
                    resource_type=2,
                    resource_name=name,
                    configs=[A.AlterConfigsResource.AlterableConfig(name="retention.ms", value=None)],
                )
            ],
            validate_only=False,
        )
        for version in (0, 1, 2):
            assert w.call(ApiKey.ALTER_CONFIGS, version, null).responses[0].error_code == ErrorCode.INVALID_REQUEST
        versions = {k.api_key: (k.min_version, k.max_version) for k in w.call(ApiKey.API_VERSIONS, 3).api_keys}
    assert versions[33] == (0, 2) and versions[44] == (0, 1)


def test_dynamic_broker_defaults_apply_to_topics_without_an_override(broker, admin):
    plain = new_topic(admin)
    pinned = new_topic(admin, **{"retention.ms": 1000})
    default, own = ConfigResource(4, ""), ConfigResource(4, "0")
    try:
        admin.incremental_alter_configs({default: [AlterConfigOp("log.retention.ms", "3600000", SET)]})
        assert broker.broker.registry.broker_config(DEFAULT_ENTITY) == {"log.retention.ms": "3600000"}
        wait_until(lambda: plog(broker, plain).config.retention_ms == 3_600_000, 20, "the default to reach the log")
        assert plog(broker, pinned).config.retention_ms == 1000
        e = topic_entries(admin, plain)["retention.ms"]
        assert (e.value, e.source_name) == ("3600000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
        admin.alter_configs({own: {"log.retention.ms": "7200000"}})
        wait_until(lambda: plog(broker, plain).config.retention_ms == 7_200_000, 20, "the broker's own value")
        e = topic_entries(admin, plain)["retention.ms"]
        assert (e.value, e.source_name) == ("7200000", "DYNAMIC_BROKER_CONFIG")
        assert [s[2] for s in e.synonyms] == [2, 3, 5]
        (brk,) = admin.describe_resource_configs([own], keys=["log.retention.ms", "num.partitions"]).values()
        by_name = {x.name: x for x in brk}
        assert (
            by_name["log.retention.ms"].source_name == "DYNAMIC_BROKER_CONFIG"
            and not by_name["log.retention.ms"].read_only
        )
        assert by_name["num.partitions"].read_only
        (dflt,) = admin.describe_resource_configs([default]).values()
        assert [(x.name, x.value, x.source_name) for x in dflt] == [
            ("log.retention.ms", "3600000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
        ]
        with pytest.raises(AdminOperationError) as exc:
            admin.alter_configs({own: {"num.partitions": "4"}})
        assert error_of(
            exc, own
        ) == ErrorCode.INVALID_CONFIG and "num.partitions: cannot be changed dynamically" in str(exc.value)
    finally:
        admin.alter_configs({own: {}, default: {}})
    wait_until(lambda: plog(broker, plain).config.retention_ms == 7 * 24 * 3600 * 1000, 20, "the static default back")


def test_retention_altered_live_deletes_old_segments_without_a_restart(broker, admin):
    name = new_topic(admin, **{"segment.bytes": 1024})
    old = int(time.time() * 1000) - 3_600_000
    with Producer(broker.bootstrap_servers, linger_ms=0, batch_size=200) as producer:
        for _ in range(40):
            producer.send(name, b"x" * 100, partition=0, timestamp_ms=old).result(10)
    log = plog(broker, name)
    assert len(log.segments) > 3 and log.log_start_offset == 0
    # retention runs every 200 ms: nothing goes while retention.ms is a week
    stays_true(lambda: log.log_start_offset == 0, 0.5, "every segment kept while retention.ms is a week")
    admin.incremental_alter_configs({ConfigResource(2, name): [AlterConfigOp("retention.ms", "60000", SET)]})
    wait_until(lambda: log.log_start_offset > 0 and len(log.segments) == 1, 30, "retention to delete old segments")


def test_min_insync_replicas_altered_live_refuses_acks_all(broker, admin):
    name = new_topic(admin)
    with Producer(broker.bootstrap_servers, acks=-1, linger_ms=0, retries=0) as producer:
        producer.send(name, b"before", partition=0).result(10)
        admin.alter_configs({ConfigResource(2, name): {"min.insync.replicas": "2"}})
        wait_until(lambda: plog(broker, name).config.min_insync_replicas == 2, 20, "min.insync.replicas=2 to apply")
        with pytest.raises(Exception) as e:
            producer.send(name, b"after", partition=0).result(10)
    assert "NOT_ENOUGH_REPLICAS" in str(e.value)
