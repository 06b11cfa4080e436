"""The blocking HTTP transport of ``SchemaRegistryClient``: configuration, connections, fail-over and retries.

Configuration (confluent-kafka's ``SchemaRegistryClient`` keys; anything else is a ``ConfigError`` naming it):

================================  =================================================================
``url``                           required; comma-separated ``http://`` / ``https://`` base URLs, tried in
                                  order (fail-over to the next on a connection failure or a retriable status)
``basic.auth.credentials.source`` ``USER_INFO`` (default when ``basic.auth.user.info`` is set) or ``URL``
                                  (``http://user:password@host``); ``SASL_INHERIT`` is not supported
``basic.auth.user.info``          ``user:password`` sent as HTTP Basic authentication
``ssl.ca.location``               CA file or directory to verify the registry (default: the system's);
                                  ``False`` turns verification off, as in confluent-kafka
``ssl.certificate.location``,     the client certificate (PEM) and its key, for registries that ask for
``ssl.key.location``,             one; other ``ssl.*`` keys of ``spark_kafkalog.security.ssl_context``
``ssl.key.password``              (``ssl.ca.pem``, ``ssl.endpoint.identification.algorithm``, ...) apply too
``timeout``                       seconds per request (socket connect and each read); default 30
``max.retries``                   retries of one request per URL after a retriable answer or a connection
                                  failure (default 3)
``retries.wait.ms``,              the backoff before retry ``i``: a random time up to
``retries.max.wait.ms``           ``min(retries.max.wait.ms, retries.wait.ms * 2**i)`` (defaults 1000, 20000)
``cache.capacity``,               read by ``SchemaRegistryClient`` (its caches' size, default 1000; the
``cache.latest.ttl.sec``          seconds latest versions stay cached, default: until cleared)
================================  =================================================================

Requests carry ``Accept: application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json,
application/json``; bodies are JSON sent as ``application/vnd.schemaregistry.v1+json``. A 2xx answer returns its
parsed JSON (None when empty); anything else raises ``SchemaRegistryError(http_status, error_code, message)``
from the registry's ``{"error_code", "message"}`` body (-1 when it has none; ``http_status`` -1 when no URL
answered at all).

Connections are HTTP/1.1 keep-alive, one per thread and base URL (``threading.local``), so the transport may be
shared by threads. A reused connection the server closed meanwhile is reopened once without counting as a retry.
Credentials (the user info, URL passwords, the key password) never appear in reprs, logs or errors.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import random
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlencode, urlsplit

from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.client.schema_registry.model import RETRIABLE_STATUSES, SchemaRegistryError
from spark_kafkalog.security.ssl_context import SslSettings, client_context

__all__ = ["RestClient", "RestConfig", "path_of"]

log = logging.getLogger(__name__)

ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"

_CLIENT_KEYS = frozenset(("cache.capacity", "cache.latest.ttl.sec"))
_TRANSPORT_KEYS = frozenset(
    (
        "url",
        "basic.auth.credentials.source",
        "basic.auth.user.info",
        "timeout",
        "max.retries",
        "retries.wait.ms",
        "retries.max.wait.ms",
    )
)


def path_of(*segments: str | int) -> str:
    """``/a/b/c`` with each segment percent-encoded (a subject may hold ``/`` or spaces)."""
    return "".join("/" + quote(str(s), safe="") for s in segments)


def _number(conf: Mapping[str, Any], key: str, default: float, *, minimum: float = 0) -> float:
    value = conf.get(key, default)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ConfigError(f"Schema Registry setting {key!r} must be a number, not {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise ConfigError(f"Schema Registry setting {key!r} must be a number >= {minimum}, not {value!r}")
    return float(value)


@dataclass(frozen=True)
class _Endpoint:
    """One base URL without its user info (``url`` is safe to show)."""

    url: str
    scheme: str
    host: str
    port: int
    prefix: str


@dataclass(frozen=True)
class RestConfig:
    """The transport's settings, parsed and checked (see the module docstring)."""

    endpoints: tuple[_Endpoint, ...]
    authorization: str | None = field(default=None, repr=False)
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False)
    timeout: float = 30.0
    max_retries: int = 3
    retries_wait_ms: int = 1000
    retries_max_wait_ms: int = 20000
    cache_capacity: int = 1000
    cache_latest_ttl_sec: float | None = None

    @property
    def urls(self) -> list[str]:
        """The base URLs without credentials."""
        return [e.url for e in self.endpoints]

    @classmethod
    def from_conf(cls, conf: Mapping[str, Any] | str) -> RestConfig:
        if isinstance(conf, str):
            conf = {"url": conf}
        if not isinstance(conf, Mapping):
            raise ConfigError(f"a Schema Registry configuration is a mapping or a URL, not {type(conf).__name__}")
        unknown = [k for k in conf if k not in _TRANSPORT_KEYS and k not in _CLIENT_KEYS and not k.startswith("ssl.")]
        if unknown:
            raise ConfigError(f"unknown Schema Registry settings: {', '.join(sorted(map(str, unknown)))}")
        raw = conf.get("url")
        if not isinstance(raw, str) or not raw.strip():
            raise ConfigError("the Schema Registry setting 'url' is required (comma-separated http(s):// URLs)")
        endpoints, url_userinfo = [], None
        for part in raw.split(","):
            endpoint, userinfo = _endpoint(part.strip())
            endpoints.append(endpoint)
            url_userinfo = url_userinfo or userinfo
        authorization = _authorization(conf, url_userinfo)
        context = None
        if any(e.scheme == "https" for e in endpoints):
            context = _ssl_context(conf)
        ttl = conf.get("cache.latest.ttl.sec")
        return cls(
            endpoints=tuple(endpoints),
            authorization=authorization,
            ssl_context=context,
            timeout=_number(conf, "timeout", 30.0, minimum=0.001),
            max_retries=int(_number(conf, "max.retries", 3)),
            retries_wait_ms=int(_number(conf, "retries.wait.ms", 1000)),
            retries_max_wait_ms=int(_number(conf, "retries.max.wait.ms", 20000)),
            cache_capacity=int(_number(conf, "cache.capacity", 1000, minimum=1)),
            cache_latest_ttl_sec=None if ttl is None else _number(conf, "cache.latest.ttl.sec", 0),
        )


