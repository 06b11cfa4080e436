"""The blocking and asyncio transports over real sockets: handshake fallback, partial frames, pipelining,
disconnects and timeouts (against a scripted peer)."""

from __future__ import annotations

import asyncio
import select
import socket

import pytest

from spark_kafkalog.client.errors import KafkaConnectionError, KafkaTimeoutError
from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
from spark_kafkalog.client.network.socket_transport import SocketConnection
from spark_kafkalog.protocol import API_BY_KEY, encode_response
from tests.waiting import wait_until, wait_until_async

from ..scripted_broker import CLOSE, NO_RESPONSE, Raw, ScriptedBroker, default_api_ranges

META = API_BY_KEY[3]


def metadata_body(cluster_id="c"):
    return META.Response(brokers=[], cluster_id=cluster_id, controller_id=1, topics=[])


@pytest.fixture
def broker():
    b = ScriptedBroker(1)
    yield b
    b.stop()


def open_conn(b, **kw):
    return SocketConnection.open(
        b.host, b.port, node_id=b.node_id, request_timeout=kw.pop("request_timeout", 5.0), **kw
    )


def test_handshake_falls_back_for_a_broker_with_api_versions_up_to_v2():
    ranges = default_api_ranges()
    ranges[18] = (0, 2)
    ranges[3] = (0, 8)
    b = ScriptedBroker(1, api_ranges=ranges)
    try:
        conn = open_conn(b)
        assert [s.version for s in b.requests(18)] == [5, 2]
        assert conn.versions.pick(3) == 8
        conn.close()
    finally:
        b.stop()


def test_a_response_arriving_in_small_pieces_is_reassembled(broker):
    def slow(request, _):
        frame = encode_response(3, request.version, request.header.correlation_id, metadata_body("slow"), framed=True)
        return Raw(frame, chunk=3, pause=0.001)

    broker.handlers[3] = slow
    conn = open_conn(broker)
    response = conn.request(3, META.Request(topics=None), timeout=5)
    assert response.cluster_id == "slow"
    conn.close()


def test_pipelined_requests_complete_in_order_and_waiting_for_the_last_completes_all(broker):
    broker.handlers[3] = lambda request, _: metadata_body(f"c{request.header.correlation_id}")
    conn = open_conn(broker)
    requests = [conn.send(3, META.Request(topics=None)) for _ in range(5)]
    assert conn.in_flight == 5
    last = conn.wait(requests[-1], 5)
    assert all(r.done for r in requests)
    assert [r.response.cluster_id for r in requests] == [f"c{r.correlation_id}" for r in requests]
    assert last.cluster_id == requests[-1].response.cluster_id
    conn.close()


def test_a_disconnect_mid_response_fails_the_request_and_closes(broker):
    def cut(request, _):
        frame = encode_response(3, request.version, request.header.correlation_id, metadata_body(), framed=True)
        return Raw(frame[:7], close=True)

    broker.handlers[3] = cut
    conn = open_conn(broker)
    with pytest.raises(KafkaConnectionError, match=r"connection to broker 1 \(127\.0\.0\.1:\d+\) lost"):
        conn.request(3, META.Request(topics=None), timeout=5)
    assert conn.closed


def test_an_unanswered_request_times_out_and_closes_the_connection(broker):
    broker.handlers[3] = lambda request, _: NO_RESPONSE
    conn = open_conn(broker)
    with pytest.raises(KafkaTimeoutError, match=r"no answer to Metadata v13 from broker 1"):
        conn.request(3, META.Request(topics=None), timeout=0.2)
    assert conn.closed


def test_poll_reports_requests_failed_by_a_disconnect(broker):
    broker.handlers[3] = lambda request, _: CLOSE
    conn = open_conn(broker)
    request = conn.send(3, META.Request(topics=None))
    done = []

    def polled_a_failure():
        select.select([conn], [], [], 0.1)
        done.extend(conn.poll())
        return done

    wait_until(polled_a_failure, 5, "poll to report the request failed by the disconnect")
    assert done == [request]
    assert isinstance(request.error, KafkaConnectionError)


