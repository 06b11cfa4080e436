"""``ClientTelemetry``: Kafka's GetTelemetrySubscriptions/PushTelemetry rules over a manual clock, and the pushed
metrics it keeps."""

from __future__ import annotations

import uuid

import pytest

from broker.telemetry.otlp import CUMULATIVE
from broker.telemetry.store import ClientInfo, ClientTelemetry, kafka_uuid_string
from broker.telemetry.subscriptions import subscription_id
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.compression import compress

from . import otlp_builder as b

ZERO = uuid.UUID(int=0)
CLIENT = ClientInfo("app-1", "librdkafka", "2.16.1", "127.0.0.1", "40000")


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000.0

    def __call__(self) -> float:
        return self.ms


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def telemetry(clock):
    t = ClientTelemetry(max_bytes=4096, max_clients=2, clock=clock)
    t.replace_subscriptions({"all": {"metrics": "*", "interval.ms": "1000"}})
    return t


def payload(value: float = 1.0, delta: int = 5) -> bytes:
    return b.metrics_data(
        [
            b.gauge("org.apache.kafka.producer.record.queue.time.avg", [b.point(value)]),
            b.sum_("org.apache.kafka.producer.record.send.total", [b.point(delta, {"topic": "t"})]),
        ]
    )


def subscribe(telemetry, instance=ZERO):
    answer = telemetry.get_subscriptions(instance, CLIENT)
    assert answer.error_code == ErrorCode.NONE
    return answer


def test_a_zero_instance_id_gets_a_new_one_and_the_matching_subscription(telemetry):
    answer = subscribe(telemetry)
    assert answer.instance_id not in (ZERO, uuid.UUID(int=1))
    sub = answer.subscription
    assert (sub.metrics, sub.interval_ms) == (("*",), 1000)
    assert sub.subscription_id == subscription_id(("*",), 1000, answer.instance_id)
    assert subscribe(ClientTelemetry()).subscription.metrics == ()  # no subscription: push nothing


def test_asking_again_sooner_than_the_interval_is_throttled(telemetry, clock):
    first = subscribe(telemetry)
    clock.ms += 999
    assert telemetry.get_subscriptions(first.instance_id, CLIENT).error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    clock.ms += 1
    assert telemetry.get_subscriptions(first.instance_id, CLIENT).error_code == ErrorCode.NONE


def test_a_changed_subscription_is_answered_at_once_with_a_new_id(telemetry, clock):
    first = subscribe(telemetry)
    telemetry.set_subscription("producers", {"metrics": "org.apache.kafka.producer.", "interval.ms": "500"})
    second = subscribe(telemetry, first.instance_id)
    assert second.subscription.interval_ms == 500
    assert second.subscription.subscription_id != first.subscription.subscription_id
    telemetry.set_subscription("producers", {})
    telemetry.set_subscription("all", {})
    assert telemetry.subscription_names() == []
    assert subscribe(telemetry, first.instance_id).subscription.metrics == ()


def test_pushes_follow_kafkas_rate_rule(telemetry, clock):
    answer = subscribe(telemetry)
    iid, sid = answer.instance_id, answer.subscription.subscription_id
    assert telemetry.push(iid, sid, False, 0, payload(), CLIENT) == ErrorCode.NONE  # first push after a get
    clock.ms += 500
    assert telemetry.push(iid, sid, False, 0, payload(), CLIENT) == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    clock.ms += 500
    assert telemetry.push(iid, sid, False, 0, payload(), CLIENT) == ErrorCode.NONE
    clock.ms += 10
    assert telemetry.push(iid, sid, True, 0, payload(), CLIENT) == ErrorCode.NONE  # the terminating push
    clock.ms += 5000
    assert telemetry.push(iid, sid, False, 0, payload(), CLIENT) == ErrorCode.INVALID_REQUEST


def test_a_push_right_after_a_get_is_accepted_even_within_the_interval(telemetry, clock):
    answer = subscribe(telemetry)
    iid, sid = answer.instance_id, answer.subscription.subscription_id
    assert telemetry.push(iid, sid, False, 0, payload(), CLIENT) == ErrorCode.NONE
    clock.ms += 1000
    assert telemetry.get_subscriptions(iid, CLIENT).error_code == ErrorCode.NONE
    clock.ms += 1
    assert telemetry.push(iid, sid, False, 0, payload(), CLIENT) == ErrorCode.NONE


