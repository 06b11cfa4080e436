"""The broker's network layer under abuse: memory follows bytes received, not sizes announced; the
``queued.max.request.bytes`` budget; closed connections end their long polls at once."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from broker.network.request_memory import RequestMemory
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, encode_request
from tests.waiting import stays_true, stays_true_async, wait_until

from ..conftest import start_brokers
from ..requests import batch, create, fetch_body, produce, unique
from ..wire import Wire

K = ApiKey
MiB = 1024 * 1024


def _rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def _server(broker):
    return broker.broker.socket_server


def _connect(broker) -> socket.socket:
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


# -- RequestMemory, the budget, as a state table -----------------------------------------------------


def test_request_memory_lets_only_the_oldest_frame_read_past_the_capacity():
    import asyncio

    async def scenario():
        mem = RequestMemory(100)
        a, b = object(), object()
        await mem.wait_turn(a)
        mem.charge(a, 60)
        await mem.wait_turn(b)  # 60 < 100: b may read
        mem.charge(b, 50)
        assert (mem.used, mem.frames) == (110, 2)
        await asyncio.wait_for(mem.wait_turn(a), 1)  # over capacity, but a is the oldest frame
        waiter = asyncio.ensure_future(mem.wait_turn(b))
        await stays_true_async(lambda: not waiter.done(), 0.01, "b waiting while the budget is exhausted")
        mem.release(a)
        await asyncio.wait_for(waiter, 1)  # woken by the release
        assert (mem.used, mem.frames) == (50, 1)
        mem.release(b)
        assert (mem.used, mem.frames, mem.peak) == (0, 0, 110)

    asyncio.run(scenario())


def test_request_memory_unbounded_when_capacity_is_not_positive():
    import asyncio

    async def scenario():
        mem = RequestMemory(-1)
        frames = [object() for _ in range(3)]
        for f in frames:
            await asyncio.wait_for(mem.wait_turn(f), 1)
            mem.charge(f, 10**9)
        assert mem.used == 3 * 10**9

    asyncio.run(scenario())


# -- size prefixes cost nothing; the budget holds across connections ---------------------------------


@pytest.fixture()
def budget_broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, queued_max_request_bytes=2 * MiB, connections_max_idle_ms=60_000)
    yield b
    b.stop()


def test_size_prefixes_alone_cost_no_memory_and_others_are_served(broker):
    socks = []
    liars = 200
    try:
        rss_before = _rss_bytes()
        for _ in range(liars):  # each announces a 100 MB request (the largest allowed) and sends nothing more
            s = _connect(broker)
            s.sendall(struct.pack(">i", 104857600))
            socks.append(s)
        memory = _server(broker).request_memory
        wait_until(lambda: broker.call(lambda: memory.frames) == liars, what=f"{liars} announced frames")
        stays_true(lambda: broker.call(lambda: memory.used) == 0, 0.2, "no memory charged for the size prefixes")
        grown = _rss_bytes() - rss_before
        # a connection's own objects and socket cost some KiB; a frame buffer (256 KiB and up) would not fit
        assert grown < 24 * MiB, f"{liars} size prefixes grew the process by {grown / MiB:.0f} MiB"
        assert broker.call(lambda: memory.used) == 0
        with Wire(broker.bootstrap_servers) as w:  # everyone else is served meanwhile
            assert w.call(K.API_VERSIONS, 3).error_code == 0
    finally:
        for s in socks:
            s.close()
    wait_until(
        lambda: broker.call(lambda: _server(broker).request_memory.frames) == 0,
        what="the liars' frames to be released",
    )


def _send_in_background(sock: socket.socket, data: bytes) -> threading.Thread:
    def send():
        try:
            sock.sendall(data)
        except OSError:
            pass  # closed by the test

    t = threading.Thread(target=send, daemon=True)
    t.start()
    return t


def test_partial_frames_across_connections_stay_within_queued_max_request_bytes(budget_broker):
    b = budget_broker
    memory = _server(b).request_memory
    socks, senders = [], []
    try:
        for _ in range(4):  # each sends 1.5 MiB of a 4 MiB frame, then stalls
            s = _connect(b)
            socks.append(s)
            senders.append(_send_in_background(s, struct.pack(">i", 4 * MiB) + bytes(3 * MiB // 2)))
        # the budget (2 MiB), plus at most one 256 KiB read per connection admitted just before it filled,
        # plus what the oldest frame holds: it always goes on, so frames larger than the budget still finish
        sent = 3 * MiB // 2
        bound = 2 * MiB + 4 * 256 * 1024 + sent
        stays_true(lambda: b.call(lambda: memory.peak) <= bound, 1.5, f"the partial frames' peak within {bound} bytes")
        used, peak = b.call(lambda: (memory.used, memory.peak))
        assert peak <= bound, f"peak {peak} bytes held by partial frames"
        assert peak < 4 * sent, "the budget did not hold back any frame"
        assert used >= sent  # the oldest frame got all it was sent
    finally:
        for s in socks:
            s.close()
    wait_until(lambda: b.call(lambda: memory.used) == 0, what="the stalled frames to be released")
    with Wire(b.bootstrap_servers) as w:  # a large, well-formed request goes through afterwards
        topic = unique()
        assert create(w, topic, configs={"max.message.bytes": str(8 * MiB)}).error_code == 0
        values = [bytes([i % 251]) * 1000 for i in range(3000)]  # a ~3 MB request, above the budget
        assert produce(w, topic, batch(values)).error_code == 0


def test_a_client_silent_inside_a_request_is_closed_after_connections_max_idle_ms(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, connections_max_idle_ms=500)
    try:
        s = _connect(b)
        s.sendall(struct.pack(">i", 1 * MiB) + bytes(100_000))  # part of a large frame, then nothing
        s.settimeout(10)
        t0 = time.monotonic()
        assert s.recv(1) == b""  # the broker closed it
        assert time.monotonic() - t0 < 8
        s.close()
        assert b.call(lambda: _server(b).request_memory.used) == 0
    finally:
        b.stop()


# -- closed connections end their long polls ------------------------------------------------------


def test_a_disconnected_long_poll_releases_its_connection_at_once(broker):
    with Wire(broker.bootstrap_servers) as w:
        topic = unique()
        assert create(w, topic).error_code == 0
    server = _server(broker)
    newest = broker.call(lambda: max(server._connections, default=0))

    def long_polls() -> int:
        return broker.call(lambda: sum(1 for cid in server._connections if cid > newest))

    socks = []
    for _ in range(20):
        s = _connect(broker)
        body = fetch_body(topic, 0, 0, max_wait_ms=2**31 - 1, min_bytes=1)
        s.sendall(encode_request(K.FETCH, 12, 1, body, client_id="long-poll", framed=True))
        socks.append(s)
    wait_until(lambda: long_polls() == 20, what="20 long polls")
    stays_true(lambda: long_polls() == 20, 0.2, "the 20 long polls waiting, as asked")
    for s in socks:
        s.close()
    wait_until(lambda: long_polls() == 0, timeout_s=5, what="the closed long polls' connections to go")


def test_a_disconnected_long_poll_does_not_disturb_one_on_another_connection(broker):
    with Wire(broker.bootstrap_servers) as w:
        topic = unique()
        assert create(w, topic).error_code == 0
    server = _server(broker)
    gone = _connect(broker)
    gone.sendall(encode_request(K.FETCH, 12, 1, fetch_body(topic, 0, 0, max_wait_ms=60_000), framed=True))
    with Wire(broker.bootstrap_servers) as waiting, Wire(broker.bootstrap_servers) as producer:
        cid = waiting.send(K.FETCH, 12, fetch_body(topic, 0, 0, max_wait_ms=60_000))
        time.sleep(0.2)  # both long polls reach the broker (nothing outside the handler shows a parked fetch)
        connected = broker.call(lambda: server.connection_count)
        gone.close()
        wait_until(
            lambda: broker.call(lambda: server.connection_count) <= connected - 1,
            5,
            "the broker to drop the closed long poll's connection",
        )
        assert produce(producer, topic, batch([b"after"])).error_code == 0
        got, resp = waiting.receive(K.FETCH, 12)
        assert got == cid and resp.responses[0].partitions[0].high_watermark == 1
        assert API_BY_KEY[K.FETCH]  # the response decoded at v12


def test_requests_queued_on_a_connection_closed_for_garbage_leave_no_unawaited_handler(broker):
    """Requests pipelined ahead of an undecodable frame are cancelled when the broker drops the connection;
    a handler whose task never started must not be left as a coroutine that was never awaited (each one
    is a RuntimeWarning when collected)."""
    import gc
    import warnings

    with Wire(broker.bootstrap_servers) as w:
        topic = unique()
        assert create(w, topic).error_code == 0
    server = _server(broker)
    body = fetch_body(topic, 0, 0, max_wait_ms=0)
    pipelined = b"".join(encode_request(K.FETCH, 12, i, body, framed=True) for i in range(200))
    garbage = struct.pack(">i", 8) + b"\xff" * 8  # api key -1: not a request
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            connected = broker.call(lambda: server.connection_count)
            s = _connect(broker)
            s.sendall(pipelined + garbage)
            wait_until(
                lambda n=connected: broker.call(lambda: server.connection_count) <= n, 5, "the dropped connection"
            )
            s.close()
        broker.call(gc.collect)
        gc.collect()
    unawaited = [str(c.message) for c in caught if "never awaited" in str(c.message)]
    assert unawaited == []
    with Wire(broker.bootstrap_servers) as w:  # and the broker serves everyone else
        assert produce(w, topic, batch([b"after"])).error_code == 0
