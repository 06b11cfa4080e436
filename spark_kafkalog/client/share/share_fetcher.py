"""``ShareFetcher``: a share consumer's ShareFetch and ShareAcknowledge traffic with the partitions' leaders.

One ``ShareSession`` per leader broker (``session``). A fetch round (``fetch``) first sends a ShareAcknowledge for
acknowledgements of partitions not fetched from the broker that acquired them (the assignment or the leader moved),
then one ShareFetch per leader - all sent before any answer is awaited, so long polls overlap - piggy-backing the
acknowledgements of the partitions it fetches. Each answer's acquired records come back as ``FetchedPartition``s
(decoded by ``fetched.decode_acquired``); its acknowledgement results as ``{tp: error or None}``.

``acknowledge`` sends ShareAcknowledge (commit_sync/commit_async) and ``close`` closes every open session with a
ShareAcknowledge at epoch -1 carrying the last acknowledgements. Acknowledgements always go to the broker whose
session acquired the records (``acquired_from``); where that session is gone, the broker released the records
already, and the acknowledgement fails with SHARE_SESSION_NOT_FOUND without being sent.

Errors: a lost connection or a timeout resets that broker's session (its acknowledgements fail with the error);
partition errors that mean stale metadata (``REFRESH_METADATA_ERRORS``) refresh the topic and the partition is
fetched again from its new leader; TOPIC_/GROUP_AUTHORIZATION_FAILED and the other codes of a fetch that cannot
succeed are returned to be raised (``KafkaClientError`` naming the broker and partition) once every answer of the round
was taken, so no acquired record is dropped.

Threads: the polling thread only (the ``KafkaClient`` is the consumer's own).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import (
    REFRESH_METADATA_ERRORS,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NoCommonVersionError,
    error_for_code,
)
from spark_kafkalog.client.share.acknowledgements import AcknowledgementBatch
from spark_kafkalog.client.share.fetched import CorruptAcquiredData, RecordError, acquired_ranges, decode_acquired
from spark_kafkalog.client.share.requests import share_acknowledge_body, share_fetch_body
from spark_kafkalog.client.share.session import FINAL_EPOCH, SESSION_ERRORS, ShareFetchPlan, ShareSession
from spark_kafkalog.client.types import ConsumerRecord, TopicPartition
from spark_kafkalog.protocol import ApiKey, ErrorCode

__all__ = ["AckResults", "FetchedPartition", "PendingAcknowledge", "ShareFetcher"]

log = logging.getLogger("kafkalog.share_consumer")

AckResults = dict[TopicPartition, KafkaClientError | None]
Acks = Mapping[TopicPartition, Sequence[AcknowledgementBatch]]
_SHARE_FETCH = int(ApiKey.SHARE_FETCH)
_SHARE_ACKNOWLEDGE = int(ApiKey.SHARE_ACKNOWLEDGE)
_RAISED = frozenset({ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED})
_RETRIED = frozenset({ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.GROUP_ID_NOT_FOUND})


@dataclass
class FetchedPartition:
    """The records (and records that failed to deserialize) this member acquired from one partition, and the
    acquired offsets without a record."""

    tp: TopicPartition
    records: list[ConsumerRecord | RecordError]
    gaps: list[int]


@dataclass
class PendingAcknowledge:
    """A ShareAcknowledge sent and not yet answered."""

    node: int
    epoch: int
    acks: dict[TopicPartition, Sequence[AcknowledgementBatch]]
    conn: Any
    request: Any
    topic_ids: dict[str, uuid.UUID] = field(default_factory=dict)


class ShareFetcher:
    """ShareFetch/ShareAcknowledge of member ``member_id`` of ``group_id`` over ``client`` (see the module docstring)."""

    def __init__(self, client: KafkaClient, group_id: str, member_id: str) -> None:
        self.client = client
        self.config: ClientConfig = client.config
        self.group_id = group_id
        self.member_id = member_id
        self.sessions: dict[int, ShareSession] = {}
        self.acquired_from: dict[TopicPartition, int] = {}  # the broker whose session acquired a partition's records
        self._deserialize_key = self.config.key_deserializer_for()
        self._deserialize_value = self.config.value_deserializer_for()

    def session(self, node: int) -> ShareSession:
        session = self.sessions.get(node)
        if session is None or session.closed:
            session = self.sessions[node] = ShareSession(node)
        return session

    def _timeout(self, max_wait_ms: int = 0) -> float:
        return (self.config.request_timeout_ms + max_wait_ms) / 1000.0

    # fetching ------------------------------------------------------------------------------------------
    def fetch(
        self,
        wanted: Mapping[int, set[TopicPartition]],
        acks: Acks,
        topic_ids: Mapping[str, uuid.UUID],
        max_wait_ms: int,
    ) -> tuple[list[FetchedPartition], AckResults, list[KafkaClientError]]:
        """One round: ``wanted`` partitions by leader, ``acks`` to send; returns the acquired records, the
        acknowledgement results and the errors to raise (after the records of every answer were taken: records
        acquired and then dropped would wait for their locks to expire)."""
        results: AckResults = {}
        piggy: dict[int, dict[TopicPartition, Sequence[AcknowledgementBatch]]] = {}
        stray: dict[TopicPartition, Sequence[AcknowledgementBatch]] = {}
        for tp, batches in acks.items():
            node = self.acquired_from.get(tp)
            if node is not None and tp in wanted.get(node, ()) and self.session(node).open:
                piggy.setdefault(node, {})[tp] = batches
            else:
                stray[tp] = batches
        if stray:
            results.update(self.wait(self.acknowledge(stray, topic_ids)))
        sent: list[tuple[int, ShareFetchPlan, Any, Any]] = []
        for node, tps in sorted(wanted.items()):
            plan = self.session(node).fetch_plan(tps, piggy.get(node))
            body = share_fetch_body(
                self.group_id,
                self.member_id,
                plan,
                topic_ids,
                max_wait_ms=max_wait_ms,
                min_bytes=self.config.fetch_min_bytes,
                max_bytes=self.config.fetch_max_bytes,
                max_records=self.config.max_poll_records,
            )
            try:
                conn = self.client.connection(node)
                request = conn.send(_SHARE_FETCH, body, min_version=1, why="share groups need ShareFetch v1")
            except NoCommonVersionError:
                raise  # a broker without share groups: nothing to retry
            except KafkaClientError as e:
                self._lost(node, None, e, plan.acknowledgements, results)
                continue
            sent.append((node, plan, conn, request))
        fetched: list[FetchedPartition] = []
        errors: list[KafkaClientError] = []
        names = {topic_id: name for name, topic_id in topic_ids.items()}
        for node, plan, conn, request in sent:
            try:
                response = conn.wait(request, self._timeout(max_wait_ms))
            except (KafkaConnectionError, KafkaTimeoutError) as e:
                self._lost(node, conn, e, plan.acknowledgements, results)
                continue
            fetched += self._on_fetch(node, plan, response, names, results, errors)
        return fetched, results, errors

    def _on_fetch(
        self,
        node: int,
        plan: ShareFetchPlan,
        response: Any,
        names: Mapping[uuid.UUID, str],
        results: AckResults,
        errors: list[KafkaClientError],
    ) -> list[FetchedPartition]:
        session = self.session(node)
        session.on_fetch_answer(plan, response.error_code)
        if response.error_code != ErrorCode.NONE:
            error = self._top_level_error("ShareFetch", node, response)
            for tp in plan.acknowledgements:
                results[tp] = error
            if response.error_code in _RAISED or not (error.retriable or response.error_code in _RETRIED):
                self.client.name_principal(error)
                errors.append(error)
                return []
            log.debug("share group %s: ShareFetch to broker %d: %s", self.group_id, node, error)
            return []
        out = []
        answered = set()
        for topic in response.responses:
            name = names.get(topic.topic_id)
            if name is None:
                continue
            for p in topic.partitions:
                tp = TopicPartition(name, p.partition_index)
                answered.add(tp)
                if tp in plan.acknowledgements:
                    results[tp] = self._partition_error(
                        "ShareFetch", node, tp, p.acknowledge_error_code, p.acknowledge_error_message
                    )
                if p.error_code != ErrorCode.NONE:
                    self._on_partition_error(node, tp, p.error_code, p.error_message, errors)
                    continue
                ranges = acquired_ranges(p.acquired_records)
                if not ranges:
                    continue
                self.acquired_from[tp] = node
                try:
                    records, gaps = decode_acquired(
                        p.records,
                        tp,
                        ranges,
                        self._deserialize_key,
                        self._deserialize_value,
                        check_crcs=self.config.check_crcs,
                    )
                except CorruptAcquiredData as e:  # the consumer rejects its offsets and raises it
                    errors.append(e)
                    continue
                out.append(FetchedPartition(tp, records, gaps))
        for tp in plan.acknowledgements:
            if tp not in answered:
                results[tp] = None  # a broker answers only partitions with news; no error was reported for it
        return out

    def _on_partition_error(
        self, node: int, tp: TopicPartition, code: int, message: str | None, errors: list[KafkaClientError]
    ) -> None:
        error = self._partition_error("ShareFetch", node, tp, code, message)
        assert error is not None
        if code in REFRESH_METADATA_ERRORS:
            self.client.on_partition_error(tp, code)
            log.debug("share group %s: %s (metadata refreshed)", self.group_id, error)
            return
        if code in _RAISED or not error.retriable:
            self.client.name_principal(error)
            errors.append(error)
            return
        log.debug("share group %s: %s", self.group_id, error)

    # acknowledging -------------------------------------------------------------------------------------
    def acknowledge(
        self, acks: Acks, topic_ids: Mapping[str, uuid.UUID], *, close: bool = False
    ) -> list[PendingAcknowledge | AckResults]:
        """Send ShareAcknowledges for ``acks`` (by the broker that acquired them), without waiting: the pending
        requests (``wait`` for them) and the results known at once. ``close``: at epoch -1 to every broker with an
        open session (with or without acknowledgements), closing the sessions."""
        by_node: dict[int, dict[TopicPartition, Sequence[AcknowledgementBatch]]] = {}
        failed: AckResults = {}
        for tp, batches in acks.items():
            node = self.acquired_from.get(tp)
            if node is None:
                failed[tp] = self._no_session(tp, None)
            else:
                by_node.setdefault(node, {})[tp] = batches
        if close:
            for node, session in self.sessions.items():
                if session.open and not session.closed:
                    by_node.setdefault(node, {})
        out: list[PendingAcknowledge | AckResults] = [failed]
        for node, part in sorted(by_node.items()):
            session = self.session(node)
            epoch = session.close_epoch() if close else session.acknowledge_epoch()
            if epoch is None:
                out.append({tp: self._no_session(tp, node) for tp in part})
                continue
            body = share_acknowledge_body(self.group_id, self.member_id, epoch, part, topic_ids)
            try:
                conn = self.client.connection(node)
                request = conn.send(
                    _SHARE_ACKNOWLEDGE, body, min_version=1, why="share groups need ShareAcknowledge v1"
                )
            except NoCommonVersionError:
                raise
            except KafkaClientError as e:
                results: AckResults = {}
                self._lost(node, None, e, part, results)
                out.append(results)
                continue
            ids = {tp.topic: topic_ids[tp.topic] for tp in part}
            out.append(PendingAcknowledge(node, epoch, part, conn, request, ids))
        return out

    def wait(self, sent: list[PendingAcknowledge | AckResults], timeout_ms: int | None = None) -> AckResults:
        """The results of ``acknowledge``'s requests, waiting for their answers (``timeout_ms`` for all of them,
        default ``request.timeout.ms``; an answer not in time fails its partitions with ``KafkaTimeoutError`` and
        drops the connection, which ends that broker's share session)."""
        results: AckResults = {}
        deadline = time.monotonic() + (self._timeout() if timeout_ms is None else timeout_ms / 1000.0)
        for item in sent:
            if isinstance(item, dict):
                results.update(item)
                continue
            session = self.session(item.node) if item.epoch != FINAL_EPOCH else self.sessions.get(item.node)
            try:
                response = item.conn.wait(item.request, max(deadline - time.monotonic(), 0.001))
            except (KafkaConnectionError, KafkaTimeoutError) as e:
                self._lost(item.node, item.conn, e, item.acks, results)
                continue
            if session is not None:
                session.on_acknowledge_answer(item.epoch, response.error_code)
            if response.error_code != ErrorCode.NONE:
                error = self._top_level_error("ShareAcknowledge", item.node, response)
                results.update(dict.fromkeys(item.acks, error))
                continue
            names = {}
            for topic in response.responses:
                for p in topic.partitions:
                    names[(topic.topic_id, p.partition_index)] = (p.error_code, p.error_message)
            for tp in item.acks:
                code, message = names.get((item.topic_ids.get(tp.topic), tp.partition), (ErrorCode.NONE, None))
                results[tp] = self._partition_error("ShareAcknowledge", item.node, tp, code, message)
        return results

    # errors ----------------------------------------------------------------------------------------------
    def _lost(self, node: int, conn: Any, error: KafkaClientError, acks: Acks, results: AckResults) -> None:
        """The request to ``node`` failed (``error``): the session is reset, its acknowledgements fail."""
        if conn is not None:
            conn.close(error)
        self.session(node).reset()
        for tp in acks:
            results[tp] = error
        log.debug("share group %s: broker %d: %s", self.group_id, node, error)

    def _no_session(self, tp: TopicPartition, node: int | None) -> KafkaClientError:
        where = f"broker {node}" if node is not None else "any broker"
        return KafkaClientError(
            f"acknowledgement of {tp} not sent: no share session with {where} holds its records (the session was "
            "lost, so the broker released them: they are delivered again)",
            error_code=ErrorCode.SHARE_SESSION_NOT_FOUND,
            retriable=False,
            topic=tp.topic,
            partition=tp.partition,
        )

    def _top_level_error(self, what: str, node: int, response: Any) -> KafkaClientError:
        code = response.error_code
        detail = f"share group {self.group_id!r}" + (f": {response.error_message}" if response.error_message else "")
        error = error_for_code(code, what, broker=str(node), detail=detail, resource_name=self.group_id)
        if code in SESSION_ERRORS:
            error.retriable = True
        return error

    def _partition_error(
        self, what: str, node: int, tp: TopicPartition, code: int, message: str | None
    ) -> KafkaClientError | None:
        if code == ErrorCode.NONE:
            return None
        return error_for_code(code, what, broker=str(node), topic=tp.topic, partition=tp.partition, detail=message)
