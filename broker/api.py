"""The seam between the network layer and the API handlers: what a handler is given, what it may return,
and the registry of handlers (which APIs and versions the broker serves; ApiVersions answers from it).

A handler is an ``async`` callable ``handler(ctx, request_body) -> response body | NO_RESPONSE |
CloseConnection`` (``Handler``; ``Handler[HeartbeatRequest]`` for one whose body is typed by the API's
stub, ``spark_kafkalog/protocol/apis/heartbeat.pyi``), registered with the version range it serves, which
must lie within the API's declared range in ``spark_kafkalog.protocol.apis``. ``ctx.services`` (a ``BrokerServices``) is all a
handler sees of its broker. Registration happens before the server starts; afterwards the registry is
read-only and may be read from any thread. Neither ``broker.network`` nor ``broker.handlers`` imports
the other: both import this module.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, Message
from spark_kafkalog.protocol.messages import RequestHeader
from spark_kafkalog.security.acl import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:
    from .services import BrokerServices


class NoResponse:
    """Returned by a handler when the request gets no response at all (Produce with acks=0)."""

    def __repr__(self) -> str:
        return "NO_RESPONSE"


NO_RESPONSE = NoResponse()


class CloseConnection:
    """Returned by a handler to close the connection instead of answering (Kafka does this when an acks=0
    produce fails: the producer learns of the error only through the closed connection)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"CloseConnection({self.reason!r})"


@dataclass
class ClientSoftware:
    """What the client of one connection says it is (ApiVersions v3+, KIP-511): empty until it says so.
    One per connection, shared by the contexts of its requests; set by the ApiVersions handler."""

    name: str = ""
    version: str = ""


def _no_throttle(_ms: int) -> None:
    return None


@dataclass
class RequestContext:
    """What a handler knows about the request besides its body.

    ``principal`` is Kafka's ``"User:<name>"`` of the connection when the request was read: the SASL
    principal on SASL_* listeners (set after authentication, kept across re-authentication), the mapped
    client-certificate DN on SSL listeners with a verified client certificate, else ``User:ANONYMOUS``.
    """

    services: BrokerServices
    header: RequestHeader
    peer: str
    listener: str = "PLAINTEXT"
    connection_id: int = 0
    disconnected: Any = None  # an asyncio.Future completed when the client's connection is gone
    client: ClientSoftware = field(default_factory=ClientSoftware)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("kafkalog.handlers"))
    principal: str = "User:ANONYMOUS"  # who sent it: the SASL principal, the mTLS one on SSL listeners
    security_protocol: str = "PLAINTEXT"  # the listener's: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    throttle: Callable[[int], None] = _no_throttle
    """Mute this request's connection for the given milliseconds after its response is sent (KIP-219); the
    connection sets it, a no-op elsewhere."""

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def client_host(self) -> str:
        """The client's IP address as ACLs name hosts (``peer`` without its port; IPv6 unbracketed)."""
        host = self.peer.rsplit(":", 1)[0] if ":" in self.peer else self.peer
        return host.strip("[]")

    def authorize(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        """Whether this request's principal, from its host, may do ``operation`` on the literal resource
        ``(resource_type, name)`` (always, when no authorizer is configured). Kafka's implied operations apply."""
        return self.services.authorizer.authorize(self.principal, self.client_host, operation, resource_type, name)

    def authorize_cluster(self, operation: AclOperation) -> bool:
        """``authorize(operation, CLUSTER, "kafka-cluster")``."""
        return self.authorize(operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def authorize_by_resource_type(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        """KIP-679: whether some ACL allows ``operation`` on some resource of ``resource_type`` (idempotent
        producers without IdempotentWrite on the cluster)."""
        return self.services.authorizer.authorize_by_resource_type(
            self.principal, self.client_host, operation, resource_type
        )

    def authorized_operations(self, resource_type: ResourceType, name: str) -> int:
        """Kafka's authorized-operations bitfield of the resource for this principal (bit ``1 << op code``)."""
        return self.services.authorizer.authorized_operations(self.principal, self.client_host, resource_type, name)


HandlerResult = Message | NoResponse | CloseConnection
"""What a handler returns: the response body, ``NO_RESPONSE`` or ``CloseConnection``."""

_Body = TypeVar("_Body", bound=Message)
Handler = Callable[[RequestContext, _Body], Coroutine[Any, Any, HandlerResult]]
"""A handler of one API: ``Handler[ProduceRequest]`` takes the decoded body of a Produce request (a bare
``Handler`` is ``Handler[Any]``, what the registry holds)."""


@dataclass(frozen=True)
class HandlerEntry:
    api_key: int
    min_version: int
    max_version: int
    handler: Handler[Any]


class HandlerRegistry:
    """API key -> (served version range, handler)."""

    def __init__(self) -> None:
        self._entries: dict[int, HandlerEntry] = {}

    def register(self, api_key: int, min_version: int, max_version: int, handler: Handler[_Body]) -> None:
        spec = API_BY_KEY.get(api_key)
        if spec is None:
            raise ValueError(f"API {ApiKey(api_key).name} has no declaration in spark_kafkalog.protocol.apis")
        if not (spec.min_version <= min_version <= max_version <= spec.max_version):
            raise ValueError(
                f"{spec.name} {min_version}-{max_version} is outside its declared versions {spec.versions}"
            )
        if api_key in self._entries:
            raise ValueError(f"{spec.name} registered twice")
        self._entries[api_key] = HandlerEntry(api_key, min_version, max_version, handler)

    def get(self, api_key: int) -> HandlerEntry | None:
        return self._entries.get(api_key)

    def supports(self, api_key: int, version: int) -> bool:
        e = self._entries.get(api_key)
        return e is not None and e.min_version <= version <= e.max_version

    def version_ranges(self) -> list[tuple[int, int, int]]:
        """(api_key, min, max) for every served API, by key: the ApiVersions table."""
        return [(k, e.min_version, e.max_version) for k, e in sorted(self._entries.items())]
