"""GROUP config resources (type 32) through DescribeConfigs, IncrementalAlterConfigs and AlterConfigs: stored in
``/config/groups/<group>``, validated as Kafka's ``GroupConfig.validate``, described with the broker defaults,
authorized on the group, followed by every broker's ``GroupConfigs``, and a consumer group's own heartbeat interval
told to its members."""

from __future__ import annotations

import asyncio

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.config import BrokerConfig
from broker.coordinator.offsets_topic import OFFSETS_TOPIC
from broker.handlers import alter_configs, describe_configs, incremental_alter_configs
from spark_kafkalog.client.admin import AdminClient
from spark_kafkalog.client.admin.admin_configs import AlterConfigOp, ConfigResource
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType
from tests.broker.wire import Wire
from tests.waiting import wait_until

from ..services_builder import build_services, request_context
from .acl_services import Secured

GROUP = 32
SET, DELETE, APPEND = 0, 1, 2
IncrementalRequest = API_BY_KEY[incremental_alter_configs.API_KEY].Request
AlterRequest = API_BY_KEY[alter_configs.API_KEY].Request
DescribeRequest = API_BY_KEY[describe_configs.API_KEY].Request


@pytest.fixture
def registry():
    view = MemoryRegistryStore().view()
    view.start()
    yield view
    view.close()


@pytest.fixture
def services(tmp_path, registry):
    return build_services(tmp_path, registry=registry)


def incremental(name, *ops, validate_only=False):
    R = IncrementalRequest.AlterConfigsResource
    return IncrementalRequest(
        resources=[
            R(
                resource_type=GROUP,
                resource_name=name,
                configs=[R.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops],
            )
        ],
        validate_only=validate_only,
    )


def alter(services, name, *ops, validate_only=False):
    ctx = request_context(services, incremental_alter_configs.API_KEY, 1)
    body = incremental(name, *ops, validate_only=validate_only)
    [result] = asyncio.run(incremental_alter_configs.handle(ctx, body)).responses
    return result


def describe(services, name, keys=None):
    body = DescribeRequest(
        resources=[
            DescribeRequest.DescribeConfigsResource(resource_type=GROUP, resource_name=name, configuration_keys=keys)
        ],
        include_synonyms=True,
        include_documentation=True,
    )
    [result] = asyncio.run(
        describe_configs.handle(request_context(services, describe_configs.API_KEY, 4), body)
    ).results
    return result


def test_incremental_alter_configs_sets_and_deletes_group_configs(services, registry):
    result = alter(
        services,
        "orders",
        ("share.auto.offset.reset", SET, "earliest"),
        ("share.record.lock.duration.ms", SET, "15000"),
    )
    assert (result.error_code, result.error_message) == (ErrorCode.NONE, None)
    assert registry.group_config("orders") == {
        "share.auto.offset.reset": "earliest",
        "share.record.lock.duration.ms": "15000",
    }
    assert alter(services, "orders", ("share.auto.offset.reset", DELETE, None)).error_code == ErrorCode.NONE
    assert registry.group_config("orders") == {"share.record.lock.duration.ms": "15000"}


def test_validate_only_writes_nothing(services, registry):
    result = alter(services, "orders", ("share.delivery.count.limit", SET, "3"), validate_only=True)
    assert result.error_code == ErrorCode.NONE
    assert registry.group_configs() == {}


@pytest.mark.parametrize(
    "name, ops, code, message",
    [
        ("g", [("share.unknown", SET, "1")], ErrorCode.INVALID_CONFIG, "Unknown group config name: share.unknown"),
        (
            "g",
            [("share.delivery.count.limit", SET, "11")],
            ErrorCode.INVALID_CONFIG,
            "share.delivery.count.limit must be in the range 2 to 10 inclusive.",
        ),
        (
            "g",
            [("share.auto.offset.reset", SET, "by_duration:-PT1H")],
            ErrorCode.INVALID_CONFIG,
            "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: Invalid value "
            "`by_duration:-PT1H` for configuration share.auto.offset.reset. The value must be either 'earliest', "
            "'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.",
        ),
        (
            "g",
            [("share.isolation.level", APPEND, "read_committed")],
            ErrorCode.INVALID_CONFIG,
            "share.isolation.level: APPEND applies to list configs only",
        ),
        ("", [("share.delivery.count.limit", SET, "3")], ErrorCode.INVALID_REQUEST, "Group name must not be empty"),
    ],
)
def test_invalid_group_configs_are_refused_as_kafka_refuses_them(services, registry, name, ops, code, message):
    result = alter(services, name, *ops)
    assert (result.error_code, result.error_message) == (code, message)
    assert registry.group_configs() == {}


