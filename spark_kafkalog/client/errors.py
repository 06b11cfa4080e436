"""Exceptions raised at the client's API boundary.

Kafka error codes travel as data inside responses; the client turns the ones it cannot handle into a
``KafkaClientError`` whose message names the broker, topic and partition involved, and whose
``error_code`` keeps the code (``None`` for local failures such as a refused connection or a bad
configuration). ``retriable`` says whether repeating the same call may succeed.

Authorization failures (TOPIC_ 29, GROUP_ 30, CLUSTER_ 31, TRANSACTIONAL_ID_AUTHORIZATION_FAILED 53) are
``AuthorizationError``s, never retriable: ``principal`` (the client's ``User:<name>``, None when only the broker
knows it), ``resource`` (a LITERAL ``ResourcePattern``: type and name) and ``operation`` (Kafka's
``AclOperation`` the API needs, from ``API_OPERATIONS``), and a message that names all three with the
``kafkalog acls`` command that grants it.

``REFRESH_METADATA_ERRORS`` is the one table of broker error codes after which the client's metadata is
stale (the leader moved, the topic or partition is new or gone, the replica's disk failed): the topic is
refreshed before the next attempt, which is then retried (Kafka's ``InvalidMetadataException`` family).
"""

from __future__ import annotations

from typing import Any

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import CLUSTER_NAME, AclOperation, PatternType, ResourcePattern, ResourceType

__all__ = [
    "API_OPERATIONS",
    "AUTHORIZATION_ERRORS",
    "REFRESH_METADATA_ERRORS",
    "AuthorizationError",
    "BrokerNotAvailableError",
    "ClusterAuthorizationFailedError",
    "ConfigError",
    "GroupAuthorizationFailedError",
    "KafkaAuthenticationError",
    "KafkaClientError",
    "KafkaConnectionError",
    "KafkaSslError",
    "KafkaTimeoutError",
    "NoCommonVersionError",
    "OffsetOutOfRangeError",
    "ProducerClosedError",
    "RecordTooLargeError",
    "TopicAuthorizationFailedError",
    "TransactionalIdAuthorizationFailedError",
    "authorization_error",
    "client_principal",
    "error_for_code",
]

REFRESH_METADATA_ERRORS = frozenset(
    int(e)
    for e in (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.REPLICA_NOT_AVAILABLE,
        ErrorCode.KAFKA_STORAGE_ERROR,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.OFFSET_NOT_AVAILABLE,
        ErrorCode.UNKNOWN_TOPIC_ID,
        ErrorCode.INCONSISTENT_TOPIC_ID,
    )
)


class KafkaClientError(Exception):
    """A failed client operation; ``error_code`` is the broker's code, or ``None`` for local failures."""

    def __init__(
        self,
        message: str,
        *,
        error_code: int | None = None,
        retriable: bool | None = None,
        broker: str | None = None,
        topic: str | None = None,
        partition: int | None = None,
    ) -> None:
        self.error_code = ErrorCode(error_code) if error_code is not None else None
        if retriable is None:
            retriable = bool(self.error_code is not None and self.error_code.retriable)
        self.retriable = retriable
        self.broker = broker
        self.topic = topic
        self.partition = partition
        super().__init__(message)

    def add_context(self, text: str) -> None:
        """Append ``"; <text>"`` to the message (what was being done, for how long), so ``str(error)``
        - all a command-line user sees - says it, unlike ``add_note``."""
        self.args = (f"{self.args[0]}; {text}", *self.args[1:])


