"""Where the registry's records live: the ``SchemaStore`` protocol, an in-memory log for tests, and the
``_schemas`` topic (``KafkaSchemaStore``).

A store owns one ``RegistryState`` and applies every record of its log to it in log order. ``append``
writes one record and returns once that record has been applied (read-your-writes), so after it the
state shows what the log decided (a conflicting record may have been ignored: the caller checks).
``sync`` returns once every record written before the call is applied (catching up to the log end).

Concurrency: stores run on one asyncio event loop; the registry serializes its writes (one at a time).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from broker.schema_registry.records import Key, Value, encode_key, encode_value
from broker.schema_registry.state import RegistryState

log = logging.getLogger(__name__)


class StoreError(Exception):
    """The store cannot read or write its log (the registry answers 50001)."""


class StoreTimeoutError(StoreError):
    """A write or catch-up did not complete in time (the registry answers 50002)."""


class SchemaStore(Protocol):
    """The log behind a registry (see the module docstring)."""

    @property
    def state(self) -> RegistryState: ...

    async def start(self) -> None:
        """Open the log and apply everything in it."""

    async def stop(self) -> None:
        """Close the log; idempotent."""

    async def sync(self) -> None:
        """Return once every record written before the call has been applied."""

    async def append(self, key: Key, value: Value | None) -> int:
        """Append one record (None: a tombstone); return its offset once it has been applied."""


@dataclass
class MemoryLog:
    """A log several ``MemorySchemaStore`` instances share (as registries share one topic).

    ``inject_before_next`` lets a test put records in ahead of the next append, as another registry racing
    for the same id or version would."""

    records: list[tuple[bytes, bytes | None]] = field(default_factory=list)
    inject_before_next: list[tuple[bytes, bytes | None]] = field(default_factory=list)

    def append(self, key: bytes, value: bytes | None) -> int:
        if self.inject_before_next:
            self.records.extend(self.inject_before_next)
            self.inject_before_next.clear()
        self.records.append((key, value))
        return len(self.records) - 1


class MemorySchemaStore:
    """A ``SchemaStore`` over a ``MemoryLog`` (a new private one by default): for tests and tools. Its
    ``state`` catches up with the shared log whenever it is read (a tail reader with no lag)."""

    def __init__(self, log: MemoryLog | None = None) -> None:
        self.log = log if log is not None else MemoryLog()
        self._state = RegistryState()
        self._position = 0

    @property
    def state(self) -> RegistryState:
        self._catch_up()
        return self._state

    def _catch_up(self) -> None:
        while self._position < len(self.log.records):
            key, value = self.log.records[self._position]
            self._state.apply_bytes(key, value)
            self._position += 1

    async def start(self) -> None:
        self._catch_up()

    async def stop(self) -> None:
        return None

    async def sync(self) -> None:
        self._catch_up()

    async def append(self, key: Key, value: Value | None) -> int:
        offset = self.log.append(encode_key(key), encode_value(value))
        self._catch_up()
        return offset


class KafkaSchemaStore:
    """A ``SchemaStore`` over a compacted single-partition topic (``_schemas``), through the asyncio client.

    ``start``: when the topic exists (another registry or an earlier run made it), check it (1 partition; one
    not compacted is warned about, more partitions refused with ``StoreError``), open an idempotent ``acks=all``
    producer and an unassigned-group consumer on partition 0 from the beginning, read up to the end offset and
    start a tail task that applies every record in order. When it does not exist yet, ``start`` returns with an
    empty state and a watch task opens the topic as soon as another registry creates it; the first ``append``
    creates it (1 partition, ``cleanup.policy=compact``, replication factor ``replication_factor`` capped at the
    brokers alive then, as Confluent's registry caps it; TOPIC_ALREADY_EXISTS is fine). Creating it at the first
    write rather than at start lets the brokers of a cluster that start together all count. ``append``
    produces one record and waits until the tail task has applied its offset; ``sync`` waits until it has
    applied everything below the end offset read at the call. Both give up after ``timeout_s`` with
    ``StoreTimeoutError``. ``client_settings`` are the client's settings (security protocol, SASL and TLS,
    client id).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        client_settings: Mapping[str, Any],
        *,
        topic: str = "_schemas",
        replication_factor: int = 3,
        timeout_s: float = 60.0,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self._settings = dict(client_settings)
        self.topic = topic
        self.replication_factor = replication_factor
        self.timeout_s = timeout_s
        self._state = RegistryState()
        self._next_offset = 0  # the offset of the next record the tail task applies
        self._progress: asyncio.Condition | None = None
        self._producer: Any = None
        self._consumer: Any = None
        self._tail: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._opening = asyncio.Lock()
        self._failure: BaseException | None = None
        self._stopped = False

    def __repr__(self) -> str:
        return f"KafkaSchemaStore({self.bootstrap_servers!r}, topic={self.topic!r})"

    @property
    def state(self) -> RegistryState:
        return self._state

    @property
    def applied_offset(self) -> int:
        """The offset of the next record to apply (everything below it is in ``state``)."""
        return self._next_offset

    WATCH_INTERVAL_S = 1.0
    """How often a registry started before its topic exists looks for it."""

    async def start(self) -> None:
        self._progress = asyncio.Condition()
        self._opening = asyncio.Lock()
        try:
            exists = await asyncio.wait_for(self._topic_exists(check=True), self.timeout_s)
            if exists:
                await self._open()
            else:
                log.info("schema registry: topic %s does not exist yet: created by the first write", self.topic)
                self._watch = asyncio.create_task(self._watch_for_topic(), name=f"schema-registry-watch-{self.topic}")
        except (StoreError, asyncio.CancelledError):
            await self.stop()
            raise
        except TimeoutError:
            await self.stop()
            raise StoreTimeoutError(
                f"opening the schemas topic {self.topic!r} took over {self.timeout_s:g} s"
            ) from None
        except Exception as e:
            await self.stop()
            raise StoreError(f"opening the schemas topic {self.topic!r} at {self.bootstrap_servers}: {e}") from e

    @property
    def opened(self) -> bool:
        """Whether the topic exists and is being read."""
        return self._consumer is not None

    async def _open(self) -> None:
        """Open the producer and the tailing consumer and catch up (once; concurrent callers wait for it)."""
        from spark_kafkalog.client.aio import AIOConsumer, AIOProducer
        from spark_kafkalog.client.types import TopicPartition

        async with self._opening:
            if self._consumer is not None or self._stopped:
                return
            producer = AIOProducer(
                self.bootstrap_servers, config=self._settings, acks="all", enable_idempotence=True, linger_ms=0
            )
            await producer.start()
            self._producer = producer
            consumer = AIOConsumer(
                bootstrap_servers=self.bootstrap_servers,
                config=self._settings,
                enable_auto_commit=False,
                auto_offset_reset="earliest",  # records deleted under us: read on from the log start
            )
            await consumer.start()
            tp = TopicPartition(self.topic, 0)
            consumer.assign([tp])
            await consumer.seek_to_beginning([tp])
            self._consumer = consumer
            self._tail = asyncio.create_task(self._read_forever(), name=f"schema-registry-tail-{self.topic}")
        await self.sync()

    async def _open_created(self) -> None:
        """Create the topic if it is still missing, then open it (the first write's path)."""
        try:
            await asyncio.wait_for(self._create_topic(), self.timeout_s)
            await self._open()
        except (StoreError, asyncio.CancelledError):
            raise
        except TimeoutError:
            raise StoreTimeoutError(
                f"creating the schemas topic {self.topic!r} took over {self.timeout_s:g} s"
            ) from None
        except Exception as e:
            raise StoreError(f"creating the schemas topic {self.topic!r} at {self.bootstrap_servers}: {e}") from e

    async def _watch_for_topic(self) -> None:
        while not self._stopped and self._consumer is None:
            await asyncio.sleep(self.WATCH_INTERVAL_S)
            try:
                if await self._topic_exists(check=True):
                    await self._open()
                    log.info("schema registry: topic %s appeared; reading it", self.topic)
                    return
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the cluster away for a moment: look again
                log.warning("schema registry: looking for topic %s failed (%s); retrying", self.topic, e)

    async def _topic_exists(self, *, check: bool = False) -> bool:
        from spark_kafkalog.client.aio import AIOAdminClient

        admin = AIOAdminClient(self.bootstrap_servers, config=self._settings)
        try:
            await admin.start()
            if self.topic not in await admin.list_topics(include_internal=True):
                return False
            if check:
                await self._check_topic(admin)
            return True
        finally:
            await admin.close()

    async def _create_topic(self) -> None:
        from spark_kafkalog.client.admin.admin_errors import AdminOperationError
        from spark_kafkalog.client.aio import AIOAdminClient
        from spark_kafkalog.client.types import NewTopic

        admin = AIOAdminClient(self.bootstrap_servers, config=self._settings)
        try:
            await admin.start()
            if self.topic in await admin.list_topics(include_internal=True):
                return
            brokers = len((await admin.describe_cluster())["brokers"]) or 1
            rf = max(1, min(self.replication_factor, brokers))
            new = NewTopic(self.topic, 1, rf, {"cleanup.policy": "compact"})
            try:
                await admin.create_topics([new])
            except AdminOperationError as e:
                if any(err.error_code != _TOPIC_ALREADY_EXISTS for err in e.errors.values()):
                    raise StoreError(f"cannot create the schemas topic {self.topic!r}: {e}") from None
            if rf < self.replication_factor:
                log.warning(
                    "schema registry: created topic %s with replication factor %d, fewer than the %d wanted "
                    "(only %d brokers alive): add brokers and reassign it for production",
                    self.topic,
                    rf,
                    self.replication_factor,
                    brokers,
                )
            else:
                log.info("schema registry: created topic %s (1 partition, replication factor %d)", self.topic, rf)
        finally:
            await admin.close()

    async def _check_topic(self, admin: Any) -> None:
        """An existing topic must have one partition (the log's order is the registry's); a topic that is
        not compacted works but grows (and loses schemas to retention): warned."""
        partitions = (await admin.describe_topics([self.topic]))[self.topic].num_partitions
        if partitions != 1:
            raise StoreError(
                f"the schemas topic {self.topic!r} has {partitions} partitions; the registry needs exactly 1"
            )
        policy = (await admin.describe_configs(self.topic, keys=["cleanup.policy"])).get("cleanup.policy") or ""
        if "compact" not in policy:
            log.warning(
                "schema registry: topic %s has cleanup.policy=%s, not compact: schemas may be lost to retention",
                self.topic,
                policy,
            )

    async def _read_forever(self) -> None:
        assert self._progress is not None
        consumer = self._consumer
        backoff = 0.05
        while not self._stopped:
            try:
                records = await consumer.poll(timeout_ms=200, max_records=500)
                backoff = 0.05
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a lost connection: the client reconnects on the next poll
                log.warning("schema registry: reading %s failed (%s); retrying", self.topic, e)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            if not records:
                continue
            for record in records:
                if record.offset < self._next_offset:
                    continue
                self._state.apply_bytes(_as_bytes(record.key), _as_bytes(record.value))
                self._next_offset = record.offset + 1
            async with self._progress:
                self._progress.notify_all()

    async def _wait_applied(self, offset: int, what: str) -> None:
        """Wait until every record below ``offset`` is applied."""
        assert self._progress is not None
        progress = self._progress
        try:
            async with progress:
                await asyncio.wait_for(progress.wait_for(lambda: self._next_offset >= offset), self.timeout_s)
        except TimeoutError:
            raise StoreTimeoutError(
                f"{what}: the registry read {self.topic} up to offset {self._next_offset}, "
                f"not {offset}, within {self.timeout_s:g} s"
            ) from None

    async def _end_offset(self) -> int:
        from spark_kafkalog.client.types import OffsetSpec, TopicPartition

        tp = TopicPartition(self.topic, 0)
        return int((await self._consumer.client.list_offsets({tp: OffsetSpec.LATEST}))[tp])

    async def sync(self) -> None:
        if self._progress is None or self._stopped:
            raise StoreError("the schemas store is not started")
        if self._consumer is None:
            if not await self._topic_exists():
                return  # nothing written yet, by anyone
            await self._open()
            return
        try:
            end = await asyncio.wait_for(self._end_offset(), self.timeout_s)
        except TimeoutError:
            raise StoreTimeoutError(f"reading the end offset of {self.topic} took over {self.timeout_s:g} s") from None
        except (StoreError, asyncio.CancelledError):
            raise
        except Exception as e:
            raise StoreError(f"reading the end offset of {self.topic}: {e}") from None
        await self._wait_applied(end, "catching up")

    async def append(self, key: Key, value: Value | None) -> int:
        if self._progress is None or self._stopped:
            raise StoreError("the schemas store is not started")
        if self._producer is None:
            await self._open_created()
        if self._producer is None:
            raise StoreError("the schemas store is stopping")
        try:
            metadata = await asyncio.wait_for(
                self._producer.send_and_wait(self.topic, encode_value(value), key=encode_key(key), partition=0),
                self.timeout_s,
            )
        except TimeoutError:
            raise StoreTimeoutError(f"writing to {self.topic} took over {self.timeout_s:g} s") from None
        except asyncio.CancelledError:
            raise
        except Exception as e:
            raise StoreError(f"writing to {self.topic}: {e}") from None
        await self._wait_applied(metadata.offset + 1, "reading back a write")
        return int(metadata.offset)

    async def stop(self) -> None:
        """Stop the tail task and close the clients; idempotent."""
        self._stopped = True
        for task in (self._watch, self._tail):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._watch = self._tail = None
        producer, self._producer = self._producer, None
        consumer, self._consumer = self._consumer, None
        for client in (producer, consumer):
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.close()


_TOPIC_ALREADY_EXISTS = 36


def _as_bytes(data: object) -> bytes | None:
    if data is None or isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"a _schemas record holds {type(data).__name__}, not bytes")


__all__ = [
    "KafkaSchemaStore",
    "MemoryLog",
    "MemorySchemaStore",
    "SchemaStore",
    "StoreError",
    "StoreTimeoutError",
]
