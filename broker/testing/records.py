"""Topic and record helpers behind the plugin's ``kafkalog_topic``, ``kafkalog_produce`` and ``kafkalog_records``.

Each talks to a broker or cluster by its bootstrap servers with kafkalog's own client (imported on first use),
so a test's assertions do not depend on the client under test. ``TopicFactory`` creates uniquely named topics
(``kafkalog-<test name>-<8 hex>``, at most 249 characters of ``[a-zA-Z0-9._-]`` as Kafka requires) and
deletes them at ``cleanup``.

Concurrency: a helper is used from the test's thread; each call opens and closes its own client connections.
"""

from __future__ import annotations

import re
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spark_kafkalog.client import ConsumerRecord, RecordMetadata

__all__ = ["TopicFactory", "produce_records", "read_records", "topic_name"]

_ILLEGAL = re.compile(r"[^a-zA-Z0-9._-]+")


def topic_name(hint: str = "") -> str:
    """A fresh topic name ``kafkalog-<hint>-<8 hex>``; ``hint`` (a test's name) is cut to legal characters."""
    base = _ILLEGAL.sub("-", hint).strip("-.")[:60]
    return f"kafkalog-{base}-{uuid.uuid4().hex[:8]}" if base else f"kafkalog-{uuid.uuid4().hex[:8]}"


class TopicFactory:
    """``factory(partitions=3, replication_factor=None, config=None, name=None) -> str``: creates a topic
    (``replication_factor`` None: the broker's ``default.replication.factor``), waits until each partition has a
    leader, and returns its name; ``cleanup()`` deletes every topic it created (the plugin calls it at teardown).
    """

    def __init__(
        self, bootstrap_servers: Callable[[], str], *, hint: str = "", client_config: Mapping[str, Any] | None = None
    ):
        self._bootstrap = bootstrap_servers
        self._hint = hint
        self._client_config = dict(client_config or {})
        self.created: list[str] = []
        """Names created so far, in order."""

    def __call__(
        self,
        partitions: int = 3,
        replication_factor: int | None = None,
        config: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> str:
        from spark_kafkalog.client import AdminClient, NewTopic

        topic = name or topic_name(self._hint)
        settings = {
            k if "." in k else k.replace("_", "."): str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in (config or {}).items()
        }
        new = NewTopic(topic, partitions, -1 if replication_factor is None else replication_factor, settings)
        with AdminClient(self._bootstrap(), **self._client_config) as admin:
            admin.create_topics([new])
        self.created.append(topic)
        return topic

    def cleanup(self, timeout_ms: int = 10_000) -> None:
        """Delete the topics created here; a failure is reported as a warning (the broker may be gone)."""
        if not self.created:
            return
        from spark_kafkalog.client import AdminClient

        topics, self.created = self.created, []
        try:
            with AdminClient(self._bootstrap(), request_timeout_ms=timeout_ms, **self._client_config) as admin:
                admin.delete_topics(topics, timeout_ms=timeout_ms)
        except Exception as e:  # teardown goes on: the broker may have been stopped by the test
            warnings.warn(f"kafkalog: could not delete test topics {topics}: {e}", stacklevel=2)


def produce_records(
    bootstrap_servers: str,
    topic: str,
    records: Iterable[Any],
    *,
    partition: int | None = None,
    client_config: Mapping[str, Any] | None = None,
    **producer_settings: Any,
) -> list[RecordMetadata]:
    """Send ``records`` with kafkalog's ``Producer`` and wait for every acknowledgement; returns their metadata.

    A record is a value (``bytes``/``str``; ``str`` is UTF-8 encoded), a ``(key, value)`` pair, or a mapping
    with ``value`` and optional ``key``, ``partition``, ``headers``, ``timestamp_ms``. Raises the first delivery
    error.
    """
    from spark_kafkalog.client import Producer

    def encode(x: Any) -> Any:
        return x.encode() if isinstance(x, str) else x

    futures = []
    with Producer(bootstrap_servers, **{**dict(client_config or {}), **producer_settings}) as producer:
        for record in records:
            if isinstance(record, Mapping):
                kwargs = {k: v for k, v in record.items() if k not in ("key", "value")}
                kwargs.setdefault("partition", partition)
                futures.append(producer.send(topic, encode(record.get("value")), encode(record.get("key")), **kwargs))
            elif isinstance(record, tuple):
                key, value = record
                futures.append(producer.send(topic, encode(value), encode(key), partition=partition))
            else:
                futures.append(producer.send(topic, encode(record), partition=partition))
        producer.flush()
    return [f.result() for f in futures]


def read_records(
    bootstrap_servers: str,
    topic: str,
    *,
    timeout: float = 10.0,
    min_records: int | None = None,
    client_config: Mapping[str, Any] | None = None,
    isolation_level: str = "read_uncommitted",
) -> list[ConsumerRecord]:
    """Every record of ``topic`` from the start of each partition to its end, sorted by (partition, offset).

    The end is the log end offset (read_committed: the last stable offset) when the call starts; with
    ``min_records`` the call instead reads until at least that many records have arrived. Raises
    ``TimeoutError`` naming what was read when ``timeout`` seconds pass first. Keys and values are bytes.
    """
    from spark_kafkalog.client import Consumer, OffsetSpec, TopicPartition

    deadline = time.monotonic() + timeout
    out: list[ConsumerRecord] = []
    settings = {**dict(client_config or {}), "isolation_level": isolation_level, "enable_auto_commit": False}
    with Consumer(bootstrap_servers, **settings) as consumer:
        info = consumer.client.topic_info(topic, refresh=True)
        tps = [TopicPartition(topic, p) for p in sorted(info.partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(tps)
        ends = consumer.client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})

        def done() -> bool:
            if min_records is not None:
                return len(out) >= min_records
            return all(consumer.position(tp) >= ends[tp] for tp in tps)

        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                want = f"{min_records} records" if min_records is not None else f"the end offsets {ends}"
                raise TimeoutError(f"kafkalog: read {len(out)} records of {topic} in {timeout} s, not {want}")
            out.extend(consumer.poll(timeout_ms=int(min(left, 0.5) * 1000)))
    return sorted(out, key=lambda r: (r.partition, r.offset))
