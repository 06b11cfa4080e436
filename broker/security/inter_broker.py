"""How this broker connects to the others: the inter-broker listener and the client-side security of its connections.

Replica fetchers, the transaction marker sender and controlled shutdown all connect to the other broker's
advertised endpoint of ``inter.broker.listener.name`` (or the listener named like
``security.inter.broker.protocol``), as Kafka's brokers do. The client side is built from this broker's own
config of that listener (``inter_broker_client_properties``), Kafka's client names:

* ``security.protocol``: the listener's protocol from ``listener.security.protocol.map``;
* TLS: the listener's ``ssl.truststore.*`` (the CA of the peers), ``ssl.keystore.*``/``ssl.key.password`` (the
  broker's certificate, for listeners with ``ssl.client.auth=required``), ``ssl.endpoint.identification.algorithm``
  (``https``: the peer's certificate must name its advertised host), protocols and cipher suites; the
  listener-prefixed keys win, as for the server side;
* SASL: ``sasl.mechanism`` = ``sasl.mechanism.inter.broker.protocol``; the identity is ``username``/``password``
  of the listener's JAAS config for that mechanism (``listener.name.<l>.<mech>.sasl.jaas.config``, else
  ``sasl.jaas.config``), handed over as ``sasl.username``/``sasl.password``; OAUTHBEARER takes the JAAS line itself.

``InterBrokerClient.from_config(config)`` reads the stores once (at start-up; errors are ``ConfigError`` naming
the listener and key) and is shared by every inter-broker connection of the broker. Immutable; its ``repr``
shows no secret. ``InterBrokerConnections`` keeps one shared connection per peer for a sender of inter-broker
requests (the transaction marker sender, the share-state persister); event loop only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from spark_kafkalog.client.errors import KafkaClientError, KafkaConnectionError
from spark_kafkalog.security.errors import SecurityConfigError

from ..config import ConfigError, listener_prefix

if TYPE_CHECKING:
    from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection

    from ..cluster.registry import BrokerInfo
    from ..config import BrokerConfig

__all__ = ["InterBrokerClient", "InterBrokerConnections", "inter_broker_client_properties"]

_CLIENT_SSL_KEYS = (
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.key.password",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.endpoint.identification.algorithm",
    "ssl.enabled.protocols",
    "ssl.protocol",
    "ssl.cipher.suites",
)


def inter_broker_client_properties(config: BrokerConfig) -> dict[str, str]:
    """The client settings (Kafka's names) of this broker's connections to the others; contains secrets."""
    name = config.inter_broker_listener_name
    protocol = config.security_protocol(name)
    props = {"security.protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        view = config.listener_properties(name)
        props.update((k, view[k]) for k in _CLIENT_SSL_KEYS if k in view)
    if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        mechanism = config["sasl.mechanism.inter.broker.protocol"]  # checked present by BrokerConfig
        props["sasl.mechanism"] = mechanism
        text = config.sasl_jaas_config(name, mechanism)
        key = f"{listener_prefix(name)}{mechanism.lower()}.sasl.jaas.config"
        if text is None:
            raise ConfigError(
                f"inter-broker listener {name}: {key} (or sasl.jaas.config) is not set; its username and "
                f"password are the identity brokers use with each other ({mechanism})"
            )
        if mechanism == "OAUTHBEARER":
            props["sasl.jaas.config"] = text
        else:
            from spark_kafkalog.security.jaas import parse_jaas_config

            try:
                jaas = parse_jaas_config(text)
            except SecurityConfigError as e:
                raise ConfigError(f"inter-broker listener {name}: {key} (or sasl.jaas.config): {e}") from None
            if not jaas.username or jaas.password is None:
                raise ConfigError(
                    f"inter-broker listener {name}: {key} (or sasl.jaas.config) has no username and password, "
                    f"the identity brokers use with each other ({mechanism})"
                )
            props["sasl.username"], props["sasl.password"] = jaas.username, jaas.password
    return props


@dataclass(frozen=True)
class InterBrokerClient:
    """The inter-broker listener's name and protocol, and the ``ClientSecurity`` of connections to it
    (None for PLAINTEXT)."""

    listener: str
    protocol: str = "PLAINTEXT"
    security: Any = field(default=None, repr=False)  # spark_kafkalog.client.network.security.ClientSecurity

    @classmethod
    def from_config(cls, config: BrokerConfig) -> InterBrokerClient:
        """Build it from the broker's config (reads key and trust stores now); ``ConfigError`` names the problem."""
        name = config.inter_broker_listener_name
        props = inter_broker_client_properties(config)
        protocol = props["security.protocol"]
        if protocol == "PLAINTEXT":
            return cls(name, protocol)
        from spark_kafkalog.client.network.security import ClientSecurity

        try:
            security = ClientSecurity.from_config(props)
        except (SecurityConfigError, ValueError, OSError) as e:
            raise ConfigError(f"inter-broker listener {name} ({protocol}): cannot build the client side: {e}") from None
        return cls(name, protocol, security)

    def address(self, info: BrokerInfo) -> tuple[str, int]:
        """``(host, port)`` of ``info``'s endpoint for the inter-broker listener; ``KafkaConnectionError`` when it
        advertises none (every broker of a cluster must have the inter-broker listener)."""
        endpoint = info.listener_endpoint(self.listener)
        if endpoint is None:
            raise KafkaConnectionError(
                f"broker {info.broker_id} advertises no endpoint for the inter-broker listener {self.listener} "
                f"(its listeners: {', '.join(info.listener_names)})",
                broker=str(info.broker_id),
            )
        return endpoint

    async def open(self, info: BrokerInfo, *, client_id: str, **kwargs: Any) -> AsyncKafkaConnection:
        """A connection to broker ``info`` over the inter-broker listener (TLS and SASL done when it returns)."""
        from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection

        host, port = self.address(info)
        if self.security is not None:
            kwargs["security"] = self.security
        return await AsyncKafkaConnection.open(host, port, node_id=info.broker_id, client_id=client_id, **kwargs)


class InterBrokerConnections:
    """One shared connection per peer broker, opened on first use (one opener at a time per peer) with
    ``client()``'s security and named ``client_id``; ``drop`` closes a peer's after a failure (the next ``get``
    opens a new one). ``broker_info(node)`` is the peer's registration (None: not registered)."""

    def __init__(
        self,
        client: Callable[[], InterBrokerClient],
        broker_info: Callable[[int], BrokerInfo | None],
        client_id: str,
    ) -> None:
        self._client, self._broker_info, self._client_id = client, broker_info, client_id
        self._conns: dict[int, AsyncKafkaConnection] = {}
        self._opening: dict[int, asyncio.Lock] = {}

    async def get(self, node: int) -> AsyncKafkaConnection:
        """The connection to broker ``node``; ``KafkaClientError`` when it is not registered or cannot be reached."""
        conn = self._conns.get(node)
        if conn is not None:
            return conn
        lock = self._opening.setdefault(node, asyncio.Lock())
        async with lock:
            conn = self._conns.get(node)
            if conn is None:
                info = self._broker_info(node)
                if info is None:
                    raise KafkaClientError(f"broker {node} is not registered")
                conn = await self._client().open(info, client_id=self._client_id)
                self._conns[node] = conn
        return conn

    async def drop(self, node: int) -> None:
        """Close the connection to ``node`` (if any)."""
        dropped = self._conns.pop(node, None)
        if dropped is not None:
            await dropped.close()

    async def close(self) -> None:
        conns, self._conns = self._conns, {}
        for c in conns.values():
            await c.close()