def _endpoint(url: str) -> tuple[_Endpoint, tuple[str, str] | None]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        shown = url.split("@", 1)[-1] if "@" in url else url
        raise ConfigError(f"invalid Schema Registry url {shown!r}: expected http://host:port or https://host:port")
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    host = parts.hostname
    shown_host = f"[{host}]" if ":" in host else host
    prefix = parts.path.rstrip("/")
    endpoint = _Endpoint(f"{parts.scheme}://{shown_host}:{port}{prefix}", parts.scheme, host, port, prefix)
    userinfo = None
    if parts.username is not None:
        userinfo = (unquote(parts.username), unquote(parts.password or ""))
    return endpoint, userinfo


def _authorization(conf: Mapping[str, Any], url_userinfo: tuple[str, str] | None) -> str | None:
    source = str(conf.get("basic.auth.credentials.source") or "").strip().upper()
    user_info = conf.get("basic.auth.user.info")
    if source not in ("", "USER_INFO", "URL"):
        raise ConfigError(
            f"Schema Registry setting 'basic.auth.credentials.source' {source!r} is not supported (USER_INFO or URL)"
        )
    if source == "URL" or (not source and user_info is None):
        if source == "URL" and url_userinfo is None:
            raise ConfigError(
                "basic.auth.credentials.source=URL needs the credentials in the url (http://user:pw@host)"
            )
        user, password = url_userinfo or ("", "")
    else:
        if user_info is None:
            raise ConfigError("basic.auth.credentials.source=USER_INFO needs 'basic.auth.user.info' (user:password)")
        if url_userinfo is not None:
            raise ConfigError("basic.auth.user.info is set and the url carries credentials too: remove one of them")
        if not isinstance(user_info, str) or ":" not in user_info:
            raise ConfigError("Schema Registry setting 'basic.auth.user.info' must have the form user:password")
        user, password = user_info.split(":", 1)
    if not user and not password:
        return None
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


def _ssl_context(conf: Mapping[str, Any]) -> ssl.SSLContext:
    settings = {k: v for k, v in conf.items() if k.startswith("ssl.")}
    if settings.get("ssl.ca.location") is False:
        del settings["ssl.ca.location"]
        settings["enable.ssl.certificate.verification"] = False
    if (
        "ssl.key.location" in settings or "ssl.key.password" in settings
    ) and "ssl.certificate.location" not in settings:
        raise ConfigError("ssl.certificate.location is required with ssl.key.location or ssl.key.password")
    try:
        return client_context(SslSettings.from_config(settings))
    except (OSError, ValueError, ssl.SSLError) as e:
        raise ConfigError(f"Schema Registry TLS settings: {e}") from e


