"""``DefaultEventHandler``: the 0.8 producer's serialize-partition-send step, over the project's ``KafkaClient``.

``handle(batch)`` follows 0.8's ``DefaultEventHandler``: encode every message (``serializer.class``,
``key.serializer.class``), then up to ``message.send.max.retries`` + 1 times: pick each message's partition
(``partitioner.class`` over the topic's sorted partitions; a null key takes a random partition that has a
leader), collate the messages by leader broker and partition, and send one Produce request per broker;
messages whose partition failed with a retriable error (or whose broker could not be reached) are retried
after ``retry.backoff.ms`` with that topic's metadata refreshed. A non-retriable error (e.g.
MESSAGE_TOO_LARGE) ends the retries at once. What is still unsent at the end raises
``FailedToSendMessageException`` naming each partition and its last error, except that a failed TLS
handshake or SASL authentication (issue 26) raises its ``KafkaSslError`` / ``KafkaAuthenticationError``
itself, without retries (messages for other brokers of the batch may have been sent). With
``request.required.acks`` 0 the broker does not answer, so only connection failures are seen.

Wire: Produce at ``produce.api.version`` (``latest``: the highest version both sides support, at most v12, the
last that names topics; a fixed
version the broker does not serve raises ``NoCommonVersionError``). Produce v0-1 carry message sets of
magic 0, v2 of magic 1 (CreateTime = now), v3+ one record batch v2 per partition (no producer id: this
producer is not idempotent), compressed with ``compression.codec`` (LZ4 with magic 0 uses Kafka's historical
frame-checksum quirk, see ``records.compression``). Metadata, connections and version negotiation are
``KafkaClient``'s (topics are auto-created by metadata requests when the broker allows it).

Not thread-safe: the producer calls it from one thread at a time.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from typing import Any, NamedTuple

from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import (
    REFRESH_METADATA_ERRORS,
    KafkaAuthenticationError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaSslError,
    KafkaTimeoutError,
    NoCommonVersionError,
    error_for_code,
)
from spark_kafkalog.client.network.versions import ApiVersionTable
from spark_kafkalog.client.producer.sender import PRODUCE_BY_NAME_MAX
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.legacy.plugins import CallbackHandler, Encoder, EventHandler, Partitioner, load_plugin
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records import LegacyMessageSetBuilder, RecordBatchBuilder

__all__ = ["DefaultEventHandler", "FailedToSendMessageException", "message_format_of"]

_PRODUCE = int(ApiKey.PRODUCE)
_FETCH = int(ApiKey.FETCH)
_Req = API_BY_KEY[_PRODUCE].Request


class FailedToSendMessageException(KafkaClientError):
    """Messages still unsent after ``message.send.max.retries`` (or at a non-retriable error);
    ``failures`` maps each ``TopicPartition`` (partition -1: not yet placed) to its last error."""

    def __init__(self, message: str, failures: dict[TopicPartition, KafkaClientError]) -> None:
        super().__init__(message, retriable=False)
        self.failures = failures


class _Message(NamedTuple):
    topic: str
    part_key: Any  # the key as given, for the partitioner
    key: bytes | None
    value: bytes | None


def message_format_of(produce_version: int) -> int:
    """The message format (magic) a Produce request of this version carries: v0-1 0, v2 1, v3+ 2."""
    return 0 if produce_version <= 1 else 1 if produce_version == 2 else 2


def encode_message_set(produce_version: int, compression: int, messages: Iterable[tuple[bytes | None, bytes | None]]):
    """The records field of one partition in a Produce request of ``produce_version``."""
    magic = message_format_of(produce_version)
    now = int(time.time() * 1000)
    builder: Any = RecordBatchBuilder(compression) if magic == 2 else LegacyMessageSetBuilder(magic, compression)
    for key, value in messages:
        builder.append(now, key, value)
    return builder.build()


class DefaultEventHandler(EventHandler):
    """Serializes, partitions and sends batches of ``ProducerData`` (see the module docstring)."""

    def __init__(self) -> None:
        self.client: KafkaClient | None = None
        #: base offset assigned to the last messages sent to each partition (acks 1 or -1)
        self.last_base_offsets: dict[TopicPartition, int] = {}
        self.requests_sent = 0

    def init(self, config: Any, callback_handler: CallbackHandler) -> None:
        self.config = config
        self.callbacks = callback_handler
        self.encoder = _init(load_plugin("serializer.class", config.serializer_class, Encoder), config)
        self.key_encoder = _init(load_plugin("key.serializer.class", config.key_serializer_class, Encoder), config)
        self.partitioner = _init(load_plugin("partitioner.class", config.partitioner_class, Partitioner), config)
        self.client = KafkaClient(config.client_config(), _producer=True)  # with the security settings

    # the pipeline ------------------------------------------------------------------------------
    def serialize(self, batch: Iterable[Any]) -> list[_Message]:
        """Every message of ``batch`` encoded (an encoder's error propagates)."""
        out = []
        for data in batch:
            key = None if data.key is None else self.key_encoder.to_message(data.key)
            for value in data.messages:
                out.append(_Message(data.topic, data.key, key, self.encoder.to_message(value)))
        return out

    def handle(self, batch: list[Any]) -> None:
        if self.client is None:
            raise RuntimeError("DefaultEventHandler.init was not called")
        outstanding = self.serialize(batch)
        attempts = self.config.message_send_max_retries + 1
        failures: dict[TopicPartition, KafkaClientError] = {}
        for attempt in range(1, attempts + 1):
            outstanding, failures, fatal = self._dispatch(outstanding)
            if not outstanding:
                return
            for error in failures.values():
                if isinstance(error, (KafkaAuthenticationError, KafkaSslError)):
                    raise error
            if fatal or attempt == attempts:
                break
            time.sleep(self.config.retry_backoff_ms / 1000.0)
            for topic in {m.topic for m in outstanding}:
                self.client.metadata.invalidate(topic)
        detail = "; ".join(
            f"{tp.topic}{'' if tp.partition < 0 else f'-{tp.partition}'}: {err}" for tp, err in sorted(failures.items())
        )
        raise FailedToSendMessageException(
            f"failed to send {len(outstanding)} messages after {attempt} attempts "
            f"(message.send.max.retries={self.config.message_send_max_retries}): {detail}",
            failures,
        )

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    # one attempt ----------------------------------------------------------------------------------
    def _dispatch(
        self, messages: list[_Message]
    ) -> tuple[list[_Message], dict[TopicPartition, KafkaClientError], bool]:
        """Send ``messages`` once; returns (the failed ones, error per partition, whether one was fatal)."""
        failed: list[_Message] = []
        failures: dict[TopicPartition, KafkaClientError] = {}
        fatal = False
        by_leader: dict[int, dict[TopicPartition, list[_Message]]] = {}
        by_topic: dict[str, list[_Message]] = {}
        for m in messages:
            by_topic.setdefault(m.topic, []).append(m)
        for topic, msgs in by_topic.items():
            try:
                placed = self._partition(topic, msgs)
            except KafkaClientError as e:
                failed += msgs
                failures[TopicPartition(topic, -1)] = e
                fatal = fatal or not e.retriable
                continue
            for tp, (leader, part_msgs) in placed.items():
                if leader < 0:
                    failed += part_msgs
                    failures[tp] = error_for_code(
                        ErrorCode.LEADER_NOT_AVAILABLE, "Produce", topic=tp.topic, partition=tp.partition
                    )
                    continue
                by_leader.setdefault(leader, {})[tp] = part_msgs
        if by_leader:
            self.callbacks.after_serialization(
                {
                    (tp.topic, tp.partition): [(m.key, m.value) for m in msgs]
                    for parts in by_leader.values()
                    for tp, msgs in parts.items()
                }
            )
        for leader, parts in by_leader.items():
            for tp, error in self._send_to(leader, parts).items():
                failed += parts[tp]
                failures[tp] = error
                fatal = fatal or not error.retriable
        return failed, failures, fatal

    def _partition(self, topic: str, messages: list[_Message]) -> dict[TopicPartition, tuple[int, list[_Message]]]:
        """``{tp: (leader, messages)}``; the partitioner indexes the topic's sorted partition ids."""
        assert self.client is not None
        info = self.client.topic_info(topic)
        ids = sorted(info.partitions)
        available = [p for p in ids if info.partitions[p].leader >= 0] or ids
        out: dict[TopicPartition, tuple[int, list[_Message]]] = {}
        for m in messages:
            if m.part_key is None:
                pid = random.choice(available)
            else:
                index = self.partitioner.partition(m.part_key, len(ids))
                if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(ids):
                    raise KafkaClientError(
                        f"partitioner {type(self.partitioner).__name__} returned {index!r} for key {m.part_key!r} "
                        f"of topic {topic}, which has {len(ids)} partitions",
                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        retriable=False,
                        topic=topic,
                    )
                pid = ids[index]
            tp = TopicPartition(topic, pid)
            entry = out.get(tp)
            if entry is None:
                entry = out[tp] = (info.partitions[pid].leader, [])
            entry[1].append(m)
        return out

    def _send_to(
        self, leader: int, parts: dict[TopicPartition, list[_Message]]
    ) -> dict[TopicPartition, KafkaClientError]:
        """One Produce request to broker ``leader``; returns the error of each partition that failed."""
        assert self.client is not None
        cfg = self.config
        fixed = cfg.produce_api_version
        # latest: the newest Produce that still names topics (v13+ name them by id, KIP-516)
        lo, hi = (0, PRODUCE_BY_NAME_MAX) if fixed is None else (fixed, fixed)
        acks = cfg.request_required_acks

        def body(version: int) -> Any:
            by_topic: dict[str, list[Any]] = {}
            for tp, msgs in parts.items():
                records = encode_message_set(version, cfg.compression_codec, ((m.key, m.value) for m in msgs))
                by_topic.setdefault(tp.topic, []).append(
                    _Req.TopicProduceData.PartitionProduceData(index=tp.partition, records=records)
                )
            return _Req(
                transactional_id=None,
                acks=acks,
                timeout_ms=cfg.request_timeout_ms,
                topic_data=[_Req.TopicProduceData(name=t, partition_data=p) for t, p in by_topic.items()],
            )

        try:
            if fixed is not None and fixed <= 2:
                refused = _refuses_old_produce(self.client.connection(leader).versions, leader, fixed)
                if refused is not None:
                    return {tp: refused for tp in parts}
            self.requests_sent += 1
            if acks == 0:
                conn = self.client.connection(leader)
                version = conn.versions.pick(_PRODUCE, lo, hi, why="produce.api.version")
                conn.send(_PRODUCE, body(version), version=version, expect_response=False)
                return {}
            version, response = self.client.send_request(
                _PRODUCE, body, node_id=leader, min_version=lo, max_version=hi, timeout_ms=cfg.request_timeout_ms + 5000
            )
        except (KafkaConnectionError, KafkaTimeoutError) as e:
            for tp in parts:
                self.client.metadata.invalidate(tp.topic)
            return {tp: e for tp in parts}
        errors: dict[TopicPartition, KafkaClientError] = {}
        answered = set()
        for topic in response.responses:
            for p in topic.partition_responses:
                tp = TopicPartition(topic.name, p.index)
                answered.add(tp)
                if p.error_code == ErrorCode.NONE:
                    self.last_base_offsets[tp] = p.base_offset
                    continue
                error = error_for_code(
                    p.error_code, "Produce", broker=str(leader), topic=tp.topic, partition=tp.partition
                )
                if p.error_code in REFRESH_METADATA_ERRORS:
                    error.retriable = True
                    self.client.metadata.invalidate(tp.topic)
                errors[tp] = error
        for tp in parts:
            if tp not in answered:
                errors[tp] = KafkaClientError(f"Produce response of broker {leader} omits {tp}", retriable=True)
        return errors


def _refuses_old_produce(versions: ApiVersionTable, leader: int, version: int) -> NoCommonVersionError | None:
    """Kafka 4.0+ (KIP-896) still lists Produce v0-2 in ApiVersions (for old librdkafka builds) but closes the
    connection on such a request; it is recognised by the Fetch versions it dropped in the same change (v0-3)."""
    fetch = versions.broker_ranges.get(_FETCH)
    if fetch is None or fetch.lo < 4:
        return None
    return NoCommonVersionError(
        f"broker {leader} refuses Produce v{version}: it serves Fetch v{fetch.lo}+ only, as Kafka 4.0+ does "
        f"(KIP-896), and such a broker lists Produce v0-2 but closes the connection on them; set "
        f"produce.api.version to 3 or later (or latest)",
        broker=str(leader),
    )


def _init(plugin: Any, config: Any) -> Any:
    init = getattr(plugin, "init", None)
    if callable(init):
        init(config)
    return plugin