class ConfigError(KafkaClientError, ValueError):
    """An unknown configuration key, or a value of the wrong type or range."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retriable=False)


class KafkaConnectionError(KafkaClientError):
    """A broker could not be reached, or the connection broke (in-flight requests are lost).

    For a failed connection attempt, ``address`` is the ``host:port`` tried and ``reason`` a short text
    ("connection refused", "connect timed out after 10.0 s", ...); ``refused`` is True when the address
    answered at once that no Kafka broker serves there (connection refused, unknown host, no route, closed
    during the ApiVersions handshake), as opposed to a timeout, which may be a slow or busy broker.
    """

    def __init__(
        self,
        message: str,
        *,
        broker: str | None = None,
        address: str | None = None,
        reason: str | None = None,
        refused: bool = False,
        retriable: bool = True,
    ) -> None:
        super().__init__(message, error_code=ErrorCode.NETWORK_EXCEPTION, retriable=retriable, broker=broker)
        self.address = address
        self.reason = reason
        self.refused = refused


class BrokerNotAvailableError(KafkaConnectionError):
    """None of the bootstrap servers or known brokers accepted a connection; ``failures`` holds the
    ``KafkaConnectionError`` of each address tried, in order. Not retriable when every bootstrap server
    kept refusing (see ``pool``): the address is wrong or nothing runs there."""

    def __init__(self, message: str, *, failures: list[KafkaConnectionError], retriable: bool = True) -> None:
        super().__init__(message, retriable=retriable, refused=all(f.refused for f in failures))
        self.failures = failures


class KafkaAuthenticationError(KafkaClientError):
    """SASL authentication with a broker failed: wrong credentials (SASL_AUTHENTICATION_FAILED, 58), a
    mechanism the broker does not enable (UNSUPPORTED_SASL_MECHANISM, 33, ``enabled_mechanisms`` lists the
    broker's), an out-of-order exchange (ILLEGAL_SASL_STATE, 34) or an answer our side of the mechanism
    rejects (a wrong SCRAM server signature). Never retriable: the same credentials fail again. The message
    names the broker, the mechanism and the broker's own message; it never contains a credential."""

    def __init__(
        self,
        message: str,
        *,
        broker: str | None = None,
        mechanism: str | None = None,
        error_code: int | None = ErrorCode.SASL_AUTHENTICATION_FAILED,
        enabled_mechanisms: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message, error_code=error_code, retriable=False, broker=broker)
        self.mechanism = mechanism
        self.enabled_mechanisms = enabled_mechanisms


class KafkaSslError(KafkaClientError):
    """The TLS handshake with a broker failed: its certificate is not trusted, names another host, our
    certificate was refused, or the port does not speak TLS. Not retriable (a configuration problem);
    the message names the broker and OpenSSL's reason."""

    def __init__(self, message: str, *, broker: str | None = None, address: str | None = None) -> None:
        super().__init__(message, retriable=False, broker=broker)
        self.address = address


class KafkaTimeoutError(KafkaClientError):
    """An operation did not finish within its deadline (``request.timeout.ms``, ``max.block.ms``, ...)."""

    def __init__(self, message: str, **where: Any) -> None:
        super().__init__(message, error_code=ErrorCode.REQUEST_TIMED_OUT, retriable=True, **where)


class NoCommonVersionError(KafkaClientError):
    """The broker supports no version of an API that this client can use for the request."""

    def __init__(self, message: str, *, broker: str | None = None) -> None:
        super().__init__(message, error_code=ErrorCode.UNSUPPORTED_VERSION, retriable=False, broker=broker)


class OffsetOutOfRangeError(KafkaClientError):
    """A fetch offset outside ``[log_start_offset, high_watermark]`` of the partition."""

    def __init__(
        self, message: str, *, topic: str, partition: int, offset: int, log_start_offset: int, high_watermark: int
    ) -> None:
        super().__init__(message, error_code=ErrorCode.OFFSET_OUT_OF_RANGE, topic=topic, partition=partition)
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.high_watermark = high_watermark


class RecordTooLargeError(KafkaClientError):
    """A record larger than ``max.request.size`` (or a batch the broker rejected as too large)."""

    def __init__(self, message: str, **where: Any) -> None:
        super().__init__(message, error_code=ErrorCode.MESSAGE_TOO_LARGE, retriable=False, **where)


class ProducerClosedError(KafkaClientError):
    """``send`` after ``close``, or a record still queued when ``close`` gave up waiting."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retriable=False)


_O, _T = AclOperation, ResourceType

API_OPERATIONS: dict[str, dict[ResourceType, AclOperation]] = {
    "Metadata": {_T.TOPIC: _O.DESCRIBE},
    "DescribeTopics": {_T.TOPIC: _O.DESCRIBE},
    "Produce": {_T.TOPIC: _O.WRITE, _T.TRANSACTIONAL_ID: _O.WRITE},
    "Fetch": {_T.TOPIC: _O.READ, _T.CLUSTER: _O.CLUSTER_ACTION},
    "ListOffsets": {_T.TOPIC: _O.DESCRIBE},
    "OffsetForLeaderEpoch": {_T.TOPIC: _O.DESCRIBE},
    "FindCoordinator": {_T.GROUP: _O.DESCRIBE, _T.TRANSACTIONAL_ID: _O.DESCRIBE},
    "JoinGroup": {_T.GROUP: _O.READ},
    "SyncGroup": {_T.GROUP: _O.READ},
    "Heartbeat": {_T.GROUP: _O.READ},
    "LeaveGroup": {_T.GROUP: _O.READ},
    "OffsetCommit": {_T.GROUP: _O.READ, _T.TOPIC: _O.READ},
    "OffsetFetch": {_T.GROUP: _O.DESCRIBE, _T.TOPIC: _O.DESCRIBE},
    "OffsetDelete": {_T.GROUP: _O.DELETE, _T.TOPIC: _O.READ},
    "DeleteGroups": {_T.GROUP: _O.DELETE},
    "DescribeGroups": {_T.GROUP: _O.DESCRIBE},
    "ListGroups": {_T.CLUSTER: _O.DESCRIBE},
    "InitProducerId": {_T.TRANSACTIONAL_ID: _O.WRITE, _T.CLUSTER: _O.IDEMPOTENT_WRITE},
    "AddPartitionsToTxn": {_T.TRANSACTIONAL_ID: _O.WRITE, _T.TOPIC: _O.WRITE},
    "AddOffsetsToTxn": {_T.TRANSACTIONAL_ID: _O.WRITE, _T.GROUP: _O.READ},
    "TxnOffsetCommit": {_T.TRANSACTIONAL_ID: _O.WRITE, _T.GROUP: _O.READ, _T.TOPIC: _O.READ},
    "EndTxn": {_T.TRANSACTIONAL_ID: _O.WRITE},
    "DescribeTransactions": {_T.TRANSACTIONAL_ID: _O.DESCRIBE},
    "CreateTopics": {_T.TOPIC: _O.CREATE, _T.CLUSTER: _O.CREATE},
    "DeleteTopics": {_T.TOPIC: _O.DELETE},
    "DeleteRecords": {_T.TOPIC: _O.DELETE},
    "CreatePartitions": {_T.TOPIC: _O.ALTER},
    "DescribeConfigs": {_T.TOPIC: _O.DESCRIBE_CONFIGS, _T.CLUSTER: _O.DESCRIBE_CONFIGS},
    "AlterConfigs": {_T.TOPIC: _O.ALTER_CONFIGS, _T.CLUSTER: _O.ALTER_CONFIGS},
    "IncrementalAlterConfigs": {_T.TOPIC: _O.ALTER_CONFIGS, _T.CLUSTER: _O.ALTER_CONFIGS},
    "DescribeAcls": {_T.CLUSTER: _O.DESCRIBE},
    "CreateAcls": {_T.CLUSTER: _O.ALTER},
    "DeleteAcls": {_T.CLUSTER: _O.ALTER},
    "ShareGroupHeartbeat": {_T.GROUP: _O.READ, _T.TOPIC: _O.DESCRIBE},
    "ShareFetch": {_T.GROUP: _O.READ, _T.TOPIC: _O.READ},
    "ShareAcknowledge": {_T.GROUP: _O.READ, _T.TOPIC: _O.READ},
}
"""API name (the first word of an error's ``what``) -> the operation it needs on each resource type (Kafka's
``KafkaApis`` checks): what an ``AuthorizationError`` names when its caller does not say."""

_CLI_FLAGS = {
    ResourceType.TOPIC: "--topic",
    ResourceType.GROUP: "--group",
    ResourceType.TRANSACTIONAL_ID: "--transactional-id",
    ResourceType.CLUSTER: "--cluster",
}
_NOUNS = {
    ResourceType.TOPIC: "topic",
    ResourceType.GROUP: "group",
    ResourceType.TRANSACTIONAL_ID: "transactional id",
    ResourceType.CLUSTER: "cluster",
}


class AuthorizationError(KafkaClientError):
    """The broker's authorizer refused ``operation`` on ``resource`` to ``principal``: an ACL is missing (or a
    DENY matches). Never retriable: the same request fails until an administrator grants it. ``principal`` is
    None when the client cannot name it (a TLS client certificate's DN, an OAUTHBEARER token's subject: only the
    broker maps those); ``resource_name`` None when the failing call did not say which one; ``operation`` None
    for an API this client does not know. ``str()`` renders all of them and the command that grants it."""

    resource_type: ResourceType = ResourceType.UNKNOWN
    code: ErrorCode = ErrorCode.UNKNOWN_SERVER_ERROR

    def __init__(
        self,
        *,
        what: str,
        resource_name: str | None = None,
        operation: AclOperation | None = None,
        principal: str | None = None,
        principal_hint: str | None = None,
        broker: str | None = None,
        topic: str | None = None,
        partition: int | None = None,
        detail: str | None = None,
    ) -> None:
        self.what = what
        self.resource_name = resource_name
        self.operation = operation
        self.principal = principal
        self.principal_hint = principal_hint
        self.bootstrap_servers: str | None = None  # for the grant command; set with the principal by the client
        self.detail = detail
        self._context: list[str] = []
        super().__init__("", error_code=self.code, retriable=False, broker=broker, topic=topic, partition=partition)

    @property
    def resource(self) -> ResourcePattern | None:
        """The refused resource as a LITERAL pattern (None when its name is unknown)."""
        if self.resource_name is None:
            return None
        return ResourcePattern(self.resource_type, self.resource_name, PatternType.LITERAL)

    def name_principal(self, principal: str | None, hint: str | None = None) -> None:
        """Name the client's principal (``client_principal``) if the error does not name one yet."""
        if self.principal is None and self.principal_hint is None:
            self.principal, self.principal_hint = principal, hint

    def add_context(self, text: str) -> None:
        self._context.append(text)

    def __str__(self) -> str:
        who = self.principal or self.principal_hint or "this client's principal"
        if self.principal and self.principal_hint:
            who = f"{self.principal} ({self.principal_hint})"
        op = self.operation.name if self.operation is not None else f"use {self.what} on"
        noun = _NOUNS.get(self.resource_type, self.resource_type.name.lower())
        if self.resource_type is ResourceType.CLUSTER:
            target = "the cluster"
        elif self.resource_name is None:
            target = f"this {noun}"
        else:
            target = f"{noun} {self.resource_name!r}"
        place = f" on broker {self.broker}" if self.broker else ""
        text = (
            f"Not authorized: principal {who} may not {op} {target} "
            f"({self.code.name}, {int(self.code)}, in {self.what}{place})"
        )
        if self.detail:
            text += f": {self.detail}"
        text += f"; grant it with: {self.grant_command()}"
        if self.operation is AclOperation.IDEMPOTENT_WRITE:  # KIP-679: Write on any topic also lets it in
            principal = self.principal or "User:<name>"
            text += f" (or Write on a topic: ... --allow-principal {principal} --operation Write --topic <name>)"
        return "; ".join([text, *self._context])

    def grant_command(self) -> str:
        """The ``kafkalog acls`` command line that allows this (placeholders for what is unknown; the administrator
        adds ``--command-config`` with their own login)."""
        principal = self.principal or "User:<name>"
        operation = self.operation.kafka_name if self.operation is not None else "<operation>"
        flag = _CLI_FLAGS.get(self.resource_type, "--" + self.resource_type.name.lower().replace("_", "-"))
        target = flag if self.resource_type is ResourceType.CLUSTER else f"{flag} {self.resource_name or '<name>'}"
        servers = self.bootstrap_servers or "<host:port>"
        return (
            f"kafkalog acls --bootstrap-server {servers} --add --allow-principal {principal} "
            f"--operation {operation} {target}"
        )

    def __reduce__(self) -> Any:  # keeps the fields across pickling (Spark sends errors between processes)
        return (_rebuild_authorization_error, (type(self), self.__dict__.copy()))


