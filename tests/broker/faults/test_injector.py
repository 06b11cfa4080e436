"""``FaultInjector`` without a broker: which requests a rule matches, what the handler then sees, what is
answered, delays and tracking, the injections' life cycle, and thread safety."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

import pytest

from broker.api import NO_RESPONSE
from broker.faults import FaultInjector, resolve_api, resolve_error
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode, Request, RequestHeader

NLF = ErrorCode.NOT_LEADER_OR_FOLLOWER


def produce_request(partitions=(0, 1), acks=-1, client_id="c1"):
    api = API_BY_KEY[ApiKey.PRODUCE]
    t = api.Request.TopicProduceData
    body = api.Request(
        acks=acks,
        timeout_ms=1000,
        topic_data=[t(name="t", partition_data=[t.PartitionProduceData(index=p) for p in partitions])],
    )
    return Request(RequestHeader(ApiKey.PRODUCE, 9, 1, client_id), api, body)


def fetch_request(partitions=(0, 1)):
    api = API_BY_KEY[ApiKey.FETCH]
    t = api.Request.FetchTopic
    body = api.Request(topics=[t(topic="t", partitions=[t.FetchPartition(partition=p) for p in partitions])])
    return Request(RequestHeader(ApiKey.FETCH, 12, 2, "c1"), api, body)


def metadata_request(client_id="c1"):
    api = API_BY_KEY[ApiKey.METADATA]
    return Request(RequestHeader(ApiKey.METADATA, 12, 3, client_id), api, api.Request(topics=None))


CTX = SimpleNamespace(
    services=SimpleNamespace(
        metadata=SimpleNamespace(topic_by_id=lambda _id: None),
        handlers=SimpleNamespace(version_ranges=lambda: [(0, 3, 12), (18, 0, 4)]),
    )
)


class Handler:
    """A handler that records the bodies it sees and answers every partition with error 0."""

    def __init__(self):
        self.seen = []

    async def __call__(self, ctx, body):
        from broker.faults import error_response

        self.seen.append(body)
        if getattr(body, "acks", None) == 0:  # as the Produce handler: acks=0 is never answered
            return NO_RESPONSE
        api = API_BY_KEY[ApiKey.PRODUCE] if hasattr(body, "acks") else API_BY_KEY[ApiKey.FETCH]
        version = 9 if api.key == ApiKey.PRODUCE else 12
        return error_response(api, version, body, ErrorCode.NONE)


def answer(faults, request, handler=None):
    handler = handler or Handler()
    if not faults.live:
        return asyncio.run(handler(CTX, request.body)), handler
    return asyncio.run(faults.intercept(CTX, request, handler)), handler


def partition_codes(response):
    topics = response.responses
    out = {}
    for t in topics:
        for p in getattr(t, "partition_responses", None) or getattr(t, "partitions", []):
            out[getattr(p, "index", getattr(p, "partition_index", None))] = p.error_code
    return out


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("Produce", "Produce"),
        ("produce", "Produce"),
        (0, "Produce"),
        (ApiKey.FETCH, "Fetch"),
        ("list_offsets", "ListOffsets"),
    ],
)
def test_apis_are_named_by_kafka_name_or_key(given, name):
    assert resolve_api(given).name == name


@pytest.mark.parametrize(
    ("given", "code"),
    [("NOT_LEADER_OR_FOLLOWER", 6), ("not_leader_or_follower", 6), (6, 6), (NLF, 6), ("NONE", 0), (0, 0)],
)
def test_errors_are_named_by_kafka_name_or_code(given, code):
    assert resolve_error(given) == code


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f: f.push_errors("NoSuchApi", [6]), "unknown API"),
        (lambda f: f.push_errors("Produce", ["NO_SUCH_ERROR"]), "unknown Kafka error"),
        (lambda f: f.push_errors("Produce", []), "at least one error"),
        (lambda f: f.push_errors("JoinGroup", [6], topic="t"), "no topic partitions"),
        (lambda f: f.push_errors("Produce", [6], partition=0), "needs its topic"),
        (lambda f: f.push_errors("Produce", [6, 6], rtt_ms=[1]), "rtt_ms values"),
        (lambda f: f.set_rtt(-1), "negative"),
    ],
)
def test_bad_injections_are_refused_naming_the_problem(call, message):
    faults = FaultInjector()
    with pytest.raises(ValueError, match=message):
        call(faults)
    assert faults.active() == [] and not faults.live


def test_whole_request_errors_answer_in_order_without_running_the_handler():
    faults = FaultInjector()
    injection = faults.push_errors("Produce", [NLF, "NOT_ENOUGH_REPLICAS"])
    assert injection.remaining == 2 and faults.active() == [injection]
    first, h1 = answer(faults, produce_request())
    second, h2 = answer(faults, produce_request())
    third, h3 = answer(faults, produce_request())
    assert h1.seen == [] and h2.seen == [] and len(h3.seen) == 1
    assert partition_codes(first) == {0: NLF, 1: NLF}
    assert partition_codes(second) == {0: ErrorCode.NOT_ENOUGH_REPLICAS, 1: ErrorCode.NOT_ENOUGH_REPLICAS}
    assert partition_codes(third) == {0: 0, 1: 0}
    assert injection.remaining == 0 and not injection.active and not faults.live


def test_errors_of_another_api_do_not_touch_a_request():
    faults = FaultInjector()
    faults.push_errors("Fetch", [NLF])
    response, handler = answer(faults, produce_request())
    assert len(handler.seen) == 1 and partition_codes(response) == {0: 0, 1: 0}
    assert faults.active()[0].remaining == 1


def test_error_none_lets_its_request_through_and_counts():
    faults = FaultInjector()
    injection = faults.push_errors("Produce", [0, NLF])
    response, handler = answer(faults, produce_request())
    assert len(handler.seen) == 1 and partition_codes(response) == {0: 0, 1: 0}
    assert injection.remaining == 1


def test_an_acks_0_produce_with_an_error_gets_no_answer():
    faults = FaultInjector()
    faults.push_errors("Produce", [NLF])
    response, handler = answer(faults, produce_request(acks=0))
    assert response is NO_RESPONSE
    assert [b.topic_data for b in handler.seen] == [[]]  # the handler ran with nothing to write


def test_a_partition_error_takes_the_partition_out_of_a_write_and_answers_it():
    faults = FaultInjector()
    injection = faults.push_errors("Produce", [NLF], topic="t", partition=1)
    skipped, h0 = answer(faults, produce_request(partitions=(0, 2)))  # no partition 1: does not count
    assert injection.remaining == 1 and partition_codes(skipped) == {0: 0, 2: 0}
    response, handler = answer(faults, produce_request(partitions=(0, 1, 2)))
    assert [p.index for p in handler.seen[0].topic_data[0].partition_data] == [0, 2]
    assert partition_codes(response) == {0: 0, 1: NLF, 2: 0}
    assert not injection.active


def test_a_request_left_without_partitions_is_answered_without_the_handler():
    faults = FaultInjector()
    faults.push_errors("Produce", [NLF], topic="t")
    response, handler = answer(faults, produce_request(partitions=(0, 1)))
    assert handler.seen == [] and partition_codes(response) == {0: NLF, 1: NLF}


def test_a_read_partition_error_runs_the_whole_request_and_replaces_that_answer():
    faults = FaultInjector()
    faults.push_errors("Fetch", ["OFFSET_OUT_OF_RANGE"], topic="t", partition=0)
    response, handler = answer(faults, fetch_request())
    assert [p.partition for p in handler.seen[0].topics[0].partitions] == [0, 1]
    assert response.error_code == 0
    assert partition_codes(response) == {0: ErrorCode.OFFSET_OUT_OF_RANGE, 1: 0}


def test_whole_request_rules_go_before_partition_rules():
    faults = FaultInjector()
    partition_rule = faults.push_errors("Produce", [NLF], topic="t", partition=0)
    whole = faults.push_errors("Produce", ["REQUEST_TIMED_OUT"])
    response, _ = answer(faults, produce_request())
    assert partition_codes(response) == {0: ErrorCode.REQUEST_TIMED_OUT, 1: ErrorCode.REQUEST_TIMED_OUT}
    assert not whole.active and partition_rule.remaining == 1


def elapsed(faults, request, handler=None):
    start = time.monotonic()
    answer(faults, request, handler)
    return time.monotonic() - start


def test_delays_apply_to_their_api_and_client_and_add_up():
    faults = FaultInjector()
    with faults.set_rtt(150, api="Metadata"):
        assert elapsed(faults, produce_request()) < 0.1

        async def meta(ctx, body):
            return None

        assert elapsed(faults, metadata_request(), meta) >= 0.15
        with faults.delay_connections(100, client_id="slow"), faults.set_rtt(50):
            assert 0.05 <= elapsed(faults, produce_request()) < 0.14
            assert elapsed(faults, produce_request(client_id="slow")) >= 0.15
            assert elapsed(faults, metadata_request(client_id="slow"), meta) >= 0.3
    assert not faults.live


def test_a_pushed_error_carries_its_own_round_trip_time():
    faults = FaultInjector()
    faults.push_errors("Produce", [NLF, NLF], rtt_ms=[200, 0])
    assert elapsed(faults, produce_request()) >= 0.2
    assert elapsed(faults, produce_request()) < 0.15


def test_tracking_records_requests_until_undone():
    faults = FaultInjector()
    with faults.track_requests() as log:
        answer(faults, produce_request(client_id="a"))
        answer(faults, fetch_request())
    answer(faults, produce_request())
    assert [(r.api, r.version, r.client_id) for r in log.requests] == [("Produce", 9, "a"), ("Fetch", 12, "c1")]
    api, version, client_id, at = log.requests[0]
    assert (api, version, client_id) == ("Produce", 9, "a") and abs(at - time.time()) < 60
    assert log.count("Produce") == 1 and log.count() == 2


def test_context_exit_undo_and_clear_end_injections():
    faults = FaultInjector()
    with faults.push_errors("Produce", [NLF]) as injection:
        assert faults.live and injection.active
    assert not injection.active and not faults.live
    a, b = faults.set_rtt(10), faults.push_errors("Fetch", [NLF, NLF])
    a.undo()
    a.undo()  # idempotent
    assert faults.active() == [b]
    faults.clear()
    assert faults.active() == [] and not faults.live and b.remaining == 2


def test_drop_connections_before_the_broker_serves_closes_nothing():
    assert FaultInjector().drop_connections() == 0


def test_injections_from_many_threads_while_requests_are_answered_each_count_once():
    faults = FaultInjector()
    faults.push_errors("Fetch", [NLF])  # keeps the injector live throughout
    pushed = []

    def push():
        for _ in range(50):
            pushed.append(faults.push_errors("Produce", [NLF]))

    threads = [threading.Thread(target=push) for _ in range(4)]
    for t in threads:
        t.start()
    answered = 0
    while any(t.is_alive() for t in threads) or any(i.active for i in pushed):
        response, handler = answer(faults, produce_request())
        answered += handler.seen == []
    for t in threads:
        t.join()
    assert len(pushed) == 200 and answered == 200
    assert all(i.remaining == 0 for i in pushed)


def test_an_api_versions_error_still_lists_the_served_versions():
    faults = FaultInjector()
    faults.push_errors("ApiVersions", ["UNSUPPORTED_VERSION"])
    api = API_BY_KEY[ApiKey.API_VERSIONS]
    request = Request(RequestHeader(ApiKey.API_VERSIONS, 3, 1, "c"), api, api.Request())
    response, handler = answer(faults, request)
    assert handler.seen == [] and response.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(0, 3, 12), (18, 0, 4)]