def test_the_whole_resulting_set_is_validated(tmp_path, registry):
    """Each alter checks the group's whole resulting set, the keys set before included."""
    config = BrokerConfig.from_properties(
        {
            "broker.id": "0",
            "log.dirs": str(tmp_path),
            "zookeeper.connect": "memory:group-configs",
            "group.share.min.session.timeout.ms": "1000",
            "group.share.min.heartbeat.interval.ms": "1000",
        }
    )
    services = build_services(tmp_path, registry=registry, config=config)
    assert alter(services, "g", ("share.session.timeout.ms", SET, "6000")).error_code == ErrorCode.NONE
    result = alter(services, "g", ("share.heartbeat.interval.ms", SET, "6000"))
    assert (result.error_code, result.error_message) == (
        ErrorCode.INVALID_CONFIG,
        "share.session.timeout.ms must be greater than share.heartbeat.interval.ms",
    )
    assert registry.group_config("g") == {"share.session.timeout.ms": "6000"}


def test_alter_configs_replaces_a_groups_whole_set(services, registry):
    alter(services, "g", ("share.auto.offset.reset", SET, "earliest"), ("share.delivery.count.limit", SET, "3"))
    R = AlterRequest.AlterConfigsResource
    body = AlterRequest(
        resources=[
            R(
                resource_type=GROUP,
                resource_name="g",
                configs=[R.AlterableConfig(name="share.isolation.level", value="read_committed")],
            )
        ],
        validate_only=False,
    )
    [result] = asyncio.run(alter_configs.handle(request_context(services, alter_configs.API_KEY, 2), body)).responses
    assert result.error_code == ErrorCode.NONE
    assert registry.group_config("g") == {"share.isolation.level": "read_committed"}


