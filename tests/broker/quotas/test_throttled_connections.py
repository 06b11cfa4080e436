"""Quotas on a running broker (KIP-219): a client over its byte rate is answered at once with
throttle_time_ms, then its connection is muted for that long; a throttled Fetch is empty; other clients of the
same broker go on unaffected; the Prometheus endpoint shows the sensors under Kafka's names.

Windows of 2 samples × 1 s keep the throttle times near one second.
"""

from __future__ import annotations

import time

import pytest
from prometheus_client import generate_latest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, encode_request

from ..conftest import start_brokers
from ..requests import batch, create, fetch_body, produce_body, unique
from ..wire import Wire

K = ApiKey


class ClientWire(Wire):
    """A Wire whose requests carry ``client_id``."""

    def __init__(self, address: str, client_id: str) -> None:
        super().__init__(address)
        self.client_id = client_id

    def send(self, api_key: int, version: int, body=None, **fields) -> int:
        body = body if body is not None else API_BY_KEY[api_key].Request(**fields)
        self._cid += 1
        data = encode_request(api_key, version, self._cid, body, client_id=self.client_id, framed=True)
        self.sock.sendall(data)
        return self._cid


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, quota_window_num=2, quota_window_size_seconds=1)
    yield b
    b.stop()


def _set_quota(broker, path: str, **quotas: float) -> None:
    broker.call(lambda: broker.broker.quotas.set_quota(path, **quotas))


def _topic(broker) -> str:
    name = unique("quota")
    with Wire(broker.bootstrap_servers) as w:
        assert create(w, name).error_code == 0
    return name


def _timed(w: Wire, api_key: int, version: int, body):
    started = time.monotonic()
    resp = w.call(api_key, version, body)
    return resp, time.monotonic() - started


def test_a_producer_over_its_byte_rate_is_answered_at_once_then_muted(broker):
    topic = _topic(broker)
    _set_quota(broker, "clients/slow-producer", producer_byte_rate=10_000)
    records = batch([b"x" * 1000] * 20)  # 20 kB: twice what the 1 s window allows
    with (
        ClientWire(broker.bootstrap_servers, "slow-producer") as slow,
        ClientWire(broker.bootstrap_servers, "other-producer") as other,
    ):
        started = time.monotonic()
        resp, took = _timed(slow, K.PRODUCE, 9, produce_body(topic, 0, records))
        assert resp.responses[0].partition_responses[0].error_code == 0
        assert 900 <= resp.throttle_time_ms <= 1200  # (20 kB/s - 10 kB/s) / 10 kB/s × 1 s
        assert took < 0.5, "a throttled response is sent at once"
        # another client of the same broker meanwhile: not throttled, not delayed
        for _ in range(3):
            resp2, took2 = _timed(other, K.PRODUCE, 9, produce_body(topic, 0, records))
            assert resp2.throttle_time_ms == 0 and took2 < 0.5
        # the throttled connection reads its next request only once the throttle time is over
        slow.call(K.METADATA, 9, topics=[], allow_auto_topic_creation=False)
        assert time.monotonic() - started >= resp.throttle_time_ms / 1000 * 0.9

    text = generate_latest(broker.broker.metrics.registry).decode()
    assert 'kafka_server_produce_byte_rate{client_id="slow-producer",user=""}' in text
    assert 'kafka_server_produce_throttle_time{client_id="slow-producer",user=""}' in text
    # once a Produce quota exists every client's rate is measured (as Kafka's); this one was never throttled
    assert 'kafka_server_produce_throttle_time{client_id="other-producer",user=""} 0.0' in text


