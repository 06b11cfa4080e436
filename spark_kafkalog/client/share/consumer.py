"""``ShareConsumer``: a member of a share group (KIP-932), reading records that the group's members share.

Every member of a share group may be assigned every partition; the partition's leader hands each record to one
member at a time (acquired, under a lock of ``group.share.record.lock.duration.ms``), and the member acknowledges it:
ACCEPT (done), RELEASE (delivered again, to any member, with the next ``delivery_count``) or REJECT (never again).
Records not acknowledged before their lock expires, or held by a member that leaves, are delivered again; after
``group.share.delivery.count.limit`` deliveries a record is archived. There are no offsets to commit and no
rebalance callbacks.

    with ShareConsumer("localhost:9092", "workers", acknowledgement_mode="explicit") as consumer:
        consumer.subscribe(["jobs"])
        for record in consumer.poll(1000):
            consumer.acknowledge(record, AcknowledgeType.ACCEPT if handle(record) else AcknowledgeType.RELEASE)
        consumer.commit_sync()

``poll(timeout_ms)`` keeps the membership (a heartbeat thread sends ShareGroupHeartbeat at the coordinator's
interval), sends ShareFetch to the leaders of the assigned partitions - carrying the acknowledgements owed - and
returns up to ``max.poll.records`` records, each with ``delivery_count``. ``acknowledgement_mode``
(``share.acknowledgement.mode``): ``implicit`` (the default) accepts every record of a poll at the next poll,
``commit_sync``/``commit_async`` or ``close``; ``explicit`` sends what ``acknowledge`` marked, and refuses a poll
while a delivered record is unacknowledged. ``commit_sync`` sends the acknowledgements at once (ShareAcknowledge)
and returns each partition's result; ``commit_async`` sends them and reports to its callback from a later poll,
commit or close. ``close`` acknowledges as its mode says, releases the rest, closes the share sessions and leaves.

A record whose key or value does not deserialize is released and its ``SerializationError`` raised from ``poll``
(after the records before it). Settings: the ``Consumer``'s (bootstrap, security, ``client.id``,
``max.poll.records``, ``fetch.max.wait.ms``, deserializers, ...); the classic and consumer-group settings that
mean nothing to a share group (``auto.offset.reset`` - the group config ``share.auto.offset.reset`` decides -,
``enable.auto.commit``, ``group.instance.id``, ``isolation.level``, ``partition.assignment.strategy``,
``group.protocol``, ``group.remote.assignor``, ``session.timeout.ms``, ``heartbeat.interval.ms``) are refused, as
Kafka's share consumer does.

Not thread-safe: one thread polls (the heartbeat thread is the consumer's own).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.membership_manager import known_topic_ids
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import ConfigError, KafkaClientError
from spark_kafkalog.client.share.acknowledgements import AcknowledgementTracker, AcknowledgeType
from spark_kafkalog.client.share.fetched import CorruptAcquiredData, RecordError
from spark_kafkalog.client.share.heartbeat import ShareHeartbeatThread
from spark_kafkalog.client.share.membership import ShareMembership
from spark_kafkalog.client.share.settings import check_share_settings, split_mode
from spark_kafkalog.client.share.share_fetcher import AckResults, PendingAcknowledge, ShareFetcher
from spark_kafkalog.client.types import ConsumerRecord, TopicPartition

__all__ = ["AcknowledgementCommitCallback", "ShareConsumer"]

log = logging.getLogger("kafkalog.share_consumer")

AcknowledgementCommitCallback = Callable[[AckResults], Any]
_WAIT_STEP = 0.05  # seconds between looks at the membership while no partition is assigned


class ShareConsumer:
    """``ShareConsumer(bootstrap_servers, group_id, acknowledgement_mode="implicit", **settings)``; a context
    manager. See the module docstring."""

    def __init__(
        self,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        group_id: str | None = None,
        *,
        acknowledgement_mode: str | None = None,
        config: Mapping[str, Any] | ClientConfig | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(bootstrap_servers, Mapping):
            bootstrap_servers, mode = split_mode(bootstrap_servers, kwargs, acknowledgement_mode)
        else:
            config, mode = split_mode(config, kwargs, acknowledgement_mode)
        if group_id is not None:
            kwargs["group_id"] = group_id
        self.client = KafkaClient(bootstrap_servers, config, **kwargs)
        cfg = self.config = self.client.config
        try:
            group = check_share_settings(cfg)
        except ConfigError:
            self.client.close()
            raise
        self.group_id = group
        self.acknowledgement_mode: str = mode
        self._member = ShareMembership(group, retry_backoff_ms=cfg.retry_backoff_ms, rack_id=cfg.client_rack)
        self._heartbeats: ShareHeartbeatThread | None = None
        self._fetcher = ShareFetcher(self.client, group, self._member.member_id)
        self._tracker = AcknowledgementTracker(explicit=mode == "explicit")
        self._buffer: dict[TopicPartition, deque[ConsumerRecord | RecordError]] = {}
        self._topic_ids: dict[str, uuid.UUID] = {}  # every topic id an assignment named (acknowledgements use them)
        self._async: list[tuple[list[PendingAcknowledge | AckResults], AcknowledgementCommitCallback | None]] = []
        self._ack_callback: AcknowledgementCommitCallback | None = None
        self._next_resolve = 0.0
        self._closed = False

    @property
    def member_id(self) -> str:
        """The member id this consumer made for itself (kept for its life)."""
        return self._member.member_id

    # subscription -------------------------------------------------------------------------------------
    def subscribe(self, topics: str | Iterable[str]) -> None:
        """Join the share group for ``topics`` (names; replaces the previous subscription; an empty list is
        ``unsubscribe``). The coordinator assigns partitions; ``poll`` fetches from them."""
        self._check_open()
        names = [topics] if isinstance(topics, str) else list(topics)
        bad = [t for t in names if not isinstance(t, str) or not t.strip()]
        if bad:
            raise KafkaClientError(f"subscribe() takes topic names; got {bad!r}", retriable=False)
        if not names:
            self.unsubscribe()
            return
        self._member.subscribe(names)
        if self._heartbeats is None:
            self._heartbeats = ShareHeartbeatThread(self.config, self._member)
            self._heartbeats.start()
        self._heartbeats.wake()

    def subscription(self) -> set[str]:
        """The subscribed topic names."""
        return set(self._member.subscription)

    def unsubscribe(self) -> None:
        """Acknowledge what is owed (releasing the records not acknowledged), close the share sessions and leave
        the group."""
        self._check_open()
        self._close_sessions()
        heartbeats, self._heartbeats = self._heartbeats, None
        if heartbeats is not None:
            try:
                heartbeats.leave()
            finally:
                heartbeats.close()

    # acknowledging ------------------------------------------------------------------------------------
    def acknowledge(
        self, record: ConsumerRecord | tuple[str, int, int], type: AcknowledgeType = AcknowledgeType.ACCEPT
    ) -> None:
        """Acknowledge a record the last poll returned (``acknowledgement_mode="explicit"``): the record or
        ``(topic, partition, offset)``; ``type`` ACCEPT, RELEASE or REJECT. Sent with the next poll or commit."""
        self._check_open()
        if isinstance(record, ConsumerRecord):
            tp, offset = TopicPartition(record.topic, record.partition), record.offset
        else:
            try:
                topic, partition, offset = record
                tp = TopicPartition(str(topic), int(partition))
                offset = int(offset)
            except (TypeError, ValueError):
                raise KafkaClientError(
                    f"acknowledge() takes a ConsumerRecord or (topic, partition, offset); got {record!r}",
                    retriable=False,
                ) from None
        self._tracker.acknowledge(tp, offset, type)

    def commit_sync(self, timeout_ms: int | None = None) -> dict[TopicPartition, KafkaClientError | None]:
        """Send the acknowledgements owed now (implicit mode: every record of the last poll, ACCEPTed) and wait up
        to ``timeout_ms`` (default ``request.timeout.ms``) for the brokers' answers: ``{partition: None or the
        error}`` for each partition acknowledged."""
        self._check_open()
        self._finish_async()
        self._tracker.settle_for_commit()
        sent = self._fetcher.acknowledge(self._tracker.take(), self._topic_ids)
        return self._fetcher.wait(sent, timeout_ms)

    def commit_async(self, callback: AcknowledgementCommitCallback | None = None) -> None:
        """Send the acknowledgements owed now without waiting; ``callback(results)`` (as ``commit_sync`` returns
        them) runs from a later ``poll``, ``commit_sync``, ``commit_async`` or ``close``; without a callback,
        failures are logged."""
        self._check_open()
        self._finish_async()
        self._tracker.settle_for_commit()
        acks = self._tracker.take()
        if acks or callback is not None:
            self._async.append((self._fetcher.acknowledge(acks, self._topic_ids), callback))

    def set_acknowledgement_commit_callback(self, callback: AcknowledgementCommitCallback | None) -> None:
        """``callback(results)`` (as ``commit_sync`` returns them) for the acknowledgements sent with ShareFetch
        (the next poll's), by ``close``, and by ``commit_async`` without a callback of its own; called on the polling
        thread (Kafka's ``setAcknowledgementCommitCallback``). None: failures are logged."""
        self._ack_callback = callback

    def _report(self, results: AckResults) -> None:
        """Results of acknowledgements nobody waits for: to the acknowledgement commit callback, else failures
        logged."""
        if self._ack_callback is not None and results:
            self._call(self._ack_callback, results)
        elif self._ack_callback is None:
            _log_failures(self.group_id, results)

    def _call(self, callback: AcknowledgementCommitCallback, results: AckResults) -> None:
        try:
            callback(results)
        except Exception:  # as Java: a failing callback is logged
            log.exception("share group %s: acknowledgement commit callback failed", self.group_id)

    def _finish_async(self) -> None:
        pending, self._async = self._async, []
        for sent, callback in pending:
            results = self._fetcher.wait(sent)
            if callback is None:
                self._report(results)
            else:
                self._call(callback, results)

    # polling ------------------------------------------------------------------------------------------
    def poll(self, timeout_ms: int = 0) -> list[ConsumerRecord]:
        """Up to ``max.poll.records`` records acquired for this member, waiting up to ``timeout_ms`` for the first
        (see the module docstring). Raises the membership's fatal errors, a refused fetch, and in explicit mode
        while a record of the last poll is unacknowledged."""
        self._check_open()
        if not self._member.subscription:
            raise KafkaClientError("poll() needs a subscription: subscribe() to topics first", retriable=False)
        self._finish_async()
        self._tracker.settle_for_poll()
        deadline = time.monotonic() + max(timeout_ms, 0) / 1000.0
        first = True
        while True:
            self._raise_member_error()
            wanted = self._wanted()
            out = self._deliver()
            if out:
                return out
            remaining = deadline - time.monotonic()
            if not wanted:
                if self._tracker.has_pending():
                    self._fetch({}, 0)  # acknowledgements owed for partitions no longer assigned
                if remaining <= 0:
                    return []
                assert self._heartbeats is not None
                self._heartbeats.changed.wait(min(remaining, _WAIT_STEP))
                self._heartbeats.changed.clear()
                continue
            if remaining <= 0 and not first:
                return []
            self._fetch(wanted, max(0, min(self.config.fetch_max_wait_ms, int(remaining * 1000))))
            first = False

    def _raise_member_error(self) -> None:
        error = self._member.take_error()
        if error is not None:
            self.client.name_principal(error)
            raise error

    def _wanted(self) -> dict[int, set[TopicPartition]]:
        """The assigned partitions by leader (topic ids resolved through Metadata first); buffered records of
        partitions no longer assigned are released."""
        ids = self._member.unresolved_topic_ids()
        now = time.monotonic()
        if ids and now >= self._next_resolve:
            try:
                self.client.refresh_metadata(self._member.subscription)
                found = known_topic_ids(self.client.metadata, ids)
                if len(found) < len(ids):
                    self.client.refresh_metadata(None)
                    found = known_topic_ids(self.client.metadata, ids)
            except KafkaClientError as e:
                log.debug("share group %s: Metadata for assigned topic ids failed: %s", self.group_id, e)
                found = {}
            self._member.on_topic_names(found)
            self._next_resolve = 0.0 if len(found) == len(ids) else now + self.config.retry_backoff_ms / 1000.0
        assignment = self._member.assignment()
        assigned = {tp for tp, _ in assignment}
        for tp, topic_id in assignment:
            self._topic_ids[tp.topic] = topic_id
        for tp in [tp for tp in self._buffer if tp not in assigned]:
            self._tracker.release(tp, [item.offset for item in self._buffer.pop(tp)])
        wanted: dict[int, set[TopicPartition]] = {}
        for tp in sorted(assigned):
            try:
                wanted.setdefault(self.client.leader_for(tp), set()).add(tp)
            except KafkaClientError as e:  # no leader now: fetched once one is known
                if not e.retriable:
                    raise
                log.debug("share group %s: no leader for %s: %s", self.group_id, tp, e)
        return wanted

    def _fetch(self, wanted: dict[int, set[TopicPartition]], max_wait_ms: int) -> None:
        fetched, results, errors = self._fetcher.fetch(wanted, self._tracker.take(), self._topic_ids, max_wait_ms)
        self._report(results)
        for part in fetched:
            self._tracker.add_gaps(part.tp, part.gaps)
            if part.records:
                self._buffer.setdefault(part.tp, deque()).extend(part.records)
        for error in errors:
            if isinstance(error, CorruptAcquiredData) and error.topic is not None and error.partition is not None:
                self._tracker.reject(TopicPartition(error.topic, error.partition), error.offsets)
        if errors:
            raise errors[0]

    def _deliver(self) -> list[ConsumerRecord]:
        """Up to ``max.poll.records`` buffered records; a ``RecordError`` is raised when it comes first (the
        record released), else it waits at the head of its partition for the next poll."""
        limit = self.config.max_poll_records
        out: list[ConsumerRecord] = []
        for tp in list(self._buffer):
            queue = self._buffer[tp]
            taken: list[ConsumerRecord] = []
            while queue and len(out) + len(taken) < limit:
                item = queue[0]
                if isinstance(item, RecordError):
                    if out or taken:
                        break
                    queue.popleft()
                    self._tracker.release(tp, [item.offset])
                    if not queue:
                        del self._buffer[tp]
                    raise item.error
                taken.append(item)
                queue.popleft()
            if taken:
                self._tracker.delivered(tp, [r.offset for r in taken])
                out += taken
            if not queue:
                del self._buffer[tp]
            if len(out) >= limit or (queue and isinstance(queue[0], RecordError)):
                break
        return out

    # closing --------------------------------------------------------------------------------------------
    def _close_sessions(self) -> None:
        """Settle every record in flight (implicit: ACCEPT; explicit: what was acknowledged, RELEASE the rest),
        release the buffered ones, and close every open share session with those acknowledgements."""
        self._finish_async()
        self._tracker.settle_for_close()
        for tp, queue in self._buffer.items():
            self._tracker.release(tp, [item.offset for item in queue])
        self._buffer.clear()
        results = self._fetcher.wait(self._fetcher.acknowledge(self._tracker.take(), self._topic_ids, close=True))
        self._report(results)

    def close(self) -> None:
        """Acknowledge as the mode says, release what is left, close the share sessions, leave the group and close
        the connections. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._close_sessions()
            if self._heartbeats is not None:
                self._heartbeats.leave()
        except KafkaClientError as e:
            log.warning("share group %s: closing: %s", self.group_id, e)
        finally:
            if self._heartbeats is not None:
                self._heartbeats.close()
            self.client.close()

    def _check_open(self) -> None:
        if self._closed:
            raise KafkaClientError("the share consumer is closed", retriable=False)

    def __enter__(self) -> ShareConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _log_failures(group_id: str, results: AckResults) -> None:
    for tp, error in sorted(results.items()):
        if error is not None:
            log.warning("share group %s: acknowledgement of %s failed: %s", group_id, tp, error)