def _rebuild_authorization_error(cls: type[AuthorizationError], state: dict[str, Any]) -> AuthorizationError:
    error = cls.__new__(cls)
    Exception.__init__(error, "")
    error.__dict__.update(state)
    return error


class TopicAuthorizationFailedError(AuthorizationError):
    """TOPIC_AUTHORIZATION_FAILED (29): ``resource_name`` is the topic."""

    resource_type = ResourceType.TOPIC
    code = ErrorCode.TOPIC_AUTHORIZATION_FAILED


class GroupAuthorizationFailedError(AuthorizationError):
    """GROUP_AUTHORIZATION_FAILED (30): ``resource_name`` is the group id."""

    resource_type = ResourceType.GROUP
    code = ErrorCode.GROUP_AUTHORIZATION_FAILED


class ClusterAuthorizationFailedError(AuthorizationError):
    """CLUSTER_AUTHORIZATION_FAILED (31): the resource is the cluster (``kafka-cluster``)."""

    resource_type = ResourceType.CLUSTER
    code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED


class TransactionalIdAuthorizationFailedError(AuthorizationError):
    """TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53): ``resource_name`` is the transactional id."""

    resource_type = ResourceType.TRANSACTIONAL_ID
    code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


AUTHORIZATION_ERRORS: dict[int, type[AuthorizationError]] = {
    int(cls.code): cls
    for cls in (
        TopicAuthorizationFailedError,
        GroupAuthorizationFailedError,
        ClusterAuthorizationFailedError,
        TransactionalIdAuthorizationFailedError,
    )
}
"""Error code -> its ``AuthorizationError`` class."""


