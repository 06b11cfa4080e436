"""Fetch over TLS: file regions read into pooled chunks and encrypted (no os.sendfile on an SSL socket), byte-exact
against a PLAINTEXT fetch of the same data; the kTLS decision (sendfile on the raw fd only when the kernel took TX).

This machine has no ``tls`` upper-layer protocol (``/proc/sys/net/ipv4/tcp_available_ulp`` lists only mptcp), so
the real kTLS send could not run here: the fallback runs for real, and the kTLS branch is tested through an
injected detector with the raw-fd send observed (then done through TLS so the stream stays valid).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import broker.network.file_sender as file_sender
from broker.network.file_sender import CHUNK_SIZE, RegionEndedEarly, SendBuffers, region_path, send_chunked
from broker.security.listener_security import ListenerSecurity
from spark_kafkalog.protocol import ApiKey
from spark_kafkalog.records import iter_batches
from tests.security.certs import tls_material as _tls_material

from ..requests import batch, create, fetch, produce, unique
from ..wire import Wire
from .secure import TlsWire, address_of, client_context, extra_server, server_context

K = ApiKey
MiB = 1024 * 1024
tls_material = pytest.fixture(scope="session")(_tls_material)


def _fetch_all(w, topic: str, end: int) -> list[bytes]:
    """Record bytes of every fetch from offset 0 to ``end`` (one segment's worth at most per response)."""
    chunks, offset = [], 0
    while offset < end:
        records = bytes(fetch(w, topic, offset, max_bytes=64 * MiB).records or b"")
        assert records, f"empty fetch at offset {offset}"
        chunks.append(records)
        offset = list(iter_batches(records))[-1].next_offset
    return chunks


def test_tens_of_mib_across_segments_byte_exact_over_tls(broker, tls_material):
    topic = unique()
    values_per_batch, value_size, batches = 7, 128 * 1024, 28  # 24.5 MiB in batches under max.message.bytes
    with Wire(broker.bootstrap_servers) as plain:
        assert create(plain, topic, configs={"segment.bytes": str(4 * MiB)}).error_code == 0
        for n in range(batches):
            values = [os.urandom(16) + bytes([n, i]) * (value_size // 2 - 8) for i in range(values_per_batch)]
            assert produce(plain, topic, batch(values)).error_code == 0
        end = batches * values_per_batch
        expected = _fetch_all(plain, topic, end)
    assert len(expected) > 3, "the data spans several segments"
    assert sum(map(len, expected)) > 20 * MiB
    security = ListenerSecurity(name="x", protocol="SSL", ssl_context=server_context(tls_material))
    with extra_server(broker, security) as server:
        with TlsWire(address_of(server), client_context(tls_material)) as w:
            got = _fetch_all(w, topic, end)
        assert server.send_buffers.allocated >= 1  # the chunked path ran (no sendfile on an SSL socket)
    assert got == expected


def test_the_real_detector_finds_no_ktls_here_and_fetch_falls_back(broker, tls_material):
    seen: list[bool] = []

    def detector(sock) -> bool:
        from broker.network.tls_socket import ktls_tx_active

        seen.append(ktls_tx_active(sock))
        return seen[-1]

    security = ListenerSecurity(name="x", protocol="SSL", ssl_context=server_context(tls_material), ktls=True)
    with extra_server(broker, security, ktls_detector=detector) as server:
        (listener_security,) = server.listener_security.values()  # its context got SSL_OP_ENABLE_KTLS
        assert listener_security.ssl_context is not None and listener_security.ssl_context.options & 0x8
        topic = unique()
        with TlsWire(address_of(server), client_context(tls_material)) as w:
            assert create(w, topic).error_code == 0
            assert produce(w, topic, batch([b"v" * 50_000])).error_code == 0
            records = bytes(fetch(w, topic, 0).records or b"")
    assert seen == [False], "this machine lists no tls ULP: the kernel cannot have taken TX"
    assert [r.value for b in iter_batches(records) for r in b.records()] == [b"v" * 50_000]


def test_ktls_off_skips_detection(broker, tls_material):
    calls: list[object] = []
    security = ListenerSecurity(name="x", protocol="SSL", ssl_context=server_context(tls_material), ktls=False)
    with extra_server(broker, security, ktls_detector=calls.append) as server:
        with TlsWire(address_of(server), client_context(tls_material)) as w:
            assert w.call(K.API_VERSIONS, 0).error_code == 0
        (listener_security,) = server.listener_security.values()
        assert listener_security.ssl_context is not None and not listener_security.ssl_context.options & 0x8
    assert calls == []


def test_a_ktls_connection_sends_file_regions_with_sendfile_on_the_raw_fd(broker, tls_material, monkeypatch):
    """The injected detector says the kernel took TX: regions go to ``file_sender.sendfile`` with the socket's fd
    (observed, then sent through TLS so this kernel-less stream stays valid); other bytes still go through TLS."""
    observed: list[tuple[int, int]] = []
    import broker.network.connection as connection

    conns: list = []
    original_sendfile = connection.ClientConnection._sendfile

    async def spy(self, region):
        conns.append(self)
        assert file_sender.region_path(self.tls, self.ktls_tx) == "sendfile"
        observed.append((self.sock.fileno(), len(region)))
        self.ktls_tx = False  # no kernel TLS here: send it through OpenSSL after all
        try:
            await original_sendfile(self, region)
        finally:
            self.ktls_tx = True

    monkeypatch.setattr(connection.ClientConnection, "_sendfile", spy)
    security = ListenerSecurity(name="x", protocol="SSL", ssl_context=server_context(tls_material), ktls=True)
    topic = unique()
    with extra_server(broker, security, ktls_detector=lambda sock: True) as server:
        with TlsWire(address_of(server), client_context(tls_material)) as w:
            assert create(w, topic).error_code == 0
            assert produce(w, topic, batch([b"k" * 10_000])).error_code == 0
            records = bytes(fetch(w, topic, 0).records or b"")
    assert [r.value for b in iter_batches(records) for r in b.records()] == [b"k" * 10_000]
    assert len(observed) == 1 and observed[0][1] == len(records)
    assert conns[0].tls and conns[0].ktls_tx


@pytest.mark.parametrize(
    "uses_tls, ktls_tx, path",
    [(False, False, "sendfile"), (False, True, "sendfile"), (True, False, "chunked"), (True, True, "sendfile")],
)
def test_region_path(uses_tls, ktls_tx, path):
    assert region_path(uses_tls, ktls_tx) == path


class _Region:
    def __init__(self, fd: int, position: int, length: int) -> None:
        self._fd, self.position, self._length = fd, position, length

    def fileno(self) -> int:
        return self._fd

    def __len__(self) -> int:
        return self._length


def test_send_chunked_reads_the_region_in_buffer_sized_chunks_and_reuses_the_buffer(tmp_path: Path):
    import asyncio

    data = os.urandom(CHUNK_SIZE * 2 + 1000)
    path = tmp_path / "segment"
    path.write_bytes(data)
    buffers = SendBuffers()
    out: list[bytes] = []

    async def send_all(chunk) -> None:
        out.append(bytes(chunk))

    fd = os.open(path, os.O_RDONLY)
    try:
        asyncio.run(send_chunked(_Region(fd, 500, len(data) - 600), buffers, send_all))
        assert b"".join(out) == data[500:-100]
        assert [len(c) for c in out] == [CHUNK_SIZE, CHUNK_SIZE, len(data) - 600 - 2 * CHUNK_SIZE]
        asyncio.run(send_chunked(_Region(fd, 0, 10), buffers, send_all))
        assert buffers.allocated == 1
        with pytest.raises(RegionEndedEarly, match="ended 50 bytes early"):
            asyncio.run(send_chunked(_Region(fd, len(data) - 100, 150), buffers, send_all))
    finally:
        os.close(fd)


def test_large_pipelined_produce_over_tls_reads_every_byte(broker, tls_material):
    """Frames far larger than a TLS record, sent back to back: the reader drains what OpenSSL already decrypted
    (``pending()``) instead of waiting on a socket that will not become readable again."""
    topic = unique()
    batches = [[os.urandom(100) * 1200 for _ in range(7)] for _ in range(6)]  # ~820 KiB each
    security = ListenerSecurity(name="x", protocol="SSL", ssl_context=server_context(tls_material))
    with extra_server(broker, security) as server:
        with TlsWire(address_of(server), client_context(tls_material)) as w:
            assert create(w, topic).error_code == 0
            from ..requests import produce_body

            cids = [w.send(K.PRODUCE, 9, produce_body(topic, 0, batch(values))) for values in batches]
            answers = [w.receive(K.PRODUCE, 9) for _ in cids]
    assert [cid for cid, _ in answers] == cids
    assert all(resp.responses[0].partition_responses[0].error_code == 0 for _, resp in answers)
    with Wire(broker.bootstrap_servers) as plain:
        got = [r.value for chunk in _fetch_all(plain, topic, 42) for b in iter_batches(chunk) for r in b.records()]
    assert got == [v for values in batches for v in values]


def test_a_frame_ending_inside_a_record_already_decrypted_is_not_left_waiting(broker, tls_material):
    """A 262 244-byte Produce frame on a fresh server (no pooled buffer): its receive buffer first grows to 256 KiB,
    which fills 4 bytes into the TLS record that also holds the frame's last 100 bytes. Those 100 bytes are then
    inside OpenSSL (``pending()``) and nothing more will arrive on the socket: waiting on the fd would hang."""
    from spark_kafkalog.protocol import encode_request

    from ..requests import produce_body

    topic = unique()
    target = 4 + 256 * 1024 + 100  # framed size

    def framed(n: int) -> bytes:
        body = produce_body(topic, 0, batch([b"x" * n], ts=1_700_000_000_000))
        return bytes(encode_request(K.PRODUCE, 9, 7, body, client_id="wire-test", framed=True))

    n = 200_000
    n += target - len(framed(n))
    frame = framed(n)
    assert len(frame) == target
    with Wire(broker.bootstrap_servers) as plain:
        assert create(plain, topic).error_code == 0
    security = ListenerSecurity(name="x", protocol="SSL", ssl_context=server_context(tls_material))
    with extra_server(broker, security) as server:
        with TlsWire(address_of(server), client_context(tls_material), timeout=5) as w:
            w.send_raw(frame)
            cid, resp = w.receive(K.PRODUCE, 9)  # a hang here times out after 5 s
    assert cid == 7 and resp.responses[0].partition_responses[0].error_code == 0
