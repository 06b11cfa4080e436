"""ShareGroupHeartbeat (76) and ShareGroupDescribe (77) as raw requests, the same rows against Apache Kafka 4.4 (the
oracle) and kafkalog: each row's error code and message, where two members' assignments converge, and what the other
group APIs (ConsumerGroupHeartbeat, JoinGroup, OffsetCommit, DescribeGroups v6, ListGroups v5) answer for a share
group and a share heartbeat for a classic group, must be what Kafka 4.4 answers."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

pytestmark = pytest.mark.compat

HB = API_BY_KEY[ApiKey.SHARE_GROUP_HEARTBEAT].Request
DESCRIBE = API_BY_KEY[ApiKey.SHARE_GROUP_DESCRIBE].Request


def coordinator_wire(bootstrap: str, group: str) -> Wire:
    with Wire(bootstrap) as w:
        found = wait_until(
            lambda: (
                (c := w.call(ApiKey.FIND_COORDINATOR, 4, key_type=0, coordinator_keys=[group]).coordinators[0])
                and c.error_code == ErrorCode.NONE
                and c
            ),
            30,
            "a group coordinator",
        )
    return Wire(f"{found.host}:{found.port}")


LOADING = {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE}


def hb(w: Wire, group: str, member: str, epoch: int, topics=None, rack=None):
    """One heartbeat, sent again while the coordinator is still loading the group's partition."""
    body = HB(group_id=group, member_id=member, member_epoch=epoch, rack_id=rack, subscribed_topic_names=topics)
    return wait_until(
        lambda: (r := w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body)).error_code not in LOADING and r,
        30,
        "the coordinator to load",
    )


def answers(share_target) -> dict[str, tuple]:
    """Every row's (error code, message), and what the members converge to, on one broker. (Kafka initializes
    share-partition state asynchronously, so when a member first gets partitions and the epochs on the way differ;
    kafkalog initializes before answering: only where the heartbeats converge is compared.)"""
    bootstrap = share_target.bootstrap_servers
    topic = share_target.new_topic(2)
    group = f"oracle-{uuid.uuid4().hex[:8]}"
    a, b = uuid.uuid4().hex, uuid.uuid4().hex
    out: dict[str, tuple] = {}
    with coordinator_wire(bootstrap, group) as w:

        def row(name, resp):
            out[name] = (resp.error_code, resp.error_message)

        row("empty member id", hb(w, group, "", 0, [topic]))
        row("join without subscription", hb(w, group, "m", 0))
        row("join with empty subscription", hb(w, group, "m", 0, []))
        row("epoch -2", hb(w, group, "m", -2))
        row("empty rack", hb(w, group, "m", 0, [topic], rack=""))
        row("epoch 3 of an unknown group", hb(w, group, "m", 3))
        row("leave of an unknown group", hb(w, group, "m", -1))
        epochs: dict[str, int] = {}
        held: dict[str, int] = {}

        def heard(m: str, r) -> None:
            assert r.error_code == ErrorCode.NONE, r
            epochs[m] = r.member_epoch
            if r.assignment is not None:  # null: unchanged
                held[m] = sum(len(t.partitions) for t in r.assignment.topic_partitions)

        heard(a, hb(w, group, a, 0, [topic]))
        heard(b, hb(w, group, b, 0, [topic]))

        def converged() -> bool:
            for m in (a, b):
                heard(m, hb(w, group, m, epochs[m]))
            return held.get(a) == 1 and held.get(b) == 1

        wait_until(converged, 30, "both members to get one partition each")
        out["settled heartbeat sends no assignment"] = (hb(w, group, a, epochs[a]).assignment is None,)
        row("a at a greater epoch", hb(w, group, a, epochs[a] + 7))
        row("a rejoining without subscription", hb(w, group, a, 0))
        row("unknown member at epoch 1", hb(w, group, "nobody", 1))
        row("unknown member leaving", hb(w, group, "nobody", -1))
        left = hb(w, group, b, -1)
        out["b leaves"] = (left.error_code, left.member_epoch)
        (d,) = w.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, DESCRIBE(group_ids=[group])).groups
        out["describe"] = (d.error_code, d.group_state, d.assignor_name, [m.member_id == a for m in d.members])
        absent = w.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, DESCRIBE(group_ids=["absent-" + group])).groups[0]
        out["describe absent"] = (absent.error_code, absent.error_message)
    for name, value in out.items():
        if len(value) == 2 and isinstance(value[1], str):
            message = value[1].replace(group, "<g>").replace(a, "<a>").replace("nobody", "<n>")
            out[name] = (value[0], message.replace(f"({epochs[a] + 7})", "(<e+7>)").replace(f"({epochs[a]})", "(<e>)"))
    return out