def authorization_error(
    code: int,
    what: str,
    *,
    resource_name: str | None = None,
    operation: AclOperation | None = None,
    principal: str | None = None,
    broker: str | None = None,
    topic: str | None = None,
    partition: int | None = None,
    detail: str | None = None,
) -> AuthorizationError:
    """The ``AuthorizationError`` of an authorization error ``code`` returned to API ``what`` (its first word
    names the API: the operation defaults to the one ``API_OPERATIONS`` gives it on the resource type). A
    topic error's resource is ``topic`` unless named; a cluster error's is always ``kafka-cluster``."""
    cls = AUTHORIZATION_ERRORS[int(code)]
    if cls is ClusterAuthorizationFailedError:
        resource_name = CLUSTER_NAME
    elif cls is TopicAuthorizationFailedError and resource_name is None:
        resource_name = topic
    if operation is None:
        words = what.split()
        operation = API_OPERATIONS.get(words[0] if words else "", {}).get(cls.resource_type)
    return cls(
        what=what,
        resource_name=resource_name,
        operation=operation,
        principal=principal,
        broker=broker,
        topic=topic,
        partition=partition,
        detail=detail,
    )


_CLIENT_CERTIFICATE_KEYS = (
    "ssl.keystore.location",
    "ssl.keystore.certificate.chain",
    "ssl.certificate.location",
    "ssl.certificate.pem",
)