class RestClient:
    """Sends requests to the registry's base URLs (see the module docstring); thread-safe."""

    def __init__(self, config: RestConfig) -> None:
        self.config = config
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[http.client.HTTPConnection] = []
        self._closed = False

    def __repr__(self) -> str:
        return f"RestClient(urls={self.config.urls!r})"

    def close(self) -> None:
        """Closes every thread's connections; later requests open new ones."""
        with self._lock:
            connections, self._all = self._all, []
        for conn in connections:
            conn.close()
        self._local = threading.local()

    def request(self, method: str, path: str, body: Any = None, query: Mapping[str, Any] | None = None) -> Any:
        """The parsed JSON answer of ``method path`` (a path from ``path_of``), trying each URL in turn."""
        target = path
        if query:
            target += "?" + urlencode({k: _query_value(v) for k, v in query.items() if v is not None})
        payload = None if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
        headers = {"Accept": ACCEPT, "Confluent-Accept-Unknown-Properties": "true"}
        if payload is not None:
            headers["Content-Type"] = CONTENT_TYPE
        if self.config.authorization is not None:
            headers["Authorization"] = self.config.authorization
        failures: list[str] = []
        last: tuple[int, bytes] | None = None
        endpoints = self.config.endpoints
        for index, endpoint in enumerate(endpoints):
            outcome = self._send_with_retries(endpoint, method, target, payload, headers, failures)
            if outcome is None:
                continue
            status, data = outcome
            if 200 <= status < 300:
                return _json_of(data) if status != 204 and data else None
            last = outcome
            if status not in RETRIABLE_STATUSES or index == len(endpoints) - 1:
                break
        if last is None:
            raise SchemaRegistryError(-1, -1, f"no Schema Registry answered {method} {path}: {'; '.join(failures)}")
        raise _error_of(*last)

    def _send_with_retries(
        self,
        endpoint: _Endpoint,
        method: str,
        target: str,
        payload: bytes | None,
        headers: dict[str, str],
        failures: list[str],
    ) -> tuple[int, bytes] | None:
        """``(status, body)`` of the last attempt at ``endpoint``; None when no attempt got an answer."""
        outcome: tuple[int, bytes] | None = None
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                time.sleep(self._backoff(attempt - 1))
            try:
                outcome = self._send(endpoint, method, target, payload, headers)
            except (OSError, http.client.HTTPException) as e:
                message = f"{endpoint.url}: {type(e).__name__}: {e}"
                log.debug("Schema Registry request %s %s failed: %s", method, target.split("?")[0], message)
                if attempt == self.config.max_retries:
                    failures.append(message)
                    return None
                continue
            if outcome[0] not in RETRIABLE_STATUSES:
                return outcome
        return outcome

    def _backoff(self, retry: int) -> float:
        cap = min(self.config.retries_max_wait_ms, self.config.retries_wait_ms * 2**retry)
        return random.uniform(0, cap) / 1000

    def _send(
        self, endpoint: _Endpoint, method: str, target: str, payload: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        conn, reused = self._connection(endpoint)
        try:
            return self._exchange(conn, endpoint, method, target, payload, headers)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self._drop(endpoint, conn)
            if not reused:
                raise
        conn, _ = self._connection(endpoint)  # the server closed an idle keep-alive connection: once more
        try:
            return self._exchange(conn, endpoint, method, target, payload, headers)
        except BaseException:
            self._drop(endpoint, conn)
            raise

    def _exchange(
        self,
        conn: http.client.HTTPConnection,
        endpoint: _Endpoint,
        method: str,
        target: str,
        payload: bytes | None,
        headers: dict[str, str],
    ) -> tuple[int, bytes]:
        try:
            conn.request(method, endpoint.prefix + target, body=payload, headers=headers)
            response = conn.getresponse()
            data = response.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            raise
        except BaseException:
            self._drop(endpoint, conn)
            raise
        if response.will_close:
            self._drop(endpoint, conn)
        return response.status, data

    def _connections(self) -> dict[str, http.client.HTTPConnection]:
        connections = getattr(self._local, "connections", None)
        if connections is None:
            connections = self._local.connections = {}
        return connections

    def _connection(self, endpoint: _Endpoint) -> tuple[http.client.HTTPConnection, bool]:
        connections = self._connections()
        existing = connections.get(endpoint.url)
        if existing is not None:
            return existing, True
        conn: http.client.HTTPConnection
        if endpoint.scheme == "https":
            conn = http.client.HTTPSConnection(
                endpoint.host, endpoint.port, timeout=self.config.timeout, context=self.config.ssl_context
            )
        else:
            conn = http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=self.config.timeout)
        connections[endpoint.url] = conn
        with self._lock:
            self._all.append(conn)
        return conn, False

    def _drop(self, endpoint: _Endpoint, conn: http.client.HTTPConnection) -> None:
        conn.close()
        connections = self._connections()
        if connections.get(endpoint.url) is conn:
            del connections[endpoint.url]
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _json_of(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError as e:
        raise SchemaRegistryError(200, -1, f"the registry's answer is not JSON ({e}): {data[:200]!r}") from None


def _error_of(status: int, data: bytes) -> SchemaRegistryError:
    try:
        body = json.loads(data)
        code, message = body.get("error_code"), body.get("message")
    except (ValueError, AttributeError):
        code, message = None, None
    if not isinstance(code, int) or isinstance(code, bool):
        text = data[:300].decode("utf-8", "replace")
        return SchemaRegistryError(status, -1, f"Unknown Schema Registry Error: {text}")
    return SchemaRegistryError(status, code, str(message))