@pytest.fixture(scope="module")
def oracle(kafka_share, tmp_path_factory):
    from tests.share_scenarios import topic_maker

    from .share_brokers import ShareTarget

    return answers(ShareTarget("kafka-4.4", kafka_share.bootstrap_servers, topic_maker(kafka_share.bootstrap_servers)))


def test_kafkalog_answers_share_group_heartbeats_as_kafka_4_4(oracle, kafkalog_share):
    from tests.share_scenarios import topic_maker

    from .share_brokers import ShareTarget

    bootstrap = kafkalog_share.bootstrap_servers
    ours = answers(ShareTarget("kafkalog", bootstrap, topic_maker(bootstrap)))
    assert ours == oracle


def other_protocols(bootstrap: str, topic: str) -> dict[str, tuple]:
    """What the other group APIs answer for a share group, and a share heartbeat for a classic group."""
    share, classic = f"oracle-s-{uuid.uuid4().hex[:8]}", f"oracle-c-{uuid.uuid4().hex[:8]}"
    out: dict[str, tuple] = {}
    with coordinator_wire(bootstrap, share) as w:
        assert hb(w, share, uuid.uuid4().hex, 0, [topic]).error_code == ErrorCode.NONE
        R = API_BY_KEY[ApiKey.CONSUMER_GROUP_HEARTBEAT].Request
        body = R(group_id=share, member_id=uuid.uuid4().hex, member_epoch=0, rebalance_timeout_ms=30000,
                 subscribed_topic_names=[topic], topic_partitions=[])  # fmt: skip
        r = w.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, body)
        out["consumer heartbeat"] = (r.error_code, (r.error_message or "").replace(share, "<s>"))
        J = API_BY_KEY[ApiKey.JOIN_GROUP].Request
        body = J(group_id=share, session_timeout_ms=30000, rebalance_timeout_ms=30000, member_id="",
                 protocol_type="consumer", protocols=[J.JoinGroupRequestProtocol(name="range", metadata=b"")])  # fmt: skip
        out["join group"] = (w.call(ApiKey.JOIN_GROUP, 5, body).error_code,)
        C = API_BY_KEY[ApiKey.OFFSET_COMMIT].Request
        T, P = C.OffsetCommitRequestTopic, C.OffsetCommitRequestTopic.OffsetCommitRequestPartition
        body = C(group_id=share, generation_id_or_member_epoch=-1, member_id="",
                 topics=[T(name=topic, partitions=[P(partition_index=0, committed_offset=1)])])  # fmt: skip
        out["offset commit"] = (w.call(ApiKey.OFFSET_COMMIT, 9, body).topics[0].partitions[0].error_code,)
        D = API_BY_KEY[ApiKey.DESCRIBE_GROUPS].Request
        (d,) = w.call(ApiKey.DESCRIBE_GROUPS, 6, D(groups=[share], include_authorized_operations=False)).groups
        out["describe groups v6"] = (d.error_code, (d.error_message or "").replace(share, "<s>"), d.group_state)
        L = API_BY_KEY[ApiKey.LIST_GROUPS].Request
        listed = w.call(ApiKey.LIST_GROUPS, 5, L(states_filter=[], types_filter=[])).groups
        out["list groups v5"] = tuple(
            (g.protocol_type, g.group_state, g.group_type) for g in listed if g.group_id == share
        )
    with coordinator_wire(bootstrap, classic) as w:
        C = API_BY_KEY[ApiKey.OFFSET_COMMIT].Request
        T, P = C.OffsetCommitRequestTopic, C.OffsetCommitRequestTopic.OffsetCommitRequestPartition
        body = C(group_id=classic, generation_id_or_member_epoch=-1, member_id="",
                 topics=[T(name=topic, partitions=[P(partition_index=0, committed_offset=1)])])  # fmt: skip
        assert w.call(ApiKey.OFFSET_COMMIT, 8, body).topics[0].partitions[0].error_code == ErrorCode.NONE
        r = hb(w, classic, uuid.uuid4().hex, 0, [topic])
        out["share heartbeat for a classic group"] = (r.error_code, (r.error_message or "").replace(classic, "<c>"))
    return out


def test_other_protocols_meet_a_share_group_as_in_kafka_4_4(kafka_share, kafkalog_share):
    from tests.share_scenarios import topic_maker

    theirs = other_protocols(kafka_share.bootstrap_servers, topic_maker(kafka_share.bootstrap_servers)(1))
    ours = other_protocols(kafkalog_share.bootstrap_servers, topic_maker(kafkalog_share.bootstrap_servers)(1))
    assert ours == theirs
