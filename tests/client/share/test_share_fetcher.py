"""ShareFetcher's wire traffic against scripted brokers: session epochs per leader as sent, incremental partition
lists and ForgottenTopicsData, acknowledgements piggy-backed or sent with ShareAcknowledge to the broker that
acquired the records, session resets on errors and lost connections, closing at epoch -1, acquired records decoded,
a broker without share groups."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.client import KafkaClient, TopicPartition
from spark_kafkalog.client.errors import KafkaTimeoutError, NoCommonVersionError
from spark_kafkalog.client.share.acknowledgements import AcknowledgementBatch
from spark_kafkalog.client.share.share_fetcher import ShareFetcher
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records.batch_builder import build_batch

from ..scripted_broker import CLOSE, NO_RESPONSE, ClusterView, ScriptedBroker, default_api_ranges

FAST = {"request_timeout_ms": 2000, "retry_backoff_ms": 10, "default_api_timeout_ms": 5000}
SF = API_BY_KEY[ApiKey.SHARE_FETCH].Response
SA = API_BY_KEY[ApiKey.SHARE_ACKNOWLEDGE].Response
T_ID = uuid.uuid4()
IDS = {"t": T_ID}
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
ACK = [AcknowledgementBatch(0, 1, (1,))]


class Leader:
    """A scripted broker answering ShareFetch and ShareAcknowledge; ``records`` are served once per partition."""

    def __init__(self, node: int) -> None:
        self.broker = ScriptedBroker(node)
        self.records: dict[int, tuple[bytes, list[tuple[int, int, int]]]] = {}
        self.fetch_error = 0
        self.ack_partition_error = 0
        self.broker.handlers[int(ApiKey.SHARE_FETCH)] = self.share_fetch
        self.broker.handlers[int(ApiKey.SHARE_ACKNOWLEDGE)] = self.share_acknowledge

    def share_fetch(self, request, _conn):
        body = request.body
        if self.fetch_error:
            return SF(
                throttle_time_ms=0,
                error_code=self.fetch_error,
                acquisition_lock_timeout_ms=0,
                responses=[],
                node_endpoints=[],
            )
        P = SF.ShareFetchableTopicResponse.PartitionData
        parts = []
        listed = {p.partition_index for t in body.topics for p in t.partitions}
        for p in sorted(listed | set(self.records)):
            data, ranges = self.records.pop(p, (b"", []))
            parts.append(
                P(
                    partition_index=p,
                    error_code=0,
                    acknowledge_error_code=0,
                    current_leader=P.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1),
                    records=data,
                    acquired_records=[
                        P.AcquiredRecords(first_offset=f, last_offset=last, delivery_count=c) for f, last, c in ranges
                    ],
                )
            )
        topic = SF.ShareFetchableTopicResponse(topic_id=T_ID, partitions=parts)
        return SF(
            throttle_time_ms=0, error_code=0, acquisition_lock_timeout_ms=30000, responses=[topic], node_endpoints=[]
        )

    def share_acknowledge(self, request, _conn):
        P = SA.ShareAcknowledgeTopicResponse.PartitionData
        topics = [
            SA.ShareAcknowledgeTopicResponse(
                topic_id=t.topic_id,
                partitions=[
                    P(
                        partition_index=p.partition_index,
                        error_code=self.ack_partition_error,
                        current_leader=P.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1),
                    )
                    for p in t.partitions
                ],
            )
            for t in request.body.topics
        ]
        return SA(
            throttle_time_ms=0, error_code=0, acquisition_lock_timeout_ms=30000, responses=topics, node_endpoints=[]
        )

    def fetches(self):
        return [s.body for s in self.broker.requests(int(ApiKey.SHARE_FETCH))]

    def acknowledges(self):
        return [s.body for s in self.broker.requests(int(ApiKey.SHARE_ACKNOWLEDGE))]


def listed(body):
    return sorted(
        (
            t.topic_id,
            p.partition_index,
            [(b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in p.acknowledgement_batches],
        )
        for t in body.topics
        for p in t.partitions
    )


def forgotten(body):
    return sorted((t.topic_id, p) for t in body.forgotten_topics_data for p in t.partitions)


@pytest.fixture()
def leaders():
    ls = [Leader(0), Leader(1)]
    view = ClusterView([leader.broker for leader in ls], topics={"t": {0: 0, 1: 1}})
    view.install()
    yield ls
    for leader in ls:
        leader.broker.stop()


@pytest.fixture()
def fetcher(leaders):
    client = KafkaClient(leaders[0].broker.address, **FAST)
    yield ShareFetcher(client, "g", "member-1")
    client.close()


def test_each_leader_gets_its_own_session_and_later_fetches_are_incremental(leaders, fetcher):
    fetcher.fetch({0: {T0}, 1: {T1}}, {}, IDS, 0)
    (first0,), (first1,) = leaders[0].fetches(), leaders[1].fetches()
    assert (first0.group_id, first0.member_id, first0.share_session_epoch) == ("g", "member-1", 0)
    assert listed(first0) == [(T_ID, 0, [])] and listed(first1) == [(T_ID, 1, [])]
    fetcher.fetch({0: {T0}, 1: {T1}}, {}, IDS, 0)
    second0 = leaders[0].fetches()[1]
    assert second0.share_session_epoch == 1 and listed(second0) == [] and forgotten(second0) == []
    fetcher.fetch({1: {T1}}, {}, IDS, 0)  # T0 left the assignment: no fetch to leader 0 any more
    assert len(leaders[0].fetches()) == 2
    assert [b.share_session_epoch for b in leaders[1].fetches()] == [0, 1, 2]


def test_a_partition_no_longer_wanted_is_forgotten(leaders, fetcher):
    tp2 = TopicPartition("t", 2)
    fetcher.fetch({0: {T0, tp2}}, {}, IDS, 0)
    fetcher.fetch({0: {T0}}, {}, IDS, 0)
    assert forgotten(leaders[0].fetches()[1]) == [(T_ID, 2)]


def test_acquired_records_come_back_decoded_with_gaps(leaders, fetcher):
    data = bytes(build_batch([(1000, None, b"a", []), (1001, None, b"b", [])], base_offset=0))
    leaders[0].records[0] = (data, [(0, 2, 3)])
    fetched, results, errors = fetcher.fetch({0: {T0}}, {}, IDS, 0)
    (part,) = fetched
    assert part.tp == T0 and [(r.offset, r.value, r.delivery_count) for r in part.records] == [
        (0, b"a", 3),
        (1, b"b", 3),
    ]
    assert part.gaps == [2] and results == {} and errors == []
    assert fetcher.acquired_from[T0] == 0


def test_acknowledgements_ride_on_the_next_fetch_of_their_partition(leaders, fetcher):
    leaders[0].records[0] = (bytes(build_batch([(1, None, b"a", []), (2, None, b"b", [])])), [(0, 1, 1)])
    fetcher.fetch({0: {T0}}, {}, IDS, 0)
    _, results, _ = fetcher.fetch({0: {T0}}, {T0: ACK}, IDS, 0)
    body = leaders[0].fetches()[1]
    assert body.share_session_epoch == 1 and listed(body) == [(T_ID, 0, [(0, 1, [1])])]
    assert results == {T0: None} and not leaders[0].acknowledges()


def test_acknowledgements_of_a_partition_fetched_elsewhere_now_go_with_share_acknowledge_first(leaders, fetcher):
    leaders[0].records[0] = (bytes(build_batch([(1, None, b"a", []), (2, None, b"b", [])])), [(0, 1, 1)])
    fetcher.fetch({0: {T0}}, {}, IDS, 0)
    _, results, _ = fetcher.fetch({1: {T1}}, {T0: ACK}, IDS, 0)  # T0 no longer assigned
    (ack,) = leaders[0].acknowledges()
    assert ack.share_session_epoch == 1 and listed(ack) == [(T_ID, 0, [(0, 1, [1])])]
    assert results == {T0: None}
    assert fetcher.sessions[0].epoch == 2


def test_share_acknowledge_reports_partition_errors(leaders, fetcher):
    leaders[0].records[0] = (bytes(build_batch([(1, None, b"a", [])])), [(0, 0, 1)])
    fetcher.fetch({0: {T0}}, {}, IDS, 0)
    leaders[0].ack_partition_error = ErrorCode.INVALID_RECORD_STATE
    results = fetcher.wait(fetcher.acknowledge({T0: ACK}, IDS))
    assert results[T0] is not None and results[T0].error_code == ErrorCode.INVALID_RECORD_STATE
    assert "t-0" in str(results[T0])


@pytest.mark.parametrize("code", [ErrorCode.SHARE_SESSION_NOT_FOUND, ErrorCode.INVALID_SHARE_SESSION_EPOCH])
def test_a_lost_session_fails_its_acknowledgements_and_the_next_fetch_opens_a_new_one(leaders, fetcher, code):
    leaders[0].records[0] = (bytes(build_batch([(1, None, b"a", [])])), [(0, 0, 1)])
    fetcher.fetch({0: {T0}}, {}, IDS, 0)
    leaders[0].fetch_error = code
    _, results, _ = fetcher.fetch({0: {T0}}, {T0: ACK}, IDS, 0)
    assert results[T0] is not None and results[T0].error_code == code
    leaders[0].fetch_error = 0
    fetcher.fetch({0: {T0}}, {}, IDS, 0)
    assert [b.share_session_epoch for b in leaders[0].fetches()] == [0, 1, 0]
    # acknowledgements of records acquired under the lost session go to the new one (the broker answers for them)
    results = fetcher.wait(fetcher.acknowledge({T0: ACK}, IDS))
    assert results == {T0: None}  # the new session holds T0 again; its records were acquired from broker 0


def test_a_dropped_connection_resets_the_session(leaders, fetcher):
    fetcher.fetch({0: {T0}}, {}, IDS, 0)
    leaders[0].broker.handlers[int(ApiKey.SHARE_FETCH)] = lambda request, conn: CLOSE
    leaders[0].records[0] = (b"", [])
    fetcher.acquired_from[T0] = 0
    _, results, _ = fetcher.fetch({0: {T0}}, {T0: ACK}, IDS, 0)
    assert results[T0] is not None
    assert fetcher.sessions[0].epoch == 0


def test_acknowledgements_without_a_session_fail_without_being_sent(leaders, fetcher):
    results = fetcher.wait(fetcher.acknowledge({T0: ACK}, IDS))
    assert results[T0] is not None and results[T0].error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert "delivered again" in str(results[T0])
    assert not leaders[0].acknowledges()


def test_closing_sends_epoch_minus_1_to_every_open_session_once(leaders, fetcher):
    leaders[0].records[0] = (bytes(build_batch([(1, None, b"a", [])])), [(0, 0, 1)])
    fetcher.fetch({0: {T0}, 1: {T1}}, {}, IDS, 0)
    results = fetcher.wait(fetcher.acknowledge({T0: ACK}, IDS, close=True))
    assert results == {T0: None}
    (a0,), (a1,) = leaders[0].acknowledges(), leaders[1].acknowledges()
    assert (a0.share_session_epoch, listed(a0)) == (-1, [(T_ID, 0, [(0, 1, [1])])])
    assert (a1.share_session_epoch, listed(a1)) == (-1, [])
    assert all(s.closed for s in fetcher.sessions.values())
    fetcher.wait(fetcher.acknowledge({}, IDS, close=True))
    assert len(leaders[0].acknowledges()) == 1


def test_a_broker_without_share_groups_is_a_clear_error(leaders, fetcher):
    ranges = default_api_ranges()
    del ranges[int(ApiKey.SHARE_FETCH)]
    leaders[0].broker.api_ranges = ranges
    with pytest.raises(NoCommonVersionError, match="ShareFetch"):
        fetcher.fetch({0: {T0}}, {}, IDS, 0)


def test_an_acknowledgement_not_answered_in_time_fails_and_ends_the_session(leaders, fetcher):
    leaders[0].records[0] = (bytes(build_batch([(1, None, b"a", [])])), [(0, 0, 1)])
    fetcher.fetch({0: {T0}}, {}, IDS, 0)
    leaders[0].broker.handlers[int(ApiKey.SHARE_ACKNOWLEDGE)] = lambda request, conn: NO_RESPONSE
    results = fetcher.wait(fetcher.acknowledge({T0: ACK}, IDS), timeout_ms=200)
    assert isinstance(results[T0], KafkaTimeoutError)
    assert fetcher.sessions[0].epoch == 0


def test_a_refused_fetch_from_one_leader_keeps_the_records_of_the_other(leaders, fetcher):
    leaders[0].records[0] = (bytes(build_batch([(1, None, b"a", [])])), [(0, 0, 1)])
    leaders[1].fetch_error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    fetched, _, errors = fetcher.fetch({0: {T0}, 1: {T1}}, {}, IDS, 0)
    assert [(p.tp, [r.offset for r in p.records]) for p in fetched] == [(T0, [0])]
    (error,) = errors
    assert error.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED and "ShareFetch" in str(error)
