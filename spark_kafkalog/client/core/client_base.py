"""``ClientBase``: what ``KafkaClient`` (blocking) and ``AsyncKafkaClient`` (``client.aio``) do alike without I/O -
the statistics counters, naming the principal in an authorization error, the closed check, the retry plan of a call,
broker addresses and the metadata invalidation after a partition error - so both clients decide these in one place.

Concurrency: none of its own; every method reads or replaces the client's attributes at once (the blocking client
calls them with or without its lock, as before; the asyncio client from its event loop).
"""

from __future__ import annotations

from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.read_replicas import PreferredReadReplicas
from spark_kafkalog.client.errors import (
    REFRESH_METADATA_ERRORS,
    AuthorizationError,
    KafkaClientError,
    client_principal,
)
from spark_kafkalog.client.metadata import BrokerAddress, MetadataCache
from spark_kafkalog.client.network.retry import RetryPlan
from spark_kafkalog.client.types import TopicPartition

__all__ = ["ClientBase", "new_client_stats"]


def new_client_stats() -> dict[str, Any]:
    """A client's request counters, all zero."""
    return {
        "requests": 0,
        "fetch_requests": 0,
        "bytes_fetched": 0,
        "batches_fetched": 0,
        "list_offsets_requests": 0,
        "metadata_requests": 0,
        "retries": 0,
    }


class ClientBase:
    """The I/O-free methods of both clients (see the module docstring); the client sets the attributes."""

    config: ClientConfig
    metadata: MetadataCache
    read_replicas: PreferredReadReplicas
    stats: dict[str, Any]
    _closed: bool

    def new_stats(self) -> dict[str, Any]:
        """This client's counters, all zero (``new_client_stats``; a client may add its own)."""
        return new_client_stats()

    def reset_stats(self) -> None:
        self.stats = self.new_stats()

    def name_principal(self, error: BaseException) -> None:
        """Name this client's principal (``errors.client_principal``) in an ``AuthorizationError`` that does
        not name one yet; other errors are left alone."""
        if isinstance(error, AuthorizationError):
            error.name_principal(*client_principal(self.config.security(), self.config.security_config()))
            if error.bootstrap_servers is None:
                error.bootstrap_servers = ",".join(self.config.bootstrap_servers)

    def _check_open(self) -> None:
        if self._closed:
            raise KafkaClientError("the client is closed", retriable=False)

    def retry_plan(self, timeout_ms: int | None = None) -> RetryPlan:
        """The retries of one call: ``retries``, backoff from ``retry.backoff.ms`` to ``retry.backoff.max.ms``,
        within ``timeout_ms`` (default ``default.api.timeout.ms``)."""
        cfg = self.config
        return RetryPlan(
            retries=cfg.retries,
            base_ms=cfg.retry_backoff_ms,
            max_ms=cfg.retry_backoff_max_ms,
            timeout_ms=cfg.default_api_timeout_ms if timeout_ms is None else timeout_ms,
        )

    def broker_address(self, node_id: int) -> BrokerAddress | None:
        return self.metadata.broker(node_id)

    def on_partition_error(self, tp: TopicPartition, code: int) -> None:
        """Mark ``tp``'s topic for a metadata refresh when ``code`` is one of ``REFRESH_METADATA_ERRORS``."""
        if code in REFRESH_METADATA_ERRORS:
            self.metadata.invalidate(tp.topic)