def test_connecting_to_a_closed_port_names_the_address():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(KafkaConnectionError, match=rf"cannot connect to broker 7 \(127\.0\.0\.1:{port}\)"):
        SocketConnection.open("127.0.0.1", port, node_id=7, connect_timeout=1)


def test_asyncio_transport_runs_concurrent_requests_on_one_connection(broker):
    broker.handlers[3] = lambda request, _: metadata_body(f"c{request.header.correlation_id}")

    async def main():
        conn = await AsyncKafkaConnection.open(broker.host, broker.port, node_id=1)
        try:
            results = await asyncio.gather(*(conn.request(3, META.Request(topics=None)) for _ in range(10)))
            assert len({r.cluster_id for r in results}) == 10
            assert conn.versions.pick(3) == 13
        finally:
            await conn.close()

    asyncio.run(main())


def test_asyncio_transport_times_out_and_fails_other_in_flight_requests(broker):
    broker.handlers[3] = lambda request, _: NO_RESPONSE

    async def main():
        conn = await AsyncKafkaConnection.open(broker.host, broker.port, node_id=1)
        sent = len(broker.requests(3))
        slow = asyncio.ensure_future(conn.request(3, META.Request(topics=None), timeout=10))
        await wait_until_async(lambda: len(broker.requests(3)) > sent, 5, "the slow request at the broker")
        with pytest.raises(KafkaTimeoutError):
            await conn.request(3, META.Request(topics=None), timeout=0.1)
        with pytest.raises(KafkaTimeoutError):
            await slow  # closed with the timeout as the reason
        assert conn.closed
        await conn.close()

    asyncio.run(main())


def test_asyncio_transport_reports_a_disconnect(broker):
    broker.handlers[3] = lambda request, _: CLOSE

    async def main():
        conn = await AsyncKafkaConnection.open(broker.host, broker.port, node_id=1)
        with pytest.raises(KafkaConnectionError, match="lost"):
            await conn.request(3, META.Request(topics=None), timeout=5)
        await conn.close()

    asyncio.run(main())


def test_asyncio_transport_close_does_not_swallow_the_callers_cancellation(broker):
    """A task cancelled while ``close`` waits for the reader task ends cancelled (a replica fetcher being
    stopped while it closes a lost connection must stop, not loop on)."""
    broker.handlers[3] = lambda request, _: metadata_body()

    async def main():
        conn = await AsyncKafkaConnection.open(broker.host, broker.port, node_id=1)
        closer = asyncio.ensure_future(conn.close())
        await asyncio.sleep(0)  # closer now waits for the cancelled reader task
        closer.cancel()
        await asyncio.gather(closer, return_exceptions=True)
        assert closer.cancelled()
        await conn.close()

    asyncio.run(main())


class _TrickleSocket:
    """A socket whose ``sendmsg`` writes at most ``limit`` bytes a call, like a full send buffer would."""

    def __init__(self, sock: socket.socket, limit: int) -> None:
        self._sock, self._limit, self.calls = sock, limit, 0

    def settimeout(self, timeout):
        self._sock.settimeout(timeout)

    def sendmsg(self, buffers):
        self.calls += 1
        out, room = [], self._limit
        for b in buffers:
            if room <= 0:
                break
            piece = memoryview(b)[:room]
            out.append(piece)
            room -= piece.nbytes
        return self._sock.sendmsg(out)


def test_a_gathered_send_resumes_inside_a_chunk_after_partial_writes():
    from spark_kafkalog.client.network.connection import KafkaConnection

    near, far = socket.socketpair()
    try:
        trickle = _TrickleSocket(near, limit=7)
        conn = SocketConnection(trickle, KafkaConnection("test"))  # type: ignore[arg-type]
        chunks = [b"head", memoryview(bytearray(b"0123456789abcdefghij")), b"", b"tail!", bytearray(b"xyz")]
        conn._send_gathered(chunks)
        expected = b"".join(chunks)
        got = b""
        while len(got) < len(expected):
            got += far.recv(100)
        assert got == expected
        assert conn.bytes_sent == len(expected)
        assert trickle.calls == -(-len(expected) // 7)  # every call wrote its 7 bytes: nothing resent, nothing lost
    finally:
        near.close()
        far.close()
