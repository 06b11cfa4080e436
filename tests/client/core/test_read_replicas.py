"""Preferred read replicas (KIP-392) in the client: the pure per-partition table (expiry at ``metadata.max.age.ms``,
a broker gone from the metadata), and ``KafkaClient`` against scripted brokers: ``client.rack`` sent as
``rack_id``, the partition followed to the named replica, and back to the leader on an error from it."""

from __future__ import annotations

from typing import Any

import pytest

from spark_kafkalog.client import KafkaClient, TopicPartition
from spark_kafkalog.client.core.read_replicas import PreferredReadReplicas
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ..handlers import serve_batches
from ..scripted_broker import ClusterView, ScriptedBroker
from .test_client import FAST, batches

TP = TopicPartition("t", 0)
RACK_B: dict[str, Any] = {**FAST, "client_rack": "rack-b"}
FETCH = int(ApiKey.FETCH)
_P = API_BY_KEY[FETCH].Response.FetchableTopicResponse.PartitionData
_R = API_BY_KEY[FETCH].Response


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    "elapsed_s, known, want",
    [
        (0.0, True, 7),
        (9.9, True, 7),
        (10.0, True, 0),  # metadata.max.age.ms passed: ask the leader again
        (1.0, False, 0),  # the replica left the metadata: the leader at once
    ],
)
def test_a_read_replica_is_used_until_it_expires_or_leaves_the_metadata(elapsed_s, known, want):
    clock = Clock()
    table = PreferredReadReplicas(10_000, clock)
    table.update(TP, 7)
    clock.now += elapsed_s
    assert table.node_for(TP, 0, lambda node: known) == want
    assert table.get(TP) == (7 if want == 7 else None)


def test_clearing_forgets_the_replica_and_says_which():
    table = PreferredReadReplicas(10_000)
    assert table.clear(TP) is None
    table.update(TP, 3)
    assert table.clear(TP) == 3
    assert table.node_for(TP, 1, lambda node: True) == 1


def redirecting(to: int, then: Any = None) -> Any:
    """A leader's Fetch handler: names ``to`` as the read replica (no records) once, then answers with ``then``."""
    calls = {"n": 0}

    def handler(request, conn):
        calls["n"] += 1
        if calls["n"] > 1 and then is not None:
            return then(request, conn)
        p = _P(partition_index=0, error_code=0, high_watermark=20, last_stable_offset=20, log_start_offset=0)
        p.preferred_read_replica = to
        p.records = b""
        return _R(responses=[_R.FetchableTopicResponse(topic="t", partitions=[p])])

    return handler


def failing(code: int) -> Any:
    def handler(request, _conn):
        p = _P(partition_index=0, error_code=code, high_watermark=-1, records=b"")
        return _R(responses=[_R.FetchableTopicResponse(topic="t", partitions=[p])])

    return handler


@pytest.fixture
def racks():
    brokers = [ScriptedBroker(0), ScriptedBroker(1)]
    view = ClusterView(brokers, topics={"t": {0: 0}})
    view.install()
    yield view
    for b in brokers:
        b.stop()


def read_all(client: KafkaClient) -> list[int]:
    return [o for b in client.fetch_batches(TP, 0, 20) for o in range(b.batch.base_offset, b.batch.last_offset + 1)]


def test_the_client_sends_its_rack_and_reads_from_the_replica_the_leader_names(racks):
    leader, follower = racks.brokers
    leader.handlers[FETCH] = redirecting(1)
    follower.handlers[FETCH] = serve_batches(batches(2))
    with KafkaClient(leader.address, **RACK_B) as client:
        assert read_all(client) == list(range(20))
        assert client.read_replicas.get(TP) == 1
    asked = leader.requests(FETCH)
    assert len(asked) == 1 and asked[0].version >= 11 and asked[0].body.rack_id == "rack-b"
    assert [s.body.rack_id for s in follower.requests(FETCH)] == ["rack-b"] * len(follower.requests(FETCH))


@pytest.mark.parametrize(
    "code", [ErrorCode.OFFSET_OUT_OF_RANGE, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH]
)
def test_an_error_from_the_replica_sends_the_client_back_to_the_leader(racks, code):
    leader, follower = racks.brokers
    leader.handlers[FETCH] = redirecting(1, then=serve_batches(batches(2)))
    follower.handlers[FETCH] = failing(code)
    with KafkaClient(leader.address, **RACK_B) as client:
        assert read_all(client) == list(range(20))  # an out-of-range answer from the replica is not the log's
        assert client.read_replicas.get(TP) is None
    assert len(follower.requests(FETCH)) == 1
    assert len(leader.requests(FETCH)) >= 2


def test_a_lost_replica_sends_the_client_back_to_the_leader(racks):
    leader, follower = racks.brokers
    leader.handlers[FETCH] = redirecting(1, then=serve_batches(batches(2)))
    follower.stop()
    with KafkaClient(leader.address, **RACK_B) as client:
        assert read_all(client) == list(range(20))
        assert client.read_replicas.get(TP) is None
