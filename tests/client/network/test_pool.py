"""The client's connection pool at bootstrap: a wrong or dead address fails within seconds naming it, a
cluster that starts late or restarts is waited for, and timeouts say what was waited for and how long.

Wall-time bounds here are correctness checks (the client did not wait for the 60 s
``default.api.timeout.ms``), far above the few seconds the behaviour takes."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from spark_kafkalog.client import (
    BrokerNotAvailableError,
    KafkaClient,
    KafkaClientError,
    KafkaTimeoutError,
    Producer,
)
from spark_kafkalog.client.network import pool

from ..scripted_broker import NO_RESPONSE, ClusterView, ScriptedBroker

NOT_THE_DEADLINE_S = 15  # far below default.api.timeout.ms (60 s)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def listener():
    """A TCP server that accepts connections and does what the test sets: "close" or "silent"."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    state = {"mode": "close", "open": []}

    def accept():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            if state["mode"] == "close":
                conn.close()
            else:
                state["open"].append(conn)

    threading.Thread(target=accept, daemon=True).start()
    yield state, f"127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    for conn in state["open"]:
        conn.close()


def test_a_refused_bootstrap_server_fails_within_seconds_naming_the_address():
    dead = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with KafkaClient(dead) as client:  # default settings: default.api.timeout.ms is 60 s
        with pytest.raises(BrokerNotAvailableError) as info:
            client.topics()
    assert time.monotonic() - started < NOT_THE_DEADLINE_S
    assert str(info.value).startswith(f"cannot connect to any bootstrap server: {dead} (connection refused); ")
    assert "\n" not in str(info.value)
    assert not info.value.retriable
    assert [f.address for f in info.value.failures] == [dead]


def test_every_failing_bootstrap_address_is_named_with_its_reason(monkeypatch):
    monkeypatch.setattr(pool, "BOOTSTRAP_REFUSED_GIVE_UP_S", 0.2)
    dead = f"127.0.0.1:{closed_port()}"
    with KafkaClient([dead, "no-such-host.invalid:9092"]) as client:
        with pytest.raises(BrokerNotAvailableError) as info:
            client.topics()
    text = str(info.value)
    assert f"{dead} (connection refused)" in text
    assert "no-such-host.invalid:9092 (unknown host" in text


def test_a_producer_pointed_at_a_dead_address_fails_its_first_send_within_seconds(monkeypatch):
    monkeypatch.setattr(pool, "BOOTSTRAP_REFUSED_GIVE_UP_S", 0.2)
    dead = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with Producer(dead) as producer:
        with pytest.raises(
            KafkaClientError, match=rf"cannot connect to any bootstrap server: {dead} \(connection refused\)"
        ):
            producer.send("t", b"v")
    assert time.monotonic() - started < NOT_THE_DEADLINE_S


def test_a_server_that_is_not_a_kafka_broker_fails_within_seconds(listener, monkeypatch):
    monkeypatch.setattr(pool, "BOOTSTRAP_REFUSED_GIVE_UP_S", 0.2)
    _, address = listener
    started = time.monotonic()
    with KafkaClient(address) as client:
        with pytest.raises(
            BrokerNotAvailableError, match=rf"{address} \(ApiVersions handshake failed: .*Kafka broker\?\)"
        ):
            client.topics()
    assert time.monotonic() - started < NOT_THE_DEADLINE_S


def test_a_silent_server_is_retried_until_the_deadline_and_the_error_says_what_was_waited_for(listener):
    state, address = listener
    state["mode"] = "silent"
    with KafkaClient(address, request_timeout_ms=300, default_api_timeout_ms=1000, retry_backoff_ms=10) as client:
        with pytest.raises(BrokerNotAvailableError) as info:
            client.topics()
    text = str(info.value)
    assert f"{address} (no answer to the ApiVersions handshake within 0.3 s (request.timeout.ms))" in text
    assert "Metadata: gave up after" in text and "(deadline 1.0 s)" in text


def test_an_unanswered_request_names_the_request_the_broker_and_the_time_waited():
    broker = ScriptedBroker(0, handlers={3: lambda request, _: NO_RESPONSE})
    try:
        with KafkaClient(broker.address, request_timeout_ms=300, default_api_timeout_ms=1000) as client:
            with pytest.raises(KafkaTimeoutError) as info:
                client.topics()
    finally:
        broker.stop()
    assert f"no answer to Metadata v13 from broker bootstrap ({broker.address}) within 0.3 s" in str(info.value)
    assert "Metadata: gave up after" in str(info.value)


def test_a_cluster_that_starts_a_moment_after_the_client_is_reached(monkeypatch):
    monkeypatch.setattr(pool, "BOOTSTRAP_REFUSED_GIVE_UP_S", 2.0)
    port = closed_port()
    started: list[ScriptedBroker] = []

    def start() -> None:
        broker = ScriptedBroker(0, port=port)
        ClusterView([broker], topics={"t": {0: 0}}).install()
        started.append(broker)

    timer = threading.Timer(0.5, start)
    timer.start()
    try:
        with KafkaClient(f"127.0.0.1:{port}", retry_backoff_ms=20, retry_backoff_max_ms=100) as client:
            assert client.topics() == {"t": 1}
    finally:
        timer.join()
        for b in started:
            b.stop()


def test_a_client_that_reached_its_cluster_waits_for_it_to_come_back(monkeypatch):
    monkeypatch.setattr(pool, "BOOTSTRAP_REFUSED_GIVE_UP_S", 0.5)
    first = ScriptedBroker(0)
    view = ClusterView([first], topics={"t": {0: 0}})
    view.install()
    port = first.port
    brokers = [first]

    def restart() -> None:
        broker = ScriptedBroker(0, port=port)
        ClusterView([broker], topics={"t": {0: 0}}).install()
        brokers.append(broker)

    with KafkaClient(first.address, retry_backoff_ms=20, retry_backoff_max_ms=100) as client:
        assert client.topics() == {"t": 1}
        first.stop()  # refused from now on, for longer than the bootstrap give-up time
        timer = threading.Timer(1.5, restart)
        timer.start()
        try:
            assert client.topics() == {"t": 1}
        finally:
            timer.join()
            for b in brokers:
                b.stop()
