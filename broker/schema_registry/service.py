"""``SchemaRegistryService``: the Schema Registry a broker serves when ``schema.registry.listeners`` is set.

Built and started by ``Broker.start`` once the broker serves requests and competes for the controller (the
registry is a client of its own broker), stopped by ``Broker.stop`` before the broker's listeners close.

Start: parse the listeners (``http://host:port`` / ``https://host:port``, port 0 = any free port; anything else
is a ``ConfigError`` naming the key) -> build the https TLS context (``schema.registry.ssl.<key>`` over the
broker's ``ssl.<key>``, through ``spark_kafkalog.security.ssl_context.server_context``) and the authenticator
(``schema.registry.authentication.method``; unset: BASIC when a broker listener uses SASL) -> bind every
listener (``urls`` then names the bound ports) -> in a background task, build the registry
(``KafkaSchemaStore`` on the ``schema.registry.topic`` through this broker's inter-broker listener, with its
security protocol and credentials: ``broker.security.inter_broker.inter_broker_client_properties``;
``SchemaRegistry`` with the configured defaults) and start it (create the topic, read it to the end).

Requests that arrive before the registry is ready wait for it, up to ``schema.registry.init.timeout.ms``, then
answer 50002; a registry that failed to start answers 50001 naming the cause (also logged) until the broker
stops. Each request's principal is ``User:<name>`` with BASIC (``request.principal``), else ``User:ANONYMOUS``.

Stop: close the listeners (requests in flight finish first), then stop the registry (its store's clients).
Idempotent. Concurrency: everything runs on the broker's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..config import BrokerConfig, ConfigError
from ..config_keys.schema_registry import SCHEMA_REGISTRY_SSL_KEYS
from .auth import BasicAuthenticator
from .errors import operation_timeout, store_error
from .http_server import HttpRequest, HttpResponse, HttpServer, Limits
from .routes import RegistryRoutes

__all__ = ["RegistryListener", "SchemaRegistryService", "parse_listeners"]

log = logging.getLogger("kafkalog.schema_registry")

LISTENERS_KEY = "schema.registry.listeners"


class Broker(Protocol):
    """What the service uses of ``broker.server.Broker`` (which it must not import: the layers)."""

    config: BrokerConfig
    broker_id: int
    scram_credentials: Any  # broker.security.scram_credentials.ScramCredentialCache
    registry: Any  # broker.cluster.registry.ClusterRegistry | None (its cluster_id)

    def endpoints(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class RegistryListener:
    """One REST listener: ``scheme`` (http or https), ``host`` ("" = every interface) and ``port`` (0 = any)."""

    scheme: str
    host: str
    port: int


def parse_listeners(values: Sequence[str]) -> list[RegistryListener]:
    """``schema.registry.listeners`` -> listeners; ``ConfigError`` naming the key and the bad entry."""
    out = []
    for text in values:
        parts = urlsplit(text.strip())
        try:
            port = parts.port
        except ValueError:
            port = None
        if parts.scheme not in ("http", "https") or port is None or parts.path not in ("", "/") or parts.query:
            raise ConfigError(
                f"{LISTENERS_KEY}: {text!r} is not a listener; expected http://host:port or https://host:port"
            )
        out.append(RegistryListener(parts.scheme, parts.hostname or "", port))
    return out


def registry_ssl_properties(broker_properties: dict[str, str]) -> dict[str, str]:
    """The ``ssl.*`` view of the https listeners: the broker's plain ``ssl.*`` keys, overridden by
    ``schema.registry.ssl.*``. Contains secrets: never log it."""
    out = {k: v for k, v in broker_properties.items() if k.startswith("ssl.")}
    prefix = "schema.registry."
    for key in SCHEMA_REGISTRY_SSL_KEYS:
        if prefix + key in broker_properties:
            out[key] = broker_properties[prefix + key]
    return out


def _server_ssl_context(properties: dict[str, str]) -> ssl.SSLContext:
    from spark_kafkalog.security.errors import SecurityConfigError
    from spark_kafkalog.security.ssl_context import SslSettings, server_context

    try:
        return server_context(SslSettings.from_config(registry_ssl_properties(properties)))
    except (SecurityConfigError, ValueError, OSError, ssl.SSLError) as e:
        raise ConfigError(
            f"{LISTENERS_KEY}: cannot build the https listeners' TLS context (schema.registry.ssl.* or ssl.*): {e}"
        ) from None


def authenticator_for(broker: Broker) -> BasicAuthenticator | None:
    """The basic authenticator ``schema.registry.authentication.method`` asks for, or None for NONE."""
    config = broker.config
    sasl_listeners = [
        lst.name for lst in config.listeners if config.security_protocol(lst.name) in ("SASL_PLAINTEXT", "SASL_SSL")
    ]
    method = config["schema.registry.authentication.method"] or ("BASIC" if sasl_listeners else "NONE")
    if method == "NONE":
        return None
    from spark_kafkalog.security.errors import SecurityConfigError
    from spark_kafkalog.security.jaas import parse_jaas_config, plain_users

    users: dict[str, str] = {}
    for name in sasl_listeners:
        if "PLAIN" not in config.sasl_enabled_mechanisms(name):
            continue
        text = config.sasl_jaas_config(name, "PLAIN")
        if text is None:
            continue
        try:
            users.update(plain_users(parse_jaas_config(text)))
        except SecurityConfigError as e:
            raise ConfigError(f"listener {name}: its PLAIN JAAS config: {e}") from None
    return BasicAuthenticator(users, broker.scram_credentials.lookup)


class SchemaRegistryService:
    """The registry of one broker: its REST listeners and the ``SchemaRegistry`` behind them."""

    def __init__(
        self,
        broker: Broker,
        *,
        listeners: Sequence[str] | None = None,
        registry_factory: Callable[[], Any] | None = None,
    ) -> None:
        """``listeners``: instead of ``schema.registry.listeners`` (``EmbeddedBroker.start_schema_registry``);
        ``registry_factory``: builds the ``SchemaRegistry`` (tests; default: on the broker's own topic)."""
        config = broker.config
        self.broker = broker
        self.listeners = parse_listeners(config[LISTENERS_KEY] if listeners is None else tuple(listeners))
        self.authenticator = authenticator_for(broker)
        self.init_timeout_s = config["schema.registry.init.timeout.ms"] / 1000
        self._registry_factory = registry_factory or self._kafka_registry
        self.registry: Any = None
        self._failure: BaseException | None = None
        self._ready = asyncio.Event()
        self._init_task: asyncio.Task | None = None
        self._routes: RegistryRoutes | None = None
        self.servers: list[HttpServer] = []
        context = None
        if any(lst.scheme == "https" for lst in self.listeners):
            context = _server_ssl_context(dict(config.originals))
        limits = Limits(max_body_bytes=config["schema.registry.request.max.bytes"])
        for lst in self.listeners:
            self.servers.append(
                HttpServer(
                    self._handle,
                    lst.host,
                    lst.port,
                    ssl_context=context if lst.scheme == "https" else None,
                    limits=limits,
                    name=f"broker {broker.broker_id} schema registry",
                )
            )

    @property
    def urls(self) -> list[str]:
        """Each listener's URL with its bound port (``http://127.0.0.1:8081``); a wildcard host as 127.0.0.1."""
        out = []
        for server in self.servers:
            host = server.host if server.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
            host = f"[{host}]" if ":" in host else host
            out.append(f"{server.scheme}://{host}:{server.port}")
        return out

    @property
    def ready(self) -> bool:
        return self._ready.is_set() and self._failure is None

    async def start(self) -> None:
        """Bind the listeners and start building the registry in the background (see the module docstring)."""
        try:
            for server in self.servers:
                await server.start()
        except BaseException:
            await self.stop()
            raise
        self._init_task = asyncio.get_running_loop().create_task(self._init(), name="schema-registry-init")
        log.info("broker %d: schema registry at %s", self.broker.broker_id, ", ".join(self.urls))

    async def wait_ready(self, timeout_s: float | None = None) -> None:
        """Wait until the registry is ready; raises its start-up failure, or ``TimeoutError``."""
        await asyncio.wait_for(self._ready.wait(), self.init_timeout_s if timeout_s is None else timeout_s)
        if self._failure is not None:
            raise self._failure

    async def stop(self) -> None:
        for server in self.servers:
            await server.stop()
        if self._init_task is not None and not self._init_task.done():
            self._init_task.cancel()
            with contextlib.suppress(BaseException):
                await self._init_task
        registry, self.registry = self.registry, None
        if registry is not None:
            try:
                await registry.stop()
            except Exception:
                log.exception("broker %d: stopping the schema registry failed", self.broker.broker_id)

    # -- the registry ------------------------------------------------------------------------------
    def _kafka_registry(self) -> Any:
        from ..security.inter_broker import inter_broker_client_properties
        from .registry import SchemaRegistry
        from .store import KafkaSchemaStore

        broker, config = self.broker, self.broker.config
        name = config.inter_broker_listener_name
        bootstrap = next(e.split("://", 1)[1] for e in broker.endpoints() if e.split("://", 1)[0] == name)
        settings: dict[str, Any] = dict(inter_broker_client_properties(config))
        settings["client.id"] = f"schema-registry-{broker.broker_id}"
        store = KafkaSchemaStore(
            bootstrap,
            settings,
            topic=config["schema.registry.topic"],
            replication_factor=config["schema.registry.topic.replication.factor"],
            timeout_s=self.init_timeout_s,
        )
        return SchemaRegistry(
            store,
            default_compatibility=config["schema.registry.compatibility.level"],
            mode_mutability=config["schema.registry.mode.mutability"],
        )

    async def _init(self) -> None:
        try:
            registry = self._registry_factory()
            self.registry = registry
            await asyncio.wait_for(registry.start(), self.init_timeout_s)
            self._routes = RegistryRoutes(registry, cluster_id=self._cluster_id())
            log.info("broker %d: schema registry ready", self.broker.broker_id)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            self._failure = TimeoutError(
                f"the schema registry did not read its topic within {self.init_timeout_s * 1000:.0f} ms "
                "(schema.registry.init.timeout.ms)"
            )
            log.error("broker %d: %s", self.broker.broker_id, self._failure)
        except BaseException as e:
            self._failure = e
            log.error("broker %d: the schema registry failed to start: %s", self.broker.broker_id, e)
        finally:
            self._ready.set()

    def _cluster_id(self) -> str:
        registry = self.broker.registry
        return str(getattr(registry, "cluster_id", "") or "")

    # -- requests ----------------------------------------------------------------------------------
    async def _handle(self, request: HttpRequest) -> HttpResponse:
        if self.authenticator is not None:
            principal = self.authenticator.authenticate(request.headers.get("authorization"), peer=request.peer)
            if principal is None:
                return BasicAuthenticator.challenge()
            request.principal = principal
        if not self._ready.is_set():
            try:
                await asyncio.wait_for(self._ready.wait(), self.init_timeout_s)
            except TimeoutError:
                e = operation_timeout("the schema registry is still starting (reading its topic)")
                return HttpResponse.error(e.http_status, e.error_code, e.message)
        if isinstance(self._failure, TimeoutError):
            e = operation_timeout(str(self._failure))
            return HttpResponse.error(e.http_status, e.error_code, e.message)
        if self._failure is not None or self._routes is None:
            e = store_error(f"the schema registry failed to start: {self._failure}")
            return HttpResponse.error(e.http_status, e.error_code, e.message)
        response = await self._routes(request)
        log.debug("%s %s %s -> %d (%s)", request.principal, request.method, request.path, response.status, request.peer)
        return response
