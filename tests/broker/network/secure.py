"""Helpers for the TLS and SASL tests of ``broker.network``: a second ``SocketServer`` on a running test broker's
event loop with a chosen ``ListenerSecurity`` (the broker's own listener stays PLAINTEXT), TLS contexts from
``tests.security.certs``, a TLS ``Wire``, a PLAIN-like fake SASL server, and raw SASL calls.

The extra server shares the broker's config, services and log, so data produced over PLAINTEXT can be fetched
over TLS; its registry may wrap every handler to record each request's ``RequestContext.principal``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import ssl
import struct
from collections.abc import Iterator
from typing import Any

from broker.api import HandlerRegistry
from broker.network import SocketServer
from broker.security.listener_security import ListenerSecurity
from spark_kafkalog.protocol import ApiKey
from spark_kafkalog.security.errors import SaslAuthenticationFailed

from ..wire import Wire

K = ApiKey


def server_context(tls) -> ssl.SSLContext:
    """The broker side: the test broker certificate (CN=localhost), client certificates optional, trusted by the CA."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(tls.broker_chain_pem), str(tls.broker_key_pem))
    ctx.load_verify_locations(cafile=str(tls.ca_pem))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


def client_context(tls, *, with_certificate: bool = False) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(tls.ca_pem))
    if with_certificate:
        ctx.load_cert_chain(str(tls.client_chain_pem), str(tls.client_key_pem))
    return ctx


class TlsWire(Wire):
    """A ``Wire`` whose socket speaks TLS to ``address`` (server name ``localhost``)."""

    def __init__(self, address: str, ctx: ssl.SSLContext, timeout: float = 10.0) -> None:
        host, port = address.rsplit(":", 1)
        raw = socket.create_connection((host, int(port)), timeout=timeout)
        self.sock = ctx.wrap_socket(raw, server_hostname="localhost")
        self._cid = 0


def address_of(server: SocketServer) -> str:
    ((host, port),) = server.bound.values()
    return f"{host}:{port}"


class RecordingRegistry(HandlerRegistry):
    """The broker's handlers, each wrapped to append ``(api_key, ctx.principal, ctx.security_protocol)`` to ``seen``."""

    def __init__(self, inner: HandlerRegistry) -> None:
        super().__init__()
        self.seen: list[tuple[int, str, str]] = []
        for key, lo, hi in inner.version_ranges():
            entry = inner.get(key)
            assert entry is not None
            self.register(key, lo, hi, self._recording(entry.handler))

    def _recording(self, handler):
        async def recorded(ctx, body):
            self.seen.append((ctx.header.api_key, ctx.principal, ctx.security_protocol))
            return await handler(ctx, body)

        return recorded


def recorded(server: SocketServer) -> list[tuple[int, str, str]]:
    """What the ``RecordingRegistry`` of ``server`` (``extra_server(..., record=True)``) saw."""
    registry = server.registry
    assert isinstance(registry, RecordingRegistry)
    return registry.seen


@contextlib.contextmanager
def extra_server(broker, security: ListenerSecurity, *, record: bool = False, **kw: Any) -> Iterator[SocketServer]:
    """A ``SocketServer`` on ``broker``'s loop whose one listener (the broker's, on a new port) has ``security``."""
    b = broker.broker
    name = b.config.listeners[0].name
    registry = RecordingRegistry(b.handlers) if record else b.handlers

    async def start() -> SocketServer:
        server = SocketServer(b.config, registry, b.services, {name: dataclasses.replace(security, name=name)}, **kw)
        await server.start()
        return server

    server = broker.call(start)
    try:
        yield server
    finally:
        broker.call(lambda: server.stop(grace_s=2))


# -- SASL ----------------------------------------------------------------------------------------------------


class FakePlainServer:
    """PLAIN-like: one token ``b"\\0user\\0password"`` checked against ``callbacks.plain_users``.

    A password of the form ``"<secret>;expires=<ms>"`` in the users map gives the credential that wall-clock expiry.
    """

    def __init__(self, mechanism: str, callbacks) -> None:
        self.mechanism = mechanism
        self._users = callbacks.plain_users
        self._principal: str | None = None
        self.credential_expiry_ms: int | None = None
        self.token_authenticated = False

    def evaluate_response(self, response: bytes) -> bytes:
        parts = response.split(b"\0")
        if len(parts) != 3:
            raise SaslAuthenticationFailed(_generic(self.mechanism), detail="malformed PLAIN message")
        user, password = parts[1].decode(), parts[2].decode()
        stored = self._users.get(user)
        secret, _, expires = (stored or "").partition(";expires=")
        if stored is None or secret != password:
            raise SaslAuthenticationFailed(_generic(self.mechanism), detail=f"wrong credentials for user {user}")
        self._principal = f"User:{user}"
        self.credential_expiry_ms = int(expires) if expires else None
        return b""

    @property
    def complete(self) -> bool:
        return self._principal is not None

    @property
    def principal(self) -> str:
        if self._principal is None:
            raise RuntimeError("not complete")
        return self._principal


def _generic(mechanism: str) -> str:
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"


def fake_sasl_servers(monkeypatch) -> None:
    """Make the broker's authenticators use ``FakePlainServer`` for every mechanism."""
    import broker.network.sasl_authenticator as auth

    monkeypatch.setattr(auth, "create_sasl_server", FakePlainServer)


def plain_token(user: str, password: str) -> bytes:
    return b"\0" + user.encode() + b"\0" + password.encode()


def sasl_handshake(w: Wire, mechanism: str = "PLAIN", version: int = 1):
    return w.call(K.SASL_HANDSHAKE, version, mechanism=mechanism)


def sasl_authenticate(w: Wire, token: bytes, version: int = 2):
    return w.call(K.SASL_AUTHENTICATE, version, auth_bytes=token)


def raw_token(w: Wire, token: bytes) -> bytes:
    """SaslHandshake v0's framing: a 4-byte length and the token, answered the same way."""
    w.send_raw(struct.pack(">i", len(token)) + token)
    (size,) = struct.unpack(">i", w._read(4))
    return w._read(size)


def login(w: Wire, user: str = "alice", password: str = "alice-secret", *, version: int = 2):
    assert sasl_handshake(w, "PLAIN").error_code == 0
    return sasl_authenticate(w, plain_token(user, password), version)