def test_a_throttled_fetch_is_empty_and_mutes_the_consumer(broker):
    topic = _topic(broker)
    with ClientWire(broker.bootstrap_servers, "loader") as w:
        for _ in range(8):
            w.call(K.PRODUCE, 9, produce_body(topic, 0, batch([b"y" * 1000] * 4)))  # 8 batches of ~4 kB
    _set_quota(broker, "clients/slow-consumer", consumer_byte_rate=10_000)  # at most 10 kB per fetch
    with (
        ClientWire(broker.bootstrap_servers, "slow-consumer") as slow,
        ClientWire(broker.bootstrap_servers, "fast-consumer") as fast,
    ):
        offset = 0
        throttled = None
        for _ in range(6):
            resp = slow.call(K.FETCH, 12, fetch_body(topic, 0, offset, max_bytes=1 << 20))
            if resp.throttle_time_ms:
                throttled = resp
                break
            (part,) = resp.responses[0].partitions
            assert 0 < len(part.records) <= 12_000  # capped at the quota window's bytes
            offset += 4 * (len(part.records) // 4000)
        assert throttled is not None, "the consumer was never throttled"
        assert throttled.responses == [], "a throttled fetch answers empty"
        assert 0 < throttled.throttle_time_ms <= 2000
        muted_at = time.monotonic()
        # another consumer meanwhile: full answers at once
        resp, took = _timed(fast, K.FETCH, 12, fetch_body(topic, 0, 0, max_bytes=1 << 20))
        assert resp.throttle_time_ms == 0 and took < 0.5
        assert len(resp.responses[0].partitions[0].records) > 30_000
        # the throttled consumer's next request waits for the mute
        slow.call(K.METADATA, 9, topics=[], allow_auto_topic_creation=False)
        assert time.monotonic() - muted_at >= throttled.throttle_time_ms / 1000 * 0.8


def test_a_user_quota_applies_to_every_client_id_of_the_principal(broker):
    topic = _topic(broker)
    _set_quota(broker, "users/ANONYMOUS", producer_byte_rate=10_000)  # PLAINTEXT principal: User:ANONYMOUS
    try:
        records = batch([b"z" * 1000] * 6)  # 6 kB each: the second client id's pushes the shared rate over
        with ClientWire(broker.bootstrap_servers, "a") as a, ClientWire(broker.bootstrap_servers, "b") as b:
            assert a.call(K.PRODUCE, 9, produce_body(topic, 0, records)).throttle_time_ms == 0
            assert b.call(K.PRODUCE, 9, produce_body(topic, 0, records)).throttle_time_ms > 0
    finally:
        broker.call(lambda: broker.broker.quotas.update_entity((("user", "ANONYMOUS"),), {}))


def test_pipelined_requests_behind_a_throttled_one_wait_for_the_mute(broker):
    topic = _topic(broker)
    _set_quota(broker, "clients/pipelining", producer_byte_rate=10_000)
    records = batch([b"p" * 1000] * 20)
    with ClientWire(broker.bootstrap_servers, "pipelining") as w:
        started = time.monotonic()
        first = w.send(K.PRODUCE, 9, produce_body(topic, 0, records))  # both in the socket before either is read
        second = w.send(K.METADATA, 9, topics=[], allow_auto_topic_creation=False)
        cid, resp = w.receive(K.PRODUCE, 9)
        assert cid == first and resp.throttle_time_ms >= 900
        answered_first = time.monotonic() - started
        cid, _ = w.receive(K.METADATA, 9)
        assert cid == second
        assert answered_first < 0.5
        assert time.monotonic() - started >= resp.throttle_time_ms / 1000 * 0.9


def test_an_acks_0_producer_over_its_rate_is_muted_without_a_response(broker):
    topic = _topic(broker)
    _set_quota(broker, "clients/fire-and-forget", producer_byte_rate=10_000)
    with ClientWire(broker.bootstrap_servers, "fire-and-forget") as w:
        started = time.monotonic()
        w.send(K.PRODUCE, 9, produce_body(topic, 0, batch([b"f" * 1000] * 20), acks=0))
        w.call(K.METADATA, 9, topics=[], allow_auto_topic_creation=False)
        assert time.monotonic() - started >= 0.8  # (20 kB/s - 10 kB/s) / 10 kB/s × 1 s, less timing slack


def test_a_request_percentage_quota_throttles_and_mutes(broker):
    _set_quota(broker, "clients/busy", request_percentage=0.01)  # 0.1 ms of handler time per second
    try:
        with ClientWire(broker.bootstrap_servers, "busy") as w:
            throttles = []
            for _ in range(5):
                started = time.monotonic()
                resp = w.call(K.METADATA, 9, topics=None, allow_auto_topic_creation=False)
                throttles.append((resp.throttle_time_ms, time.monotonic() - started))
            assert any(ms > 0 for ms, _ in throttles), throttles
            assert all(ms <= 1000 for ms, _ in throttles), "a request throttle is at most one window"
            # every request after a throttled one waited for the mute
            for (ms, _), (_, took) in zip(throttles, throttles[1:], strict=False):
                assert took >= ms / 1000 * 0.8
    finally:
        broker.call(lambda: broker.broker.quotas.update_entity((("client-id", "busy"),), {}))


def test_without_quotas_nothing_is_measured(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory)
    try:
        topic = _topic(b)
        with ClientWire(b.bootstrap_servers, "anyone") as w:
            resp = w.call(K.PRODUCE, 9, produce_body(topic, 0, batch([b"n" * 1000] * 50)))
            assert resp.throttle_time_ms == 0
            assert w.call(K.FETCH, 12, fetch_body(topic, 0, 0)).throttle_time_ms == 0
        assert b.broker is not None
        quotas = b.broker.quotas
        assert b.call(quotas.figures) == []
    finally:
        b.stop()


def test_a_quota_set_with_alter_client_quotas_throttles_the_client(broker):
    from spark_kafkalog.client import AdminClient
    from spark_kafkalog.client.admin.admin_quotas import ClientQuotaAlteration, ClientQuotaEntity, QuotaOp
    from tests.waiting import wait_until

    topic = _topic(broker)
    entity = ClientQuotaEntity.of(client_id="altered")
    with AdminClient(broker.bootstrap_servers) as admin:
        admin.alter_client_quotas([ClientQuotaAlteration(entity, (QuotaOp("producer_byte_rate", 10_000.0),))])
    bounds = broker.broker.quotas.produce.bounds
    wait_until(lambda: broker.call(bounds) == {(("client-id", "altered"),): 10_000.0}, 10, "the broker applied it")
    with ClientWire(broker.bootstrap_servers, "altered") as w:
        resp = w.call(K.PRODUCE, 9, produce_body(topic, 0, batch([b"a" * 1000] * 20)))
        assert resp.throttle_time_ms >= 900
    with AdminClient(broker.bootstrap_servers) as admin:
        admin.alter_client_quotas([ClientQuotaAlteration(entity, (QuotaOp("producer_byte_rate", None),))])
    wait_until(lambda: not broker.call(bounds), 10, "the quota removed")