def test_the_altering_brokers_cache_has_the_new_group_config_before_the_answer(services):
    """Read-your-writes: ``services.group_configs`` is not following the registry here (never started), so only
    the alter itself can have put the values there."""
    cache = services.group_configs
    assert alter(services, "g", ("share.auto.offset.reset", SET, "earliest")).error_code == ErrorCode.NONE
    assert cache.share_config("g").auto_offset_reset == "earliest"
    assert alter(services, "g", ("share.delivery.count.limit", SET, "3")).error_code == ErrorCode.NONE
    assert cache.overrides("g") == {"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "3"}
    assert alter(services, "g", ("share.auto.offset.reset", DELETE, None)).error_code == ErrorCode.NONE
    assert cache.overrides("g") == {"share.delivery.count.limit": "3"}
    alter(services, "g", ("share.isolation.level", SET, "read_committed"), validate_only=True)
    assert cache.overrides("g") == {"share.delivery.count.limit": "3"}  # validate_only writes nothing
    R = AlterRequest.AlterConfigsResource
    body = AlterRequest(
        resources=[
            R(
                resource_type=GROUP,
                resource_name="g",
                configs=[R.AlterableConfig(name="share.isolation.level", value="read_committed")],
            )
        ],
        validate_only=False,
    )
    [result] = asyncio.run(alter_configs.handle(request_context(services, alter_configs.API_KEY, 2), body)).responses
    assert result.error_code == ErrorCode.NONE
    assert cache.overrides("g") == {"share.isolation.level": "read_committed"}


def test_describe_configs_reports_every_group_config_set_or_default(services):
    alter(services, "g", ("share.auto.offset.reset", SET, "by_duration:PT1H"))
    result = describe(services, "g")
    assert result.error_code == ErrorCode.NONE
    got = {
        c.name: (c.value, c.config_source, c.config_type, [(s.name, s.source) for s in c.synonyms])
        for c in result.configs
    }
    assert got == {
        "consumer.heartbeat.interval.ms": ("5000", 5, 3, [("group.consumer.heartbeat.interval.ms", 5)]),
        "consumer.session.timeout.ms": ("45000", 5, 3, [("group.consumer.session.timeout.ms", 5)]),
        "share.auto.offset.reset": (
            "by_duration:PT1H",
            8,
            2,
            [("share.auto.offset.reset", 8), ("share.auto.offset.reset", 5)],
        ),
        "share.delivery.count.limit": ("5", 5, 3, [("group.share.delivery.count.limit", 5)]),
        "share.heartbeat.interval.ms": ("5000", 5, 3, [("group.share.heartbeat.interval.ms", 5)]),
        "share.isolation.level": ("read_uncommitted", 5, 2, [("share.isolation.level", 5)]),
        "share.record.lock.duration.ms": ("30000", 5, 3, [("group.share.record.lock.duration.ms", 5)]),
        "share.session.timeout.ms": ("45000", 5, 3, [("group.share.session.timeout.ms", 5)]),
    }
    assert all(c.documentation and not c.read_only for c in result.configs)
    assert [c.name for c in describe(services, "g", ["share.isolation.level"]).configs] == ["share.isolation.level"]
    assert len(describe(services, "no-such-group").configs) == 8


def test_describing_an_empty_group_name_is_invalid(services):
    result = describe(services, "")
    assert (result.error_code, result.error_message) == (ErrorCode.INVALID_REQUEST, "Group name must not be empty")


def test_group_configs_need_the_operation_on_the_group(tmp_path, registry):
    s = Secured(tmp_path, registry)
    [refused] = s.send(
        incremental_alter_configs, 1, incremental("g", ("share.delivery.count.limit", SET, "3"))
    ).responses
    assert refused.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    body = DescribeRequest(
        resources=[DescribeRequest.DescribeConfigsResource(resource_type=GROUP, resource_name="g")],
        include_synonyms=False,
        include_documentation=False,
    )
    [hidden] = s.send(describe_configs, 4, body).results
    assert (hidden.error_code, hidden.error_message) == (
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
        "Group authorization failed.",
    )
    s.grant(AclOperation.ALTER_CONFIGS, ResourceType.GROUP, "g")
    [accepted] = s.send(
        incremental_alter_configs, 1, incremental("g", ("share.delivery.count.limit", SET, "3"))
    ).responses
    assert accepted.error_code == ErrorCode.NONE
    [described] = s.send(describe_configs, 4, body).results  # ALTER_CONFIGS implies DESCRIBE_CONFIGS
    assert described.error_code == ErrorCode.NONE
    assert registry.group_config("g") == {"share.delivery.count.limit": "3"}


def test_every_broker_follows_a_group_config_written_through_another(two_brokers):
    b0, b1 = two_brokers
    with AdminClient(b0.bootstrap_servers) as admin:
        ops = [
            AlterConfigOp("share.auto.offset.reset", "earliest", SET),
            AlterConfigOp("share.delivery.count.limit", "3"),
        ]
        admin.incremental_alter_configs({ConfigResource(GROUP, "followed"): ops})

    def seen(b) -> bool:
        config = b.call(lambda: b.broker.services.group_configs.share_config("followed"))
        return (config.auto_offset_reset, config.delivery_count_limit) == ("earliest", 3)

    wait_until(lambda: seen(b0) and seen(b1), 10, "both brokers' group configs")


def test_a_consumer_groups_own_heartbeat_interval_is_what_its_members_are_told(broker):
    gc = broker.broker.group_coordinator
    broker.call(lambda: gc.find_coordinator("any"))  # creates __consumer_offsets, as a client's FindCoordinator does
    count = broker.call(lambda: len(broker.broker.metadata.topics[OFFSETS_TOPIC].replicas))
    wait_until(lambda: broker.call(lambda: len(gc.loaded)) == count, 20, "the offsets partitions to load")
    with AdminClient(broker.bootstrap_servers) as admin:
        ops = [AlterConfigOp("consumer.heartbeat.interval.ms", "6000", SET)]
        admin.incremental_alter_configs({ConfigResource(GROUP, "tuned-consumers"): ops})
    wait_until(
        lambda: (
            broker.call(
                lambda: broker.broker.services.group_configs.consumer_config("tuned-consumers")
            ).heartbeat_interval_ms
            == 6000
        ),
        10,
        "the broker's group configs",
    )
    Heartbeat = API_BY_KEY[ApiKey.CONSUMER_GROUP_HEARTBEAT].Request
    with Wire(broker.bootstrap_servers) as w:
        for group, interval in (("tuned-consumers", 6000), ("default-consumers", 5000)):
            body = Heartbeat(
                group_id=group,
                member_id="",
                member_epoch=0,
                rebalance_timeout_ms=30000,
                subscribed_topic_names=["t"],
                topic_partitions=[],
            )
            resp = w.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, body)
            assert (resp.error_code, resp.heartbeat_interval_ms) == (ErrorCode.NONE, interval), resp
