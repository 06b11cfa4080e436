"""KafkaClient against scripted brokers: bootstrap, metadata refresh, leader moves, ListOffsets,
fetch ranges, pipelining, out-of-range offsets, negotiated versions."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from spark_kafkalog.client import (
    BrokerNotAvailableError,
    KafkaClient,
    KafkaClientError,
    KafkaTimeoutError,
    NoCommonVersionError,
    OffsetOutOfRangeError,
    OffsetSpec,
    TopicPartition,
)
from spark_kafkalog.protocol import ApiKey, ErrorCode
from spark_kafkalog.records import LegacyMessageSetBuilder, RecordBatchBuilder, build_control_batch
from tests.waiting import wait_until

from ..handlers import fetch_response, list_offsets_response, serve_batches
from ..scripted_broker import CLOSE, ClusterView, ScriptedBroker, default_api_ranges

TP = TopicPartition("t", 0)
FAST = {"retry_backoff_ms": 1, "retry_backoff_max_ms": 5, "default_api_timeout_ms": 5000, "request_timeout_ms": 5000}


def batches(count: int, per_batch: int = 10) -> list[bytes]:
    out = []
    for base in range(0, count * per_batch, per_batch):
        b = RecordBatchBuilder(base_offset=base)
        for i in range(per_batch):
            b.append(1000 + base + i, None, b"v%d" % (base + i))
        out.append(b.build())
    return out


@pytest.fixture
def cluster():
    brokers = [ScriptedBroker(0), ScriptedBroker(1)]
    view = ClusterView(brokers, topics={"t": {0: 0, 1: 1}})
    view.install()
    yield view
    for b in brokers:
        b.stop()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_bootstrap_skips_unreachable_servers(cluster):
    dead = f"127.0.0.1:{closed_port()}"
    with KafkaClient([dead, cluster.brokers[0].address], **FAST) as client:
        assert client.topics() == {"t": 2}


def test_no_reachable_bootstrap_server_is_a_clear_error():
    dead = f"127.0.0.1:{closed_port()}"
    with KafkaClient(dead, **{**FAST, "default_api_timeout_ms": 200}) as client:
        with pytest.raises(
            BrokerNotAvailableError, match=rf"cannot connect to any bootstrap server: {dead} \(connection refused\)"
        ):
            client.topics()


def test_partitions_and_leaders_come_from_metadata(cluster):
    with KafkaClient(cluster.brokers[1].address, **FAST) as client:
        assert client.partitions_for("t") == [0, 1]
        assert client.leader_for(TopicPartition("t", 1)) == 1
        with pytest.raises(KafkaClientError, match="partition 5 of topic t does not exist"):
            client.leader_for(TopicPartition("t", 5))


def test_an_unknown_topic_fails_after_a_few_quick_retries(cluster):
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        with pytest.raises(KafkaClientError, match="UNKNOWN_TOPIC_OR_PARTITION") as info:
            client.partitions_for("missing")
        assert info.value.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert info.value.topic == "missing"
        assert len(cluster.brokers[0].requests(3)) == 4  # the first ask and three retries


def test_leader_lookup_waits_while_a_partition_has_no_leader(cluster):
    cluster.topics["t"][0] = -1
    calls = {"n": 0}
    original = cluster.metadata

    def electing(request, conn):
        calls["n"] += 1
        if calls["n"] == 3:
            cluster.topics["t"][0] = 1
        return original(request, conn)

    for b in cluster.brokers:
        b.handlers[3] = electing
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        assert client.leader_for(TP) == 1
    assert calls["n"] >= 3


def test_list_offsets_groups_partitions_by_leader_and_resolves_specs(cluster):
    table = {("t", 0): {-2: 5, -1: 50}, ("t", 1): {-2: 0, -1: 7}}
    for b in cluster.brokers:
        b.handlers[2] = lambda request, _: list_offsets_response(
            request, lambda topic, p, spec: (0, table[(topic, p)][spec], -1)
        )
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        got = client.list_offsets({TP: OffsetSpec.EARLIEST, TopicPartition("t", 1): OffsetSpec.LATEST})
    assert got == {TP: 5, TopicPartition("t", 1): 7}
    assert len(cluster.brokers[0].requests(2)) == 1 and len(cluster.brokers[1].requests(2)) == 1


def test_a_timestamp_without_a_match_gives_the_latest_offset_or_kafkas_raw_answer(cluster):
    def answer(topic, p, spec):
        if spec == -1:
            return 0, 42, -1
        if spec >= 0:
            return (0, 10, spec + 3) if spec < 5000 else (0, -1, -1)
        return 0, 0, -1

    cluster.brokers[0].handlers[2] = lambda request, _: list_offsets_response(request, answer)
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        assert client.list_offsets_with_timestamps({TP: 1000}) == {TP: (10, 1003)}
        assert client.list_offsets({TP: 9000}) == {TP: 42}
        assert client.list_offsets_with_timestamps({TP: 9000}) == {TP: (42, -1)}
        assert client.list_offsets_with_timestamps({TP: 9000}, no_match="raw") == {TP: (-1, -1)}
    versions = {s.version for s in cluster.brokers[0].requests(2)}
    assert versions == {11}  # the newest ListOffsets both sides have (Kafka 4.x's)


def test_list_offsets_retries_on_a_moved_leader(cluster):
    def old_leader(request, _):
        cluster.topics["t"][0] = 1  # the partition moved
        return list_offsets_response(request, lambda *a: (int(ErrorCode.NOT_LEADER_OR_FOLLOWER), -1, -1))

    cluster.brokers[0].handlers[2] = old_leader
    cluster.brokers[1].handlers[2] = lambda request, _: list_offsets_response(request, lambda *a: (0, 99, -1))
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        assert client.list_offsets({TP: OffsetSpec.LATEST}) == {TP: 99}


def test_fetch_batches_yields_the_range_in_order_with_partition_state(cluster):
    cluster.brokers[0].handlers[1] = serve_batches(batches(5), hw=50)
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        got = list(client.fetch_batches(TP, 15, 35, max_bytes=300))
        assert [(f.base_offset, f.last_offset) for f in got] == [(10, 19), (20, 29), (30, 39)]
        assert all(f.high_watermark == 50 for f in got)
        assert client.stats["ranges_fetched"] == [("t", 0, 15, 35)]
        assert client.stats["bytes_fetched"] > 0 and client.stats["batches_fetched"] == 3


def test_fetch_without_end_stops_at_the_high_watermark_of_the_first_response(cluster):
    cluster.brokers[0].handlers[1] = serve_batches(batches(3))
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        assert [f.base_offset for f in client.fetch_batches(TP, 0)] == [0, 10, 20]
        assert list(client.fetch_batches(TP, 30)) == []


def test_the_next_fetch_is_sent_before_the_current_batches_are_consumed(cluster):
    broker = cluster.brokers[0]
    broker.handlers[1] = serve_batches(batches(4), hw=40)
    with KafkaClient(broker.address, **FAST) as client:
        it = client.fetch_batches(TP, 0, 40, max_bytes=200)
        first = next(it)
        assert first.base_offset == 0
        wait_until(lambda: len(broker.requests(1)) >= 2, 2, "the second fetch to go out")
        offsets = [s.body.topics[0].partitions[0].fetch_offset for s in broker.requests(1)]
        assert offsets[:2] == [0, 10]  # the second fetch went out while the caller held the first batch
        assert [f.base_offset for f in it] == [10, 20, 30]


def test_fetch_follows_a_leader_move_and_continues_from_the_same_offset(cluster):
    data = batches(4)

    def old_leader(request, _):
        p = request.body.topics[0].partitions[0]
        if p.fetch_offset >= 20:
            cluster.topics["t"][0] = 1
            return fetch_response("t", 0, error=int(ErrorCode.NOT_LEADER_OR_FOLLOWER), hw=-1)
        return serve_batches(data, hw=40)(request, _)

    cluster.brokers[0].handlers[1] = old_leader
    cluster.brokers[1].handlers[1] = serve_batches(data, hw=40)
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        got = [f.base_offset for f in client.fetch_batches(TP, 0, 40, max_bytes=200)]
    assert got == [0, 10, 20, 30]
    assert [s.body.topics[0].partitions[0].fetch_offset for s in cluster.brokers[1].requests(1)][0] == 20


def test_fetch_survives_a_dropped_connection(cluster):
    data = batches(3)
    served = serve_batches(data, hw=30)
    state = {"dropped": False}

    def flaky(request, conn):
        if request.body.topics[0].partitions[0].fetch_offset == 10 and not state["dropped"]:
            state["dropped"] = True
            return CLOSE
        return served(request, conn)

    cluster.brokers[0].handlers[1] = flaky
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        assert [f.base_offset for f in client.fetch_batches(TP, 0, 30, max_bytes=200)] == [0, 10, 20]
    assert state["dropped"]


def test_an_offset_outside_the_log_raises_with_the_log_bounds(cluster):
    broker = cluster.brokers[0]
    broker.handlers[1] = lambda request, _: fetch_response("t", 0, error=int(ErrorCode.OFFSET_OUT_OF_RANGE), hw=-1)
    broker.handlers[2] = lambda request, _: list_offsets_response(
        request, lambda t, p, spec: (0, 100 if spec == -2 else 250, -1)
    )
    with KafkaClient(broker.address, **FAST) as client:
        with pytest.raises(OffsetOutOfRangeError, match=r"offset 3 of t-0 is out of range .* \[100, 250\)") as info:
            list(client.fetch_batches(TP, 3, 10))
    assert (info.value.log_start_offset, info.value.high_watermark, info.value.offset) == (100, 250, 3)


def test_waiting_for_offsets_beyond_the_high_watermark_times_out(cluster):
    cluster.brokers[0].handlers[1] = serve_batches(batches(1), hw=10)
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        it = client.fetch_batches(TP, 0, 20, max_wait_ms=20, timeout_ms=200)
        assert next(it).base_offset == 0
        with pytest.raises(KafkaTimeoutError, match=r"no records of t-0 at offset 10 .* high watermark 10"):
            next(it)


def test_old_brokers_get_old_fetch_versions_and_legacy_message_sets_are_converted():
    ranges = default_api_ranges()
    ranges[1] = (0, 3)
    broker = ScriptedBroker(0, api_ranges=ranges)
    ClusterView([broker], topics={"t": {0: 0}}).install()
    legacy = LegacyMessageSetBuilder(1, base_offset=0)
    for i in range(4):
        legacy.append(100 + i, None, b"m%d" % i)
    broker.handlers[1] = lambda request, _: fetch_response("t", 0, records=legacy.build(), hw=4)
    try:
        with KafkaClient(broker.address, **FAST) as client:
            got = list(client.fetch_batches(TP, 0, 4))
            assert [r.value for f in got for r in f.batch.records()] == [b"m0", b"m1", b"m2", b"m3"]
            assert {s.version for s in broker.requests(1)} == {3}
            with pytest.raises(NoCommonVersionError, match="read_committed needs Fetch v4"):
                list(client.fetch_batches(TP, 0, 4, isolation_level=1))
    finally:
        broker.stop()


def test_fetch_grows_the_partition_size_when_an_old_broker_returns_only_part_of_a_batch():
    ranges = default_api_ranges()
    ranges[1] = (0, 2)
    broker = ScriptedBroker(0, api_ranges=ranges)
    ClusterView([broker], topics={"t": {0: 0}}).install()
    legacy = LegacyMessageSetBuilder(1, base_offset=0)
    legacy.append(1, None, b"x" * 500)
    data = legacy.build()
    broker.handlers[1] = lambda request, _: fetch_response(
        "t", 0, records=data[: request.body.topics[0].partitions[0].partition_max_bytes], hw=1
    )
    try:
        with KafkaClient(broker.address, **FAST) as client:
            got = list(client.fetch_batches(TP, 0, 1, max_bytes=100))
            assert [r.value for f in got for r in f.batch.records()] == [b"x" * 500]
            sizes = [s.body.topics[0].partitions[0].partition_max_bytes for s in broker.requests(1)]
            assert sizes[0] == 100 and sizes[-1] >= len(data)
    finally:
        broker.stop()


def test_bad_ranges_are_rejected_before_any_request(cluster):
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        with pytest.raises(ValueError, match=r"empty or reversed: \[5, 2\)"):
            client.fetch_batches(TP, 5, 2)
        with pytest.raises(ValueError, match="must be >= 0"):
            client.fetch_batches(TP, -1)
    assert cluster.brokers[0].connections == 0


def test_read_committed_fetch_stops_at_the_last_stable_offset_and_skips_aborted_batches(cluster):
    def txn_batch(base, pid):
        b = RecordBatchBuilder(base_offset=base, producer_id=pid, producer_epoch=0, is_transactional=True)
        b.append(1, None, b"p%d-%d" % (pid, base))
        return b.build()

    data = (
        txn_batch(0, 5)
        + build_control_batch(
            "abort", producer_id=5, producer_epoch=0, coordinator_epoch=0, timestamp_ms=1, base_offset=1
        )
        + txn_batch(2, 6)
        + build_control_batch(
            "commit", producer_id=6, producer_epoch=0, coordinator_epoch=0, timestamp_ms=1, base_offset=3
        )
        + txn_batch(4, 7)  # an open transaction: beyond the last stable offset
    )
    aborted = [SimpleNamespace(producer_id=5, first_offset=0)]
    cluster.brokers[0].handlers[1] = lambda request, _: fetch_response(
        "t",
        0,
        records=data,
        hw=5,
        lso=4,
        aborted=aborted if request.body.isolation_level == 1 else None,
    )
    with KafkaClient(cluster.brokers[0].address, isolation_level="read_committed", **FAST) as client:
        got = [r.value for f in client.fetch_batches(TP, 0) for r in f.batch.records()]
    assert got == [b"p6-2"]
    requests = cluster.brokers[0].requests(1)
    assert requests[0].body.isolation_level == 1 and requests[0].version >= 4


def test_a_metadata_top_level_error_is_raised_and_the_broker_is_not_believed(cluster):
    """Metadata v13+ carries a top-level error (KIP-1102: REBOOTSTRAP_REQUIRED): the answer's brokers and topics
    are not used, the error names itself, and the connection is dropped so the next attempt asks afresh."""
    answered = cluster.brokers[0].handlers[int(ApiKey.METADATA)]

    def rebootstrap(request, conn):
        response = answered(request, conn)
        if request.version >= 13:
            response.error_code = ErrorCode.REBOOTSTRAP_REQUIRED
        return response

    cluster.brokers[0].handlers[int(ApiKey.METADATA)] = rebootstrap
    with KafkaClient(cluster.brokers[0].address, **FAST) as client:
        with pytest.raises(KafkaClientError, match="REBOOTSTRAP_REQUIRED") as info:
            client.refresh_metadata_once(["t"])
        assert info.value.error_code == ErrorCode.REBOOTSTRAP_REQUIRED
        assert client.metadata.updated_at == 0.0  # nothing of that answer was taken in
        cluster.brokers[0].handlers[int(ApiKey.METADATA)] = answered
        assert client.partitions_for("t") == [0, 1]
