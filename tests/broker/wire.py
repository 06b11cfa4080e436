"""A raw Kafka-protocol test peer: sends requests at exact versions with our codec and reads responses.

Used by handler tests to speak to an in-process broker at a chosen API version (the real clients
negotiate versions themselves and are covered by the integration tests).
"""

from __future__ import annotations

import socket
import struct

from spark_kafkalog.protocol import API_BY_KEY, decode_response, encode_request


class Wire:
    def __init__(self, address: str, timeout: float = 10.0) -> None:
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self._cid = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, api_key: int, version: int, body=None, **fields) -> int:
        api = API_BY_KEY[api_key]
        body = body if body is not None else api.Request(**fields)
        self._cid += 1
        self.sock.sendall(encode_request(api_key, version, self._cid, body, client_id="wire-test", framed=True))
        return self._cid

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self, api_key: int, version: int):
        size = struct.unpack(">i", self._read(4))[0]
        cid, body = decode_response(api_key, version, self._read(size))
        return cid, body

    def call(self, api_key: int, version: int, body=None, **fields):
        cid = self.send(api_key, version, body, **fields)
        got, resp = self.receive(api_key, version)
        assert got == cid, f"response to correlation id {got}, expected {cid}"
        return resp

    def closed_by_peer(self, timeout: float = 5.0) -> bool:
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            return True

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            buf += chunk
        return bytes(buf)
