"""ShareGroupHeartbeat and ShareGroupDescribe enforce Kafka 4.4's authorization, called directly with the services
of an unstarted broker whose authorizer holds exactly the listed grants: READ on the group for a heartbeat and
DESCRIBE on each subscribed topic; DESCRIBE on the group for a describe, and on every topic its assignments name."""

from __future__ import annotations

import asyncio

import pytest

from broker.cluster.registry import PartitionState, TopicAssignment
from broker.coordinator.share import records as r
from broker.handlers import share_group_describe, share_group_heartbeat
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
    return call(services, share_group_heartbeat, **{"group_id": "g", "member_id": "m1", "member_epoch": 0, **fields})


def test_heartbeat_needs_read_on_the_group(services, authorizer):
    assert heartbeat(services, subscribed_topic_names=["orders"]).error_code == E.GROUP_AUTHORIZATION_FAILED
    authorizer.grants = {grant(Op.DESCRIBE, RT.GROUP, "g"), grant(Op.DESCRIBE, RT.TOPIC, "orders")}
    assert heartbeat(services, subscribed_topic_names=["orders"]).error_code == E.GROUP_AUTHORIZATION_FAILED


def test_heartbeat_needs_describe_on_every_subscribed_topic(services, authorizer):
    authorizer.grants = {grant(Op.READ, RT.GROUP, "g"), grant(Op.DESCRIBE, RT.TOPIC, "orders")}
    assert heartbeat(services, subscribed_topic_names=["orders", "secret"]).error_code == E.TOPIC_AUTHORIZATION_FAILED
    # authorized: past the checks, to the coordinator, which coordinates nothing here
    assert heartbeat(services, subscribed_topic_names=["orders"]).error_code == E.COORDINATOR_NOT_AVAILABLE


def test_describe_needs_describe_on_the_group_and_its_topics(services, authorizer):
    gc = services.group_coordinator
    gc.topic.loaded[gc.partition_of("g")] = 0
    group = gc._new_share_group("g")
    secret_id = services.metadata.topics["secret"].topic_id
    for rec in (
        r.ShareGroupRecord(
            r.ShareGroupMemberMetadataKey("g", "m1"), r.ShareGroupMemberMetadataValue("c", "/h", None, ("secret",))
        ),
        r.ShareGroupRecord(r.ShareGroupMetadataKey("g"), r.ShareGroupMetadataValue(1, 0)),
        r.ShareGroupRecord(
            r.ShareGroupCurrentMemberAssignmentKey("g", "m1"),
            r.ShareGroupCurrentMemberAssignmentValue(1, 0, 0, (r.TopicPartitions(secret_id, (0,)),)),
        ),
    ):
        group.replay(rec)
    gc.share_groups["g"] = group

    def describe(ops: bool = False):
        (d,) = call(services, share_group_describe, group_ids=["g"], include_authorized_operations=ops).groups
        return d

    assert describe().error_code == E.GROUP_AUTHORIZATION_FAILED
    authorizer.grants = {grant(Op.DESCRIBE, RT.GROUP, "g")}
    assert describe().error_code == E.TOPIC_AUTHORIZATION_FAILED
    authorizer.grants.add(grant(Op.DESCRIBE, RT.TOPIC, "secret"))
    d = describe(ops=True)
    assert d.error_code == E.NONE and d.group_state == "Stable" and d.members[0].member_id == "m1"
    assert d.authorized_operations != -(2**31)
    assert describe().authorized_operations == -(2**31)


def test_without_share_groups_the_apis_answer_unsupported_version_and_are_not_offered(
    services, authorizer, monkeypatch
):
    from broker.coordinator.group_coordinator import GroupCoordinator
    from broker.handlers import api_versions

    authorizer.grants = {grant(Op.READ, RT.GROUP, "g"), grant(Op.DESCRIBE, RT.GROUP, "g")}
    resp = call(services, api_versions, 4, client_software_name="t")
    assert {76, 77} <= {k.api_key for k in resp.api_keys}
    assert ("share.version", 1) in {(f.name, f.max_version_level) for f in resp.finalized_features}
    monkeypatch.setattr(GroupCoordinator, "share_groups_enabled", property(lambda self: False))
    assert heartbeat(services, subscribed_topic_names=["orders"]).error_code == E.UNSUPPORTED_VERSION
    (d,) = call(services, share_group_describe, group_ids=["g"], include_authorized_operations=False).groups
    assert d.error_code == E.UNSUPPORTED_VERSION
    resp = call(services, api_versions, 4, client_software_name="t")
    assert not {76, 77, 78, 79, 90, 91, 92} & {k.api_key for k in resp.api_keys}
    assert "share.version" not in {f.name for f in resp.finalized_features}
