"""The registry's HTTP/1.1 server: request parsing (pure, over a fed StreamReader) and a live server's keep-alive,
chunked bodies, HEAD, limits and recovery from bad requests."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.schema_registry.http_server import (
    DEFAULT_LIMITS,
    HttpError,
    HttpRequest,
    HttpResponse,
    HttpServer,
    Limits,
    read_body,
    read_request,
    render_response,
)


def parse(data: bytes, limits: Limits = DEFAULT_LIMITS) -> tuple[HttpRequest | None, bytes]:
    async def run():
        reader = asyncio.StreamReader(limit=limits.max_head_bytes + 1024)
        reader.feed_data(data)
        reader.feed_eof()
        request = await read_request(reader, limits)
        body = b"" if request is None else await read_body(reader, request, limits)
        return request, body

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("raw", "method", "segments", "body"),
    [
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "GET", [], b""),
        (b"\r\nGET /subjects HTTP/1.1\r\n\r\n", "GET", ["subjects"], b""),
        (b"GET /subjects/a%2Fb/versions HTTP/1.1\n\n", "GET", ["subjects", "a/b", "versions"], b""),
        (b"POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcdef", "POST", ["x"], b"abc"),
        (
            b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n",
            "POST",
            ["x"],
            b"abcde",
        ),
        (b"DELETE /config/s?permanent=true HTTP/1.0\r\n\r\n", "DELETE", ["config", "s"], b""),
    ],
)
def test_requests_parse_into_method_decoded_segments_and_body(raw, method, segments, body):
    request, got = parse(raw)
    assert request is not None
    assert (request.method, request.segments, got) == (method, segments, body)


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET /x HTTP/2.0\r\n\r\n", 505),
        (b"get /x HTTP/1.1\r\n\r\n", 400),
        (b"GET x HTTP/1.1\r\n\r\n", 400),
        (b"GET /x HTTP/1.1\r\nno colon here\r\n\r\n", 400),
        (b"GET /x HTTP/1.1\r\nBad Name: v\r\n\r\n", 400),
        (b"POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        (b"POST /x HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\n", 400),
        (b"POST /x HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        (b"POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        (b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        (b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX", 400),
        (b"POST /x HTTP/1.1\r\nContent-Length: 2000\r\n\r\n", 413),
        (b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n", 413),
        (b"GET /x HTTP/1.1\r\nX: " + b"a" * 3000 + b"\r\n\r\n", 431),
    ],
)
def test_malformed_or_oversized_requests_are_http_errors_with_their_status(raw, status):
    with pytest.raises(HttpError) as info:
        parse(raw, Limits(max_head_bytes=2048, max_body_bytes=1024))
    assert info.value.status == status


def test_a_stream_ending_before_a_request_is_none_and_inside_one_is_incomplete():
    assert parse(b"")[0] is None
    assert parse(b"\r\n")[0] is None
    with pytest.raises(asyncio.IncompleteReadError):
        parse(b"POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc")


@pytest.mark.parametrize(
    ("version", "connection", "keep"),
    [
        ("HTTP/1.1", None, True),
        ("HTTP/1.1", "close", False),
        ("HTTP/1.1", "Keep-Alive, Close", False),
        ("HTTP/1.0", None, False),
        ("HTTP/1.0", "keep-alive", True),
    ],
)
def test_keep_alive_follows_the_version_and_connection_header(version, connection, keep):
    headers = {} if connection is None else {"connection": connection}
    assert HttpRequest("GET", "/", version, headers).keep_alive is keep


def test_query_parameters_are_decoded_and_the_last_value_wins():
    request = HttpRequest("GET", "/subjects?subjectPrefix=a%2Bb&deleted=true&deleted=false&x=", "HTTP/1.1", {})
    assert request.param("subjectPrefix") == "a+b"
    assert request.param("deleted") == "false"
    assert request.param("x") == ""
    assert request.param("missing", "d") == "d"


def test_render_response_adds_length_and_connection_and_head_drops_the_body():
    response = HttpResponse.json(404, {"error_code": 404, "message": "HTTP 404 Not Found"})
    data = render_response(response, keep_alive=True)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 404 Not Found\r\n")
    assert b"Content-Length: %d" % len(body) in head
    assert b"Connection: keep-alive" in head
    assert json.loads(body) == {"error_code": 404, "message": "HTTP 404 Not Found"}
    assert render_response(response, keep_alive=False, head=True).endswith(b"Connection: close\r\n\r\n")


# -- a live server ------------------------------------------------------------------------------------
async def echo(request: HttpRequest) -> HttpResponse:
    if request.segments == ["boom"]:
        raise RuntimeError("handler bug")
    return HttpResponse.json(200, {"method": request.method, "path": request.segments, "body": request.body.decode()})


def exchange(server: HttpServer, payload: bytes, *, read_until_close: bool = True) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(payload)
        if not read_until_close:
            return sock.recv(65536)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def run_with_server(check, **kwargs):
    async def scenario():
        server = HttpServer(echo, "127.0.0.1", 0, **kwargs)
        await server.start()
        try:
            return await asyncio.get_running_loop().run_in_executor(None, check, server)
        finally:
            await server.stop()

    return asyncio.run(scenario())


def responses(data: bytes) -> list[tuple[int, bytes]]:
    """Split pipelined responses (each with Content-Length) into (status, body)."""
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length = next(int(v) for k, _, v in (ln.partition(b": ") for ln in lines[1:]) if k.lower() == b"content-length")
        out.append((status, rest[:length]))
        data = rest[length:]
    return out


def test_one_connection_serves_several_requests_in_order_then_closes_on_connection_close():
    payload = (
        b"GET /a HTTP/1.1\r\n\r\n"
        b"POST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi"
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"
        b"GET /d HTTP/1.1\r\nConnection: close\r\n\r\n"
        b"GET /never HTTP/1.1\r\n\r\n"
    )
    got = responses(run_with_server(lambda s: exchange(s, payload)))
    assert [(status, json.loads(body)["path"], json.loads(body)["body"]) for status, body in got] == [
        (200, ["a"], ""),
        (200, ["b"], "hi"),
        (200, ["c"], "x"),
        (200, ["d"], ""),
    ]


def test_head_answers_the_get_headers_without_a_body():
    data = run_with_server(lambda s: exchange(s, b"HEAD /a HTTP/1.1\r\nConnection: close\r\n\r\n"))
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert body == b""
    assert b"Content-Length: 0" not in head  # the GET's length


def test_a_bad_request_is_answered_400_and_the_server_keeps_serving():
    def check(server):
        bad = exchange(server, b"NOT HTTP AT ALL\r\n\r\n")
        good = exchange(server, b"GET /ok HTTP/1.1\r\nConnection: close\r\n\r\n")
        return bad, good

    bad, good = run_with_server(check)
    assert bad.startswith(b"HTTP/1.1 400")
    assert json.loads(bad.partition(b"\r\n\r\n")[2])["error_code"] == 400
    assert good.startswith(b"HTTP/1.1 200")


def test_a_handler_exception_is_a_500_and_the_connection_stays_usable():
    payload = b"GET /boom HTTP/1.1\r\n\r\nGET /after HTTP/1.1\r\nConnection: close\r\n\r\n"
    got = responses(run_with_server(lambda s: exchange(s, payload)))
    assert [status for status, _ in got] == [500, 200]


def test_expect_100_continue_is_answered_before_the_body():
    def check(server):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(b"POST /x HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
            interim = sock.recv(100)
            sock.sendall(b"ok")
            rest = b""
            while chunk := sock.recv(65536):
                rest += chunk
            return interim, rest

    interim, rest = run_with_server(check)
    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert json.loads(rest.partition(b"\r\n\r\n")[2])["body"] == "ok"


def test_an_oversized_body_is_413_and_closes():
    data = run_with_server(
        lambda s: exchange(s, b"POST /x HTTP/1.1\r\nContent-Length: 5000\r\n\r\n"), limits=Limits(max_body_bytes=1024)
    )
    assert data.startswith(b"HTTP/1.1 413")


def test_an_idle_kept_alive_connection_is_closed_after_the_idle_timeout():
    def check(server):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(b"GET /a HTTP/1.1\r\n\r\n")
            first = sock.recv(65536)
            rest = sock.recv(65536)  # b"" once the server closes the idle connection
            return first, rest

    first, rest = run_with_server(check, idle_timeout_s=0.3)
    assert first.startswith(b"HTTP/1.1 200")
    assert rest == b""


def test_a_request_whose_body_never_arrives_is_408():
    data = run_with_server(
        lambda s: exchange(s, b"POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"), request_timeout_s=0.3
    )
    assert data.startswith(b"HTTP/1.1 408")


def test_stop_closes_kept_alive_connections_and_is_idempotent():
    async def scenario():
        server = HttpServer(echo, "127.0.0.1", 0)
        await server.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /a HTTP/1.1\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")
        await server.stop()
        await server.stop()
        rest = await asyncio.wait_for(reader.read(), 5)
        writer.close()
        return server.url, rest

    url, rest = asyncio.run(scenario())
    assert url.startswith("http://127.0.0.1:")
    assert b'"path":["a"]' in rest  # the answer's body, then end of stream


# -- fuzzing the parser --------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [b"GET ", b"POST ", b"/x", b" HTTP/1.1", b" HTTP/1.0", b"\r\n", b"\n", b":", b" ", b"Content-Length: ",
     b"Transfer-Encoding: chunked", b"0", b"5", b"ff", b"-1", b";", b"\x00", b"\xff", b"abc"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.lists(_PIECES, max_size=40).map(b"".join)))
def test_any_bytes_parse_into_a_request_or_an_http_error_never_anything_else(data):
    try:
        parse(data, Limits(max_head_bytes=256, max_body_bytes=64))
    except (HttpError, asyncio.IncompleteReadError):
        pass
