"""Exceptions raised at the client's API boundary.

Kafka error codes travel as data inside responses; the client turns the ones it cannot handle into a
``KafkaClientError`` whose message names the broker, topic and partition involved, and whose
``error_code`` keeps the code (``None`` for local failures such as a refused connection or a bad
configuration). ``retriable`` says whether repeating the same call may succeed.

``REFRESH_METADATA_ERRORS`` is the one table of broker error codes after which the client's metadata is
stale (the leader moved, the topic or partition is new or gone, the replica's disk failed): the topic is
refreshed before the next attempt, which is then retried (Kafka's ``InvalidMetadataException`` family).
"""

from __future__ import annotations

from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "REFRESH_METADATA_ERRORS",
    "BrokerNotAvailableError",
    "ConfigError",
    "KafkaAuthenticationError",
    "KafkaClientError",
    "KafkaConnectionError",
    "KafkaSslError",
    "KafkaTimeoutError",
    "NoCommonVersionError",
    "OffsetOutOfRangeError",
    "ProducerClosedError",
    "RecordTooLargeError",
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

    def __init__(self, message: str, **where) -> None:
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

    def __init__(self, message: str, **where) -> None:
        super().__init__(message, error_code=ErrorCode.MESSAGE_TOO_LARGE, retriable=False, **where)


class ProducerClosedError(KafkaClientError):
    """``send`` after ``close``, or a record still queued when ``close`` gave up waiting."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retriable=False)


def error_for_code(
    code: int,
    what: str,
    *,
    broker: str | None = None,
    topic: str | None = None,
    partition: int | None = None,
    detail: str | None = None,
) -> KafkaClientError:
    """A ``KafkaClientError`` for a broker error code; the message reads
    ``"<what> failed on broker <b> for <topic>-<partition>: NAME (code): description[: detail]"``."""
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
