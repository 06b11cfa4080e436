"""Which address of a broker's ZooKeeper registration the ``ConsumerConnector`` connects to (issue 26).

``/brokers/ids/<id>`` (JSON, versions 1-5, Kafka 0.8-3.9)::

    {"version":5,"host":"h","port":9092,                       # the first PLAINTEXT endpoint, else null/-1
     "endpoints":["CLIENT://h:9093","INTERNAL://10.0.0.1:9092"],   # versions 2+: LISTENER_NAME://host:port
     "listener_security_protocol_map":{"CLIENT":"SASL_SSL","INTERNAL":"PLAINTEXT"},   # versions 4+
     ...}

Kafka 0.8's consumer read ``host``/``port`` only, i.e. the PLAINTEXT listener. ``select_endpoint`` picks:

* with ``listener_name`` (the connector's ``listener.name``): that listener's endpoint (names compared
  case-insensitively, as Kafka upper-cases them); its protocol must be ``security.protocol``;
* otherwise the first endpoint whose listener's protocol is ``security.protocol``; a name missing from the
  map is its own protocol (versions 2-3 named listeners after their protocols);
* for PLAINTEXT without such an endpoint, ``host``/``port`` (versions 1: no endpoints).

A broker with no such endpoint raises ``BrokerEndPointNotAvailableException`` (Kafka 0.9's name) naming the
broker, the protocol (and listener) asked for and the listeners it has. Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_kafkalog.client.errors import KafkaClientError

__all__ = ["BrokerEndPointNotAvailableException", "select_endpoint"]


class BrokerEndPointNotAvailableException(KafkaClientError):
    """A registered broker has no endpoint for the configured ``security.protocol`` (or ``listener.name``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retriable=False)


def _listeners(broker_id: int, obj: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``[(listener name, protocol, "host:port")]`` in registration order."""
    protocols = obj.get("listener_security_protocol_map") or {}
    if not isinstance(protocols, Mapping):
        raise ValueError(f"broker {broker_id}: listener_security_protocol_map is not an object: {protocols!r:.200}")
    by_name = {str(k).upper(): str(v).upper() for k, v in protocols.items()}
    out = []
    for url in obj.get("endpoints") or []:
        name, sep, hostport = str(url).partition("://")
        if not sep or not name or ":" not in hostport:
            raise ValueError(f"broker {broker_id}: endpoint {url!r} is not LISTENER://host:port")
        out.append((name, by_name.get(name.upper(), name.upper()), hostport))
    return out


def select_endpoint(
    broker_id: int, obj: Mapping[str, Any], protocol: str = "PLAINTEXT", listener_name: str | None = None
) -> str:
    """``"host:port"`` of broker ``broker_id`` (its registration ``obj``) to reach over ``protocol`` (see the
    module docstring). Raises ``BrokerEndPointNotAvailableException``; ``ValueError`` for a malformed node."""
    protocol = protocol.upper()
    listeners = _listeners(broker_id, obj)
    has = ", ".join(f"{name} ({proto})" for name, proto, _ in listeners) or "none but host/port"
    if listener_name is not None:
        for name, proto, hostport in listeners:
            if name.upper() == listener_name.upper():
                if proto != protocol:
                    raise BrokerEndPointNotAvailableException(
                        f"broker {broker_id}: listener {name} (listener.name) uses {proto}, not "
                        f"security.protocol {protocol}"
                    )
                return hostport
        raise BrokerEndPointNotAvailableException(
            f"broker {broker_id} has no listener named {listener_name} (listener.name); its listeners: {has}"
        )
    for _name, proto, hostport in listeners:
        if proto == protocol:
            return hostport
    host, port = obj.get("host"), obj.get("port", -1)
    if protocol == "PLAINTEXT" and host and isinstance(port, int) and not isinstance(port, bool) and port >= 0:
        return f"{host}:{port}"
    if not listeners and not host:
        raise ValueError(f"broker {broker_id}: no host/port and no endpoints in {dict(obj)!r:.200}")
    raise BrokerEndPointNotAvailableException(
        f"broker {broker_id} has no endpoint for security.protocol {protocol}; its listeners: {has}"
    )
