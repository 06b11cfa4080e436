"""GetTelemetrySubscriptions (71), PushTelemetry (72), ListClientMetricsResources (74) and client metrics config
resources (type 16) in DescribeConfigs/IncrementalAlterConfigs, called directly on the services of an unstarted
broker over an in-process registry; authorization as Kafka's."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.handlers import describe_configs, get_telemetry_subscriptions, incremental_alter_configs, push_telemetry
from broker.handlers import list_client_metrics_resources as list_resources
from broker.telemetry import ClientTelemetry
from broker.telemetry.store import kafka_uuid_string
from broker.telemetry.subscriptions import subscription_id
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.records.compression import compress
from spark_kafkalog.security.acl import AclOperation, ResourceType

from ..services_builder import build_services, request_context
from ..telemetry import otlp_builder as ob
from .acl_services import Secured

CLIENT_METRICS = 16
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
AlterRequest = API_BY_KEY[incremental_alter_configs.API_KEY].Request
DescribeRequest = API_BY_KEY[describe_configs.API_KEY].Request


@pytest.fixture
def registry():
    view = MemoryRegistryStore().view()
    view.start()
    yield view
    view.close()


class Clock:
    ms = 5_000_000.0

    def __call__(self) -> float:
        return self.ms


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def services(tmp_path, registry, clock):
    return build_services(tmp_path, registry=registry, telemetry=ClientTelemetry(max_bytes=2048, clock=clock))


def call(services, module, version=0, **fields):
    body = API_BY_KEY[module.API_KEY].Request(**fields)
    ctx = request_context(services, module.API_KEY, version)
    ctx.client.name, ctx.client.version = "apache-kafka-java", "4.4.0"
    return asyncio.run(module.handle(ctx, body))


def alter(services, name, *ops, validate_only=False):
    R = AlterRequest.AlterConfigsResource
    body = AlterRequest(
        resources=[
            R(
                resource_type=CLIENT_METRICS,
                resource_name=name,
                configs=[R.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops],
            )
        ],
        validate_only=validate_only,
    )
    ctx = request_context(services, incremental_alter_configs.API_KEY, 1)
    [result] = asyncio.run(incremental_alter_configs.handle(ctx, body)).responses
    return result


def subscribe(services):
    """A new client's subscription as the broker's telemetry sees the registry now."""
    services.telemetry.replace_subscriptions(services.registry.client_metrics_configs())
    return call(services, get_telemetry_subscriptions, client_instance_id=uuid.UUID(int=0))


def test_a_new_client_gets_an_id_and_no_metrics_without_a_subscription(services):
    response = subscribe(services)
    assert response.error_code == ErrorCode.NONE
    assert response.client_instance_id != uuid.UUID(int=0)
    assert response.requested_metrics == []
    assert response.push_interval_ms == 300000
    assert response.accepted_compression_types == [4, 3, 1, 2]
    assert response.telemetry_max_bytes == 2048
    assert response.delta_temporality is True
    assert response.subscription_id == subscription_id((), 300000, response.client_instance_id)


def test_subscriptions_written_with_incremental_alter_configs_reach_matching_clients(services):
    assert (
        alter(
            services,
            "java",
            ("metrics", SET, "org.apache.kafka.producer."),
            ("interval.ms", SET, "1000"),
            ("match", SET, "client_software_name=apache-kafka-java"),
        ).error_code
        == ErrorCode.NONE
    )
    assert (
        alter(services, "rdkafka", ("metrics", SET, "*"), ("match", SET, "client_software_name=librdkafka")).error_code
        == 0
    )
    assert alter(services, "java", ("metrics", APPEND, "org.apache.kafka.consumer.")).error_code == ErrorCode.NONE
    response = subscribe(services)
    assert sorted(response.requested_metrics) == ["org.apache.kafka.consumer.", "org.apache.kafka.producer."]
    assert response.push_interval_ms == 1000
    listed = call(services, list_resources)
    assert (listed.error_code, [r.name for r in listed.client_metrics_resources]) == (0, ["java", "rdkafka"])


@pytest.mark.parametrize(
    "name, ops, code",
    [
        ("s", [("interval.ms", SET, "50")], ErrorCode.INVALID_REQUEST),
        ("s", [("metric", SET, "*")], ErrorCode.INVALID_REQUEST),
        ("s", [("match", SET, "client_rack=a")], ErrorCode.INVALID_CONFIG),
        ("s", [("interval.ms", APPEND, "5")], ErrorCode.INVALID_CONFIG),
        ("", [("metrics", SET, "*")], ErrorCode.INVALID_REQUEST),
    ],
)
def test_invalid_subscriptions_are_refused_as_kafka_refuses_them(services, name, ops, code):
    assert alter(services, name, *ops).error_code == code
    assert services.registry.client_metrics_configs() == {}


def test_deleting_every_key_removes_the_subscription(services):
    alter(services, "s", ("metrics", SET, "*"))
    assert alter(services, "s", ("metrics", DELETE, None)).error_code == ErrorCode.NONE
    assert call(services, list_resources).client_metrics_resources == []


def test_describe_configs_reports_every_key_set_or_default(services):
    alter(services, "s", ("metrics", SET, "a., b."), ("interval.ms", SET, "2000"))
    body = DescribeRequest(
        resources=[
            DescribeRequest.DescribeConfigsResource(
                resource_type=CLIENT_METRICS, resource_name="s", configuration_keys=None
            )
        ],
        include_synonyms=True,
        include_documentation=True,
    )
    [result] = asyncio.run(
        describe_configs.handle(request_context(services, describe_configs.API_KEY, 4), body)
    ).results
    got = {c.name: (c.value, c.config_source, c.config_type, [s.source for s in c.synonyms]) for c in result.configs}
    assert got == {
        "metrics": ("a.,b.", 7, 7, [7]),
        "interval.ms": ("2000", 7, 3, [7]),
        "match": ("", 5, 7, []),
    }
    assert all(c.documentation for c in result.configs)


def test_pushed_metrics_are_accepted_and_checked(services, clock):
    alter(services, "all", ("metrics", SET, "*"), ("interval.ms", SET, "1000"))
    sub = subscribe(services)
    iid, sid = sub.client_instance_id, sub.subscription_id
    data = ob.metrics_data([ob.gauge("org.apache.kafka.producer.record.queue.time.avg", [ob.point(2.5)])])

    def push(**fields):
        body = {
            "client_instance_id": iid,
            "subscription_id": sid,
            "terminating": False,
            "compression_type": 4,
            "metrics": compress(4, data),
        } | fields
        return call(services, push_telemetry, **body).error_code

    assert push() == ErrorCode.NONE
    assert push() == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    for fields, error in [
        ({"subscription_id": sid + 1}, ErrorCode.UNKNOWN_SUBSCRIPTION_ID),
        ({"compression_type": 9}, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
        ({"metrics": b"\0" * 2049}, ErrorCode.TELEMETRY_TOO_LARGE),
        ({"metrics": b"\x07garbage", "compression_type": 0}, ErrorCode.INVALID_RECORD),
        ({"terminating": True}, ErrorCode.NONE),
    ]:
        clock.ms += 1000
        assert push(**fields) == error
    [series] = services.telemetry.series()
    assert dict(series.labels) == {"client_id": "services-builder", "client_instance_id": kafka_uuid_string(iid)}
    assert series.value == 2.5


def test_listing_subscriptions_needs_describe_configs_on_the_cluster(tmp_path, registry):
    s = Secured(tmp_path, registry)
    assert s.call(list_resources, 0).error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    s.grant(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER)
    assert s.call(list_resources, 0).error_code == ErrorCode.NONE


def test_client_metrics_configs_need_the_operation_on_the_cluster(tmp_path, registry):
    s = Secured(tmp_path, registry)
    R = AlterRequest.AlterConfigsResource
    body = AlterRequest(
        resources=[
            R(
                resource_type=CLIENT_METRICS,
                resource_name="s",
                configs=[R.AlterableConfig(name="metrics", config_operation=SET, value="*")],
            )
        ],
        validate_only=False,
    )
    [refused] = s.send(incremental_alter_configs, 1, body).responses
    assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    s.grant(AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER)
    [accepted] = s.send(incremental_alter_configs, 1, body).responses
    assert accepted.error_code == ErrorCode.NONE
    assert registry.client_metrics_configs() == {"s": {"metrics": "*"}}


def test_telemetry_needs_no_acl(tmp_path, registry):
    s = Secured(tmp_path, registry)
    response = s.call(get_telemetry_subscriptions, 0, client_instance_id=uuid.UUID(int=0))
    assert response.error_code == ErrorCode.NONE


def test_alter_configs_replaces_a_subscriptions_whole_set(services):
    from broker.handlers import alter_configs

    Request = API_BY_KEY[alter_configs.API_KEY].Request
    R = Request.AlterConfigsResource

    def replace(configs):
        body = Request(
            resources=[
                R(
                    resource_type=CLIENT_METRICS,
                    resource_name="s",
                    configs=[R.AlterableConfig(name=k, value=v) for k, v in configs.items()],
                )
            ],
            validate_only=False,
        )
        ctx = request_context(services, alter_configs.API_KEY, 2)
        [result] = asyncio.run(alter_configs.handle(ctx, body)).responses
        return result.error_code

    assert replace({"metrics": "*", "interval.ms": "1000"}) == ErrorCode.NONE
    assert replace({"match": "client_id=a"}) == ErrorCode.NONE
    assert services.registry.client_metrics_config("s") == {"match": "client_id=a"}
    assert replace({}) == ErrorCode.NONE
    assert services.registry.client_metrics_configs() == {}


def test_the_instance_is_forgotten_when_its_connection_closes(services):
    async def scenario() -> None:
        closed = asyncio.get_running_loop().create_future()
        ctx = request_context(services, get_telemetry_subscriptions.API_KEY, 0, connection_id=42, disconnected=closed)
        Request = API_BY_KEY[get_telemetry_subscriptions.API_KEY].Request
        first = await get_telemetry_subscriptions.handle(ctx, Request(client_instance_id=uuid.UUID(int=0)))
        again = await get_telemetry_subscriptions.handle(ctx, Request(client_instance_id=first.client_instance_id))
        assert again.error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
        closed.set_result(None)
        await asyncio.sleep(0)  # the done callbacks run on the next loop iteration
        assert services.telemetry.instance_count() == 0
        ctx2 = request_context(services, get_telemetry_subscriptions.API_KEY, 0, connection_id=43)
        after = await get_telemetry_subscriptions.handle(ctx2, Request(client_instance_id=first.client_instance_id))
        assert after.error_code == ErrorCode.NONE

    asyncio.run(scenario())