@pytest.mark.parametrize(
    "change, error",
    [
        ({"subscription_id": 12345}, ErrorCode.UNKNOWN_SUBSCRIPTION_ID),
        ({"compression_type": 5}, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
        ({"payload": b"\0" * 4097}, ErrorCode.TELEMETRY_TOO_LARGE),
        (
            {"payload": compress(4, b.metrics_data([b.gauge("x" * 5000, [b.point(1.0)])])), "compression_type": 4},
            ErrorCode.TELEMETRY_TOO_LARGE,
        ),
        ({"payload": b"\x0b\x0c"}, ErrorCode.INVALID_RECORD),
        ({"payload": b"\x28\xb5\x2f\xfd garbage", "compression_type": 4}, ErrorCode.INVALID_RECORD),
        ({"instance_id": ZERO}, ErrorCode.INVALID_REQUEST),
        ({"instance_id": uuid.UUID(int=1)}, ErrorCode.INVALID_REQUEST),
    ],
)
def test_a_refused_push_answers_kafkas_error(telemetry, change, error):
    answer = subscribe(telemetry)
    args = {
        "instance_id": answer.instance_id,
        "subscription_id": answer.subscription.subscription_id,
        "terminating": False,
        "compression_type": 0,
        "payload": payload(),
        "client": CLIENT,
    } | change
    assert telemetry.push(**args) == error
    assert telemetry.series() == []


def test_after_an_unknown_subscription_id_the_client_may_ask_again_at_once(telemetry, clock):
    answer = subscribe(telemetry)
    assert telemetry.push(answer.instance_id, 1, False, 0, payload(), CLIENT) == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
    clock.ms += 1
    assert telemetry.get_subscriptions(answer.instance_id, CLIENT).error_code == ErrorCode.NONE


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_pushed_metrics_are_kept_per_client_gauges_replaced_delta_sums_added(telemetry, clock, codec):
    answer = subscribe(telemetry)
    iid, sid = answer.instance_id, answer.subscription.subscription_id
    assert telemetry.push(iid, sid, False, codec, compress(codec, payload(1.5, 5)), CLIENT) == ErrorCode.NONE
    clock.ms += 1000
    assert telemetry.push(iid, sid, False, codec, compress(codec, payload(0.5, 7)), CLIENT) == ErrorCode.NONE
    got = {(s.name, s.kind): (dict(s.labels), s.value) for s in telemetry.series()}
    own = {"client_id": "app-1", "client_instance_id": kafka_uuid_string(iid)}
    assert got == {
        ("org.apache.kafka.producer.record.queue.time.avg", "gauge"): (own, 0.5),
        ("org.apache.kafka.producer.record.send.total", "counter"): (own | {"topic": "t"}, 12.0),
    }


def test_a_cumulative_sum_keeps_the_last_value(telemetry, clock):
    answer = subscribe(telemetry)
    iid, sid = answer.instance_id, answer.subscription.subscription_id
    for value in (10, 15):
        data = b.metrics_data([b.sum_("c.total", [b.point(value)], temporality=CUMULATIVE)])
        assert telemetry.push(iid, sid, False, 0, data, CLIENT) == ErrorCode.NONE
        clock.ms += 1000
    assert [s.value for s in telemetry.series()] == [15.0]


def test_metrics_expire_a_minute_after_the_last_push(telemetry, clock):
    answer = subscribe(telemetry)
    telemetry.push(answer.instance_id, answer.subscription.subscription_id, True, 0, payload(), CLIENT)
    clock.ms += 59_999
    assert len(telemetry.series()) == 2
    clock.ms += 1
    assert telemetry.series() == []


def test_only_the_most_recently_pushed_clients_keep_metrics(telemetry, clock):
    ids = []
    for _ in range(3):
        answer = subscribe(telemetry)
        ids.append(answer.instance_id)
        telemetry.push(answer.instance_id, answer.subscription.subscription_id, False, 0, payload(), CLIENT)
        clock.ms += 1
    kept = {dict(s.labels)["client_instance_id"] for s in telemetry.series()}
    assert kept == {kafka_uuid_string(i) for i in ids[1:]}


def test_a_closed_connection_forgets_its_instance_so_a_reconnecting_client_is_not_throttled(telemetry, clock):
    answer = subscribe(telemetry)
    iid = answer.instance_id
    assert telemetry.bind_connection(7, iid) is True
    assert telemetry.bind_connection(7, iid) is False
    telemetry.push(iid, answer.subscription.subscription_id, False, 0, payload(), CLIENT)
    clock.ms += 10
    assert telemetry.get_subscriptions(iid, CLIENT).error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    telemetry.connection_closed(7)
    assert telemetry.instance_count() == 0
    assert telemetry.get_subscriptions(iid, CLIENT).error_code == ErrorCode.NONE
    assert len(telemetry.series()) == 2  # what it pushed stays until it expires
