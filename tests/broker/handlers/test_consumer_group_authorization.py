"""ConsumerGroupHeartbeat and ConsumerGroupDescribe enforce Kafka 4.x's authorization, called directly with the
services of an unstarted broker whose authorizer holds exactly the listed grants: READ on the group for a
heartbeat and DESCRIBE on each subscribed topic; DESCRIBE on the group for a describe, and on every topic its
assignments name; a regular expression matches only the topics the member may describe."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from broker.cluster.registry import PartitionState, TopicAssignment
from broker.coordinator.consumer.group import ConsumerGroup
from broker.handlers import consumer_group_describe, consumer_group_heartbeat
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

from ..services_builder import build_services, request_context
from .test_authorization_groups import BOB, GrantAuthorizer, grant

Op, RT, E = AclOperation, ResourceType, ErrorCode


@pytest.fixture
def authorizer():
    return GrantAuthorizer()


@pytest.fixture
def services(tmp_path, authorizer):
    s = build_services(tmp_path, authorizer=authorizer)
    for name in ("orders", "secret"):
        s.metadata.set_topic(TopicAssignment(name, {0: (0,)}), {0: PartitionState(0, 0, (0,), 1)}, {})
    return s


def call(services, module, version=1, **fields):
    body = API_BY_KEY[module.API_KEY].Request(**fields)
    ctx = request_context(services, module.API_KEY, version, principal=BOB)
    return asyncio.run(module.handle(ctx, body))


def heartbeat(services, **fields):
    base = dict(group_id="g", member_id="m1", member_epoch=0, rebalance_timeout_ms=30000, topic_partitions=[])
    return call(services, consumer_group_heartbeat, **{**base, **fields})


def test_heartbeat_needs_read_on_the_group(services, authorizer):
    assert heartbeat(services, subscribed_topic_names=["orders"]).error_code == E.GROUP_AUTHORIZATION_FAILED
    authorizer.grants = {grant(Op.DESCRIBE, RT.GROUP, "g"), grant(Op.DESCRIBE, RT.TOPIC, "orders")}
    assert heartbeat(services, subscribed_topic_names=["orders"]).error_code == E.GROUP_AUTHORIZATION_FAILED


def test_heartbeat_needs_describe_on_every_subscribed_topic(services, authorizer):
    authorizer.grants = {grant(Op.READ, RT.GROUP, "g"), grant(Op.DESCRIBE, RT.TOPIC, "orders")}
    resp = heartbeat(services, subscribed_topic_names=["orders", "secret"])
    assert resp.error_code == E.TOPIC_AUTHORIZATION_FAILED
    # authorized: past the checks, to the coordinator, which coordinates nothing here
    assert heartbeat(services, subscribed_topic_names=["orders"]).error_code == E.COORDINATOR_NOT_AVAILABLE


def test_a_regex_sees_only_describable_topics(services, authorizer):
    authorizer.grants = {grant(Op.DESCRIBE, RT.TOPIC, "orders")}
    gc = services.group_coordinator
    ctx = request_context(services, consumer_group_heartbeat.API_KEY, 1, principal=BOB)
    view = gc.topics_view(lambda name: ctx.authorize(Op.DESCRIBE, RT.TOPIC, name))
    assert sorted(view.topic_names()) == ["orders"]
    assert sorted(gc.topics_view().topic_names()) == ["orders", "secret"]


def test_describe_needs_describe_on_the_group_and_its_topics(services, authorizer):
    gc = services.group_coordinator
    gc.topic.loaded[gc.partition_of("g")] = 0
    group = ConsumerGroup("g", assignors=gc._assignors, default_assignor="uniform")
    secret_id = services.metadata.topics["secret"].topic_id
    from broker.coordinator.consumer import records as r

    for rec in (
        r.CoordinatorRecord(
            r.ConsumerGroupMemberMetadataKey("g", "m1"),
            r.ConsumerGroupMemberMetadataValue("c", "/h", subscribed_topic_names=("secret",)),
        ),
        r.CoordinatorRecord(r.ConsumerGroupMetadataKey("g"), r.ConsumerGroupMetadataValue(1)),
        r.CoordinatorRecord(
            r.ConsumerGroupCurrentMemberAssignmentKey("g", "m1"),
            r.ConsumerGroupCurrentMemberAssignmentValue(1, 0, 0, (r.TopicPartitions(secret_id, (0,)),)),
        ),
    ):
        group.replay(rec)
    gc.consumer_groups["g"] = group
    (d,) = call(services, consumer_group_describe, group_ids=["g"]).groups
    assert d.error_code == E.GROUP_AUTHORIZATION_FAILED
    authorizer.grants = {grant(Op.DESCRIBE, RT.GROUP, "g")}
    (d,) = call(services, consumer_group_describe, group_ids=["g"]).groups
    assert d.error_code == E.TOPIC_AUTHORIZATION_FAILED
    authorizer.grants.add(grant(Op.DESCRIBE, RT.TOPIC, "secret"))
    (d,) = call(services, consumer_group_describe, group_ids=["g"], include_authorized_operations=True).groups
    assert d.error_code == E.NONE and d.members[0].assignment.topic_partitions[0].topic_name == "secret"
    assert d.authorized_operations == 1 << Op.DESCRIBE.value


def test_the_consumer_protocol_can_be_turned_off(tmp_path):
    from broker.config import BrokerConfig

    config = BrokerConfig.from_properties(
        {"broker.id": "0", "zookeeper.connect": f"memory:{uuid.uuid4().hex}", "log.dirs": str(tmp_path),
         "group.coordinator.rebalance.protocols": "classic"}
    )  # fmt: skip
    services = build_services(tmp_path, config=config)
    assert heartbeat(services, subscribed_topic_names=["orders"]).error_code == E.UNSUPPORTED_VERSION
    (d,) = call(services, consumer_group_describe, group_ids=["g"]).groups
    assert d.error_code == E.UNSUPPORTED_VERSION
    from broker.handlers import api_versions

    offered = {k.api_key for k in call(services, api_versions, 3).api_keys}
    assert 68 not in offered and 69 not in offered and 11 in offered
    with_consumer = build_services(tmp_path / "on")
    assert {68, 69} <= {k.api_key for k in call(with_consumer, api_versions, 3).api_keys}
    # group.version (Kafka 4.4 finalizes it at 1): finalized only while the consumer protocol is on
    levels = [
        {f.name: f.max_version_level for f in call(s, api_versions, 4).finalized_features}
        for s in (services, with_consumer)
    ]
    assert [lv.get("group.version") for lv in levels] == [None, 1]