def client_principal(security: Any, settings: Any = None) -> tuple[str | None, str | None]:
    """``(principal, hint)`` of a client secured by ``security`` (a ``ClientSecurity``, or None for
    PLAINTEXT) with the dotted security ``settings`` (``ClientConfig.security_config()``: whether a client
    certificate is configured) as the broker will see it: ``User:<SASL username>`` with SASL PLAIN or SCRAM;
    ``User:ANONYMOUS`` on PLAINTEXT and on SSL without a client certificate; otherwise (a certificate's DN
    after the broker's ``ssl.principal.mapping.rules``, an OAUTHBEARER token's subject) None and a hint."""
    sasl = getattr(security, "sasl", None)
    if sasl is not None:
        username = getattr(sasl, "username", None)
        if username:
            return f"User:{username}", None
        return None, f"the subject of this client's {getattr(sasl, 'mechanism', 'SASL')} token"
    has_certificate = any((settings or {}).get(key) for key in _CLIENT_CERTIFICATE_KEYS)
    if getattr(security, "uses_tls", False) and has_certificate:
        return None, "User:<the DN of this client's TLS certificate>"
    if getattr(security, "uses_tls", False):
        return "User:ANONYMOUS", "no SASL login and no TLS client certificate"
    return "User:ANONYMOUS", "no SASL login on a PLAINTEXT connection"


def error_for_code(
    code: int,
    what: str,
    *,
    broker: str | None = None,
    topic: str | None = None,
    partition: int | None = None,
    detail: str | None = None,
    resource_name: str | None = None,
    principal: str | None = None,
) -> KafkaClientError:
    """A ``KafkaClientError`` for a broker error code; the message reads
    ``"<what> failed on broker <b> for <topic>-<partition>: NAME (code): description[: detail]"``. The
    authorization codes give their ``AuthorizationError`` (``authorization_error``; ``resource_name``: the
    group or transactional id)."""
    if int(code) in AUTHORIZATION_ERRORS:
        return authorization_error(
            code,
            what,
            resource_name=resource_name,
            principal=principal,
            broker=broker,
            topic=topic,
            partition=partition,
            detail=detail,
        )
    error = ErrorCode(code)
    place = ""
    if broker is not None:
        place += f" on broker {broker}"
    if topic is not None:
        place += f" for {topic}" + (f"-{partition}" if partition is not None else "")
    text = f"{what} failed{place}: {error.name} ({int(error)}): {error.description}"
    if detail:
        text += f": {detail}"
    return KafkaClientError(text, error_code=error, broker=broker, topic=topic, partition=partition)
