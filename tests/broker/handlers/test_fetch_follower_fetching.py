"""Fetch and follower fetching (KIP-392) on built services: the leader's ``preferred_read_replica`` for a consumer in
another rack (only from v11, only with ``replica.selector.class``, only in-sync registered replicas holding the
offset), and a follower serving consumers up to its high watermark with Kafka's errors around it.

Brokers 0, 1, 2 are in racks a, b, c; topic ``t`` has one partition on all three, led by broker 0."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from broker.cluster.registry import BrokerInfo, PartitionState, TopicAssignment
from broker.config import BrokerConfig
from broker.handlers import fetch
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.records import iter_batches

from ..log.helpers import value_batch
from ..services_builder import build_services, request_context

R = API_BY_KEY[fetch.API_KEY].Request
E = ErrorCode
RACKS = {0: "a", 1: "b", 2: "c"}
REPLICAS = (0, 1, 2)


def services_of(tmp_path, broker_id: int, *, isr=REPLICAS, selector: str | None = "rack-aware", brokers=REPLICAS):
    """Built services of broker ``broker_id`` hosting ``t``-0 (leader 0, epoch 0, the given ISR)."""
    props = {"broker.id": str(broker_id), "log.dirs": str(tmp_path), "zookeeper.connect": "memory:follower-fetch"}
    if selector is not None:
        props["replica.selector.class"] = selector
    services = build_services(tmp_path, broker_id=broker_id, config=BrokerConfig.from_properties(props))
    services.metadata.set_brokers({b: BrokerInfo(b, "127.0.0.1", 9092 + b, RACKS[b]) for b in brokers})
    assignment = TopicAssignment("t", {0: REPLICAS})
    states = {0: PartitionState(0, 0, tuple(isr), 1)}
    services.metadata.set_topic(assignment, states, {})
    services.replica_manager.apply_topic("t", dict(assignment.partitions), states, services.log_config_for({}))
    return services


def leader_with_data(tmp_path, *, follower_offsets=(5, 5), **kw):
    """Broker 0 leading ``t``-0 with 5 records; followers 1 and 2 last fetched at ``follower_offsets``."""
    services = services_of(tmp_path, 0, **kw)
    part = services.replica_manager.get_partition("t", 0)
    part.append_as_leader(value_batch(5), required_acks=1)
    now = services.replica_manager.now_ms()
    for broker_id, offset in zip((1, 2), follower_offsets, strict=True):
        part.update_follower_fetch(broker_id, offset, now, 0)
    return services


def consume(services, version: int, *, offset: int = 0, rack: str = "", epoch: int = -1, isolation: int = 0):
    """The partition answer of a consumer Fetch of ``t``-0 (no long poll)."""
    body = R(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=isolation,
        topics=[
            R.FetchTopic(
                topic="t",
                partitions=[
                    R.FetchTopic.FetchPartition(
                        partition=0, current_leader_epoch=epoch, fetch_offset=offset, partition_max_bytes=1 << 20
                    )
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id=rack,
    )
    response = asyncio.run(fetch.handle(request_context(services, fetch.API_KEY, version), body))
    (topic,) = response.responses
    (answer,) = topic.partitions
    return answer


def offsets(records: Any) -> list[int]:
    data = records.read_bytes() if hasattr(records, "read_bytes") else bytes(records or b"")
    return [o for b in iter_batches(data) for o in range(b.base_offset, b.last_offset + 1)]


def counted(services, name: str) -> float:
    value = services.metrics.registry.get_sample_value(f"kafkalog_follower_fetch_{name}_total", {"topic": "t"})
    return value or 0.0


# -- the leader ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rack, preferred", [("b", 1), ("c", 2)])
def test_leader_names_the_replica_in_the_consumers_rack_and_sends_no_data(tmp_path, rack, preferred):
    answer = consume(leader_with_data(tmp_path), 11, rack=rack)
    assert (answer.error_code, answer.preferred_read_replica) == (E.NONE, preferred)
    assert offsets(answer.records) == []
    assert (answer.high_watermark, answer.last_stable_offset, answer.log_start_offset) == (5, 5, 0)


@pytest.mark.parametrize(
    "case, version, rack, kw",
    [
        ("the leader's own rack", 11, "a", {}),
        ("no rack", 11, "", {}),
        ("a rack without replicas", 12, "z", {}),
        ("before v11", 10, "b", {}),
        ("no replica.selector.class", 11, "b", {"selector": None}),
        ("the leader selector", 11, "b", {"selector": "leader"}),
        ("the replica left the ISR", 11, "b", {"isr": (0, 2)}),
        ("the replica's broker is not registered", 11, "b", {"brokers": (0, 2)}),
    ],
)
def test_leader_serves_the_data_itself(tmp_path, case, version, rack, kw):
    answer = consume(leader_with_data(tmp_path, **kw), version, rack=rack, offset=1)
    assert answer.error_code == E.NONE, case
    assert answer.preferred_read_replica == -1, case
    assert offsets(answer.records) == [0, 1, 2, 3, 4], case


@pytest.mark.parametrize("offset, preferred", [(2, 1), (3, 1), (4, -1)])
def test_leader_names_only_a_replica_that_holds_the_fetch_offset(tmp_path, offset, preferred):
    services = leader_with_data(tmp_path, follower_offsets=(3, 5))  # broker 1's log ends at 3
    assert consume(services, 11, rack="b", offset=offset).preferred_read_replica == preferred


def test_leader_counts_nothing_as_follower(tmp_path):
    services = leader_with_data(tmp_path)
    consume(services, 11, rack="a")
    assert counted(services, "requests") == 0


# -- a follower ------------------------------------------------------------------------------------------
def follower_with_data(tmp_path, *, high_watermark: int = 3, **kw):
    """Broker 1 following ``t``-0 with offsets 0-2 and 3-4 in two batches, its high watermark at 3."""
    services = services_of(tmp_path, 1, **kw)
    part = services.replica_manager.get_partition("t", 0)
    assert part.is_follower
    part.log.append_as_follower(value_batch(3, base_offset=0, leader_epoch=0))
    part.log.append_as_follower(value_batch(2, base_offset=3, leader_epoch=0))
    part.log.high_watermark = high_watermark
    return services


def test_follower_serves_a_consumer_up_to_its_high_watermark(tmp_path):
    services = follower_with_data(tmp_path)
    answer = consume(services, 11, rack="b")
    assert (answer.error_code, answer.high_watermark, answer.preferred_read_replica) == (E.NONE, 3, -1)
    assert offsets(answer.records) == [0, 1, 2]
    assert counted(services, "requests") == 1
    assert counted(services, "bytes") == len(answer.records)


@pytest.mark.parametrize(
    "case, version, offset, kw, error",
    [
        ("between its high watermark and log end: nothing yet", 11, 4, {}, E.NONE),
        ("beyond its log end", 11, 6, {}, E.OFFSET_OUT_OF_RANGE),
        ("before v11 only the leader serves", 10, 0, {}, E.NOT_LEADER_OR_FOLLOWER),
        ("out of the ISR", 11, 0, {"isr": (0, 2)}, E.NOT_LEADER_OR_FOLLOWER),
    ],
)
def test_follower_answers_as_kafka(tmp_path, case, version, offset, kw, error):
    answer = consume(follower_with_data(tmp_path, **kw), version, offset=offset)
    assert answer.error_code == error, case
    assert offsets(answer.records) == [], case


def test_follower_out_of_the_isr_names_the_leader(tmp_path):
    answer = consume(follower_with_data(tmp_path, isr=(0, 2)), 12)
    assert answer.error_code == E.NOT_LEADER_OR_FOLLOWER
    assert (answer.current_leader.leader_id, answer.current_leader.leader_epoch) == (0, 0)


@pytest.mark.parametrize("epoch, error", [(0, E.NONE), (-1, E.NONE), (1, E.UNKNOWN_LEADER_EPOCH)])
def test_follower_checks_the_consumers_leader_epoch(tmp_path, epoch, error):
    assert consume(follower_with_data(tmp_path), 11, epoch=epoch).error_code == error


def test_follower_never_names_a_preferred_replica(tmp_path):
    answer = consume(follower_with_data(tmp_path), 11, rack="c")
    assert (answer.preferred_read_replica, offsets(answer.records)) == (-1, [0, 1, 2])


def test_follower_serves_read_committed_up_to_its_last_stable_offset(tmp_path):
    answer = consume(follower_with_data(tmp_path, high_watermark=5), 11, isolation=1)
    assert (answer.error_code, answer.last_stable_offset) == (E.NONE, 5)
    assert offsets(answer.records) == [0, 1, 2, 3, 4]
