"""Follower side of replication: one ``ReplicaFetcher`` per source broker copies the leader's batches.

A ``ReplicaFetcher`` is an asyncio task with its own connection (``AsyncKafkaConnection``) to one leader
broker, serving every partition this broker follows from that leader:

1. Truncation (KIP-101/279): a partition that just became follower first sends OffsetForLeaderEpoch for
   the latest epoch in its leader epoch cache; ``truncation_offset`` turns the answer into the divergence
   point, the log is truncated there, and when the leader did not know that epoch the question is asked
   again for the (now smaller) latest epoch. So a returning old leader keeps no record the new leader
   does not have (not merely the records above its high watermark).
2. Fetch: Fetch v4+ (by topic id, v13+, when this broker's metadata knows every topic's id; the id travels
   in ``replica_state`` from v15) with ``replica_id`` = this broker, ``current_leader_epoch`` = the epoch it follows,
   fetch offset = its log end offset (which tells the leader how far it is), waiting up to
   ``replica.fetch.wait.max.ms``, at most ``replica.fetch.max.bytes`` per partition, in one incremental fetch
   session (KIP-227) per leader: after the first, full request each one names only the partitions whose fetch
   state changed and forgets those that stopped (a session error starts a new session). Batches are appended
   unchanged (``PartitionLog.append_as_follower``: offsets and epochs as the leader wrote them, CRC
   checked); a trailing batch cut short by the leader's byte limit is left for the next fetch
   (``whole_batches``); the high watermark becomes min(leader's high watermark, log end offset).

Errors: OFFSET_OUT_OF_RANGE truncates to the leader's high watermark when this log is ahead of it (and
starts over at the leader's log start when behind it); epoch fencing, NOT_LEADER_OR_FOLLOWER and append
errors pause the partition for ``replica.fetch.backoff.ms`` (the controller's next state decides); a lost
connection is re-opened after the same backoff, with the leader's address looked up again.

Connections go to the leader's endpoint for the inter-broker listener with that listener's client security
(TLS, SASL as ``sasl.mechanism.inter.broker.protocol``): ``broker.security.inter_broker.InterBrokerClient``,
built once per ``FetcherManager``.

Concurrency: event-loop only; the ``ReplicaManager`` adds and removes partitions (``FetcherManager``).
"""

from __future__ import annotations

import asyncio
import logging
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from broker.log import LogAppendError
from broker.log.leader_epoch import UNDEFINED_EPOCH
from broker.security.inter_broker import InterBrokerClient
from spark_kafkalog.client.errors import KafkaClientError, KafkaConnectionError
from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from .fetch_session import INITIAL_EPOCH, INVALID_SESSION_ID, next_epoch

if TYPE_CHECKING:
    from broker.metadata.cache import MetadataCache

    from .partition import Partition, TopicPartition

log = logging.getLogger("kafkalog.replication.fetcher")
_NO_ID = uuid.UUID(int=0)

_FETCH = API_BY_KEY[ApiKey.FETCH]
_EPOCHS = API_BY_KEY[ApiKey.OFFSET_FOR_LEADER_EPOCH]
_RESPONSE_MAX_BYTES = 10 * 1024 * 1024
# every entry starts | base_offset int64 | batch_length int32 | and occupies 12 + batch_length bytes
_ENTRY_PREFIX = struct.Struct(">qi")


def whole_batches(records) -> memoryview:
    """The leading whole entries of a fetch response's records.

    A leader answers up to ``replica.fetch.max.bytes`` per partition and stops there, so the last batch
    may be cut short; it is dropped here and fetched whole next time (from the new log end). Lengths are
    not judged here: a negative one is kept, for the append's validation to reject.
    """
    view = memoryview(records)
    end = len(view)
    pos = 0
    while pos < end:
        if end - pos < _ENTRY_PREFIX.size:
            break
        length = _ENTRY_PREFIX.unpack_from(view, pos)[1]
        if length < 0:
            return view
        if pos + _ENTRY_PREFIX.size + length > end:
            break
        pos += _ENTRY_PREFIX.size + length
    return view[:pos]


def truncation_offset(
    requested_epoch: int,
    leader_epoch: int,
    leader_end_offset: int,
    log_end_offset: int,
    high_watermark: int,
    end_offset_for: Callable[[int], tuple[int, int]],
) -> tuple[int, bool]:
    """Where a follower truncates after asking its leader for ``requested_epoch`` (its latest epoch) and
    getting ``(leader_epoch, leader_end_offset)``; ``end_offset_for`` is the follower's own
    ``PartitionLog.end_offset_for_epoch``. Returns ``(offset, final)``: ``final`` False means the leader
    does not know the follower's epoch, so after truncating the follower asks again (Kafka's
    ``AbstractFetcherThread`` rules).

    No epoch on either side (an empty cache, or an epoch the leader cannot place) falls back to the
    follower's high watermark.
    """
    if requested_epoch == UNDEFINED_EPOCH or leader_epoch == UNDEFINED_EPOCH or leader_end_offset < 0:
        return min(high_watermark, log_end_offset), True
    if leader_epoch == requested_epoch:
        return min(leader_end_offset, log_end_offset), True
    own_epoch, own_end = end_offset_for(leader_epoch)
    if own_epoch == leader_epoch:
        return min(leader_end_offset, own_end, log_end_offset), True
    # we never wrote the leader's epoch: drop our epochs above it and ask again for what remains
    if own_epoch == UNDEFINED_EPOCH or own_end < 0:
        return min(high_watermark, log_end_offset), True
    return min(own_end, log_end_offset), False


class _Sent(NamedTuple):
    """A partition's fetch state as sent to the leader's fetch session."""

    topic_id: uuid.UUID
    fetch_offset: int
    log_start_offset: int
    leader_epoch: int


@dataclass
class FetchState:
    part: Partition
    leader_epoch: int
    truncating: bool = True
    delayed_until: float = 0.0


class ReplicaFetcher:
    """Copies every partition this broker follows from broker ``leader_id``."""

    def __init__(
        self,
        broker_id: int,
        leader_id: int,
        metadata: MetadataCache,
        config,
        now_ms,
        inter_broker: InterBrokerClient | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.inter_broker = inter_broker if inter_broker is not None else InterBrokerClient.from_config(config)
        self.leader_id = leader_id
        self.metadata = metadata
        self.wait_ms = config["replica.fetch.wait.max.ms"]
        self.max_bytes = config["replica.fetch.max.bytes"]
        self.backoff_s = config["replica.fetch.backoff.ms"] / 1000
        self.now_ms = now_ms
        self.partitions: dict[TopicPartition, FetchState] = {}
        self._wake = asyncio.Event()
        self._stopping = False
        self._conn: AsyncKafkaConnection | None = None
        self._session_id = INVALID_SESSION_ID
        self._session_epoch = INITIAL_EPOCH
        self._session_by_id = False
        self._sent: dict[TopicPartition, _Sent] = {}
        """What the leader's session holds for this fetcher (the fetch state last sent per partition)."""
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"replica-fetcher-{broker_id}-from-{leader_id}"
        )

    def add(self, part: Partition) -> None:
        self.partitions[part.tp] = FetchState(part, part.leader_epoch)
        self._wake.set()

    def remove(self, tp: TopicPartition) -> None:
        self.partitions.pop(tp, None)

    async def stop(self) -> None:
        """Stop fetching. The run loop also checks a flag: on Python 3.11 ``asyncio.wait_for`` can swallow a
        cancellation that arrives as a request fails, and the fetcher must stop all the same."""
        self._stopping = True
        self._wake.set()
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self._close()

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopping:
            if not self.partitions:
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = await self._connect()
                await self._truncate_all()
                now = loop.time()
                ready = [s for s in self.partitions.values() if not s.truncating and s.delayed_until <= now]
                if not ready:
                    delays = [s.delayed_until for s in self.partitions.values()]
                    await asyncio.sleep(max(min(delays, default=now) - now, 0.005))
                    continue
                await self._fetch(ready)
            except asyncio.CancelledError:
                raise
            except (KafkaClientError, OSError) as e:
                log.info("broker %d: fetching from broker %d failed: %s", self.broker_id, self.leader_id, e)
                await self._close()
                await asyncio.sleep(self.backoff_s)
            except Exception:
                log.exception("broker %d: fetcher for broker %d failed", self.broker_id, self.leader_id)
                await self._close()
                await asyncio.sleep(self.backoff_s)

    async def _connect(self) -> AsyncKafkaConnection:
        info = self.metadata.brokers.get(self.leader_id)
        if info is None:
            raise KafkaConnectionError(f"broker {self.leader_id} is not registered", broker=str(self.leader_id))
        return await self.inter_broker.open(info, client_id=f"broker-{self.broker_id}-fetcher")

    def _current(self, tp: TopicPartition, st: FetchState) -> bool:
        """Is ``st`` still what this fetcher should do for ``tp`` (not removed or replaced meanwhile)?"""
        return self.partitions.get(tp) is st and st.part.leader_id == self.leader_id

    async def _truncate_all(self) -> None:
        """OffsetForLeaderEpoch rounds until no partition due now is left truncating."""
        from .partition import TopicPartition

        Req = _EPOCHS.Request
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            todo = {tp: st for tp, st in self.partitions.items() if st.truncating and st.delayed_until <= now}
            if not todo:
                return
            asked = {tp: st.part.log.latest_epoch for tp, st in todo.items()}
            by_topic: dict[str, list] = {}
            for tp, pending in todo.items():
                by_topic.setdefault(tp.topic, []).append(
                    Req.OffsetForLeaderTopic.OffsetForLeaderPartition(
                        partition=tp.partition, current_leader_epoch=pending.leader_epoch, leader_epoch=asked[tp]
                    )
                )
            request = Req(
                replica_id=self.broker_id,
                topics=[Req.OffsetForLeaderTopic(topic=t, partitions=ps) for t, ps in by_topic.items()],
            )
            assert self._conn is not None
            response = await self._conn.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, request, min_version=2)
            answered = set()
            for t in response.topics:
                for r in t.partitions:
                    tp = TopicPartition(t.topic, r.partition)
                    st = todo.get(tp)
                    if st is None or not self._current(tp, st):
                        continue
                    answered.add(tp)
                    if r.error_code != ErrorCode.NONE:
                        log.info(
                            "%s: OffsetForLeaderEpoch from broker %d: %s",
                            tp,
                            self.leader_id,
                            ErrorCode(r.error_code).name,
                        )
                        st.delayed_until = loop.time() + self.backoff_s
                        continue
                    plog = st.part.log
                    offset, final = truncation_offset(
                        asked[tp],
                        r.leader_epoch,
                        r.end_offset,
                        plog.log_end_offset,
                        plog.high_watermark,
                        plog.end_offset_for_epoch,
                    )
                    if offset < plog.log_end_offset:
                        log.info(
                            "%s: truncating from %d to %d (leader %d: epoch %d ends at %d)",
                            tp,
                            plog.log_end_offset,
                            offset,
                            self.leader_id,
                            r.leader_epoch,
                            r.end_offset,
                        )
                        plog.truncate_to(offset)
                    st.truncating = not final
            for tp, st in todo.items():
                if tp not in answered:
                    st.delayed_until = loop.time() + self.backoff_s

    async def _fetch(self, ready: list[FetchState]) -> None:
        """One Fetch of the ``ready`` partitions, in this fetcher's fetch session (KIP-227): a full request (epoch
        0) when there is none, else an incremental one naming only the partitions whose fetch offset, log start
        or leader epoch changed and forgetting those no longer ready (truncating, backing off, removed), so the
        leader never reads a partition for this broker at an offset it has left."""
        Req = _FETCH.Request
        wanted = {
            st.part.tp: _Sent(self._topic_id(st.part.tp.topic), st.part.log.log_end_offset,
                              st.part.log.log_start_offset, st.leader_epoch)
            for st in ready
        }  # fmt: skip
        by_id = all(w.topic_id != _NO_ID for w in wanted.values())  # v13+ name topics by id: every id known
        full = self._session_epoch == INITIAL_EPOCH or by_id != self._session_by_id
        if full:
            changed, forgotten = wanted, {}
        else:
            changed = {tp: w for tp, w in wanted.items() if self._sent.get(tp) != w}
            forgotten = {tp: w for tp, w in self._sent.items() if tp not in wanted}
        by_topic: dict[str, list] = {}
        for tp, w in changed.items():
            by_topic.setdefault(tp.topic, []).append(
                Req.FetchTopic.FetchPartition(
                    partition=tp.partition,
                    current_leader_epoch=w.leader_epoch,
                    fetch_offset=w.fetch_offset,
                    last_fetched_epoch=-1,
                    log_start_offset=w.log_start_offset,
                    partition_max_bytes=self.max_bytes,
                )
            )
        forgotten_by_topic: dict[str, list[int]] = {}
        for tp in forgotten:
            forgotten_by_topic.setdefault(tp.topic, []).append(tp.partition)
        ids = {tp.topic: w.topic_id for tp, w in (*changed.items(), *forgotten.items())}
        epoch = INITIAL_EPOCH if full else self._session_epoch
        request = Req(
            replica_id=self.broker_id,
            replica_state=Req.ReplicaState(replica_id=self.broker_id),
            max_wait_ms=self.wait_ms,
            min_bytes=1,
            max_bytes=_RESPONSE_MAX_BYTES,
            isolation_level=0,
            session_id=self._session_id,  # a full request also closes the session it names
            session_epoch=epoch,
            topics=[Req.FetchTopic(topic=t, topic_id=ids[t], partitions=ps) for t, ps in by_topic.items()],
            forgotten_topics_data=[
                Req.ForgottenTopic(topic=t, topic_id=ids[t], partitions=ps) for t, ps in forgotten_by_topic.items()
            ],
            rack_id="",
        )
        assert self._conn is not None
        self._session_epoch = INITIAL_EPOCH  # until the answer says otherwise (a failed request starts over)
        response = await self._conn.request(
            ApiKey.FETCH,
            request,
            min_version=4,
            max_version=None if by_id else 12,
            timeout=self.wait_ms / 1000 + 30,
        )
        if response.error_code != ErrorCode.NONE:  # the leader lost or refused the session: start a new one
            log.info("fetch session with broker %d: %s", self.leader_id, ErrorCode(response.error_code).name)
            self._sent = {}
            return
        self._session_id = response.session_id
        if response.session_id != INVALID_SESSION_ID:
            self._session_epoch = next_epoch(epoch)
            self._session_by_id = by_id
            self._sent = wanted
        else:
            self._sent = {}
        names = {w.topic_id: tp.topic for tp, w in wanted.items()}
        sent = {st.part.tp: st for st in ready}
        from .partition import TopicPartition

        for t in response.responses:
            name = names.get(t.topic_id, t.topic) if t.topic_id != _NO_ID else t.topic
            for r in t.partitions:
                tp = TopicPartition(name, r.partition_index)
                state = sent.get(tp)
                if state is not None and self._current(tp, state):
                    self._apply(tp, state, r)

    def _topic_id(self, topic: str) -> uuid.UUID:
        """The topic's id in this broker's metadata (the zero id when unknown)."""
        t = self.metadata.topics.get(topic)
        return t.topic_id if t is not None else _NO_ID

    def _apply(self, tp: TopicPartition, st: FetchState, r) -> None:
        plog = st.part.log
        code = r.error_code
        if code == ErrorCode.NONE:
            records = whole_batches(r.records) if r.records is not None else None
            if records is not None and len(records):
                try:
                    plog.append_as_follower(records)
                except LogAppendError as e:
                    log.warning("%s: appending the leader's batches failed: %s", tp, e)
                    st.delayed_until = asyncio.get_running_loop().time() + self.backoff_s
                    return
            st.part.set_follower_high_watermark(min(r.high_watermark, plog.log_end_offset))
            return
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            if plog.log_end_offset < r.log_start_offset:
                log.info("%s: behind the leader's log start %d; starting over there", tp, r.log_start_offset)
                plog.truncate_fully_and_start_at(r.log_start_offset)
            elif r.high_watermark >= 0 and plog.log_end_offset > r.high_watermark:
                log.warning("%s: ahead of the leader; truncating to its high watermark %d", tp, r.high_watermark)
                plog.truncate_to(r.high_watermark)
            else:
                st.truncating = True
            return
        log.info("%s: fetch from broker %d: %s", tp, self.leader_id, ErrorCode(code).name)
        st.delayed_until = asyncio.get_running_loop().time() + self.backoff_s


class FetcherManager:
    """The fetchers of one broker, one per leader it follows (created on demand, stopped when idle)."""

    def __init__(self, broker_id: int, metadata: MetadataCache, config, now_ms) -> None:
        self.broker_id = broker_id
        self.metadata = metadata
        self.config = config
        self.now_ms = now_ms
        self.inter_broker = InterBrokerClient.from_config(config)
        self.fetchers: dict[int, ReplicaFetcher] = {}
        self._owner: dict[TopicPartition, int] = {}
        self._stopping: set[asyncio.Task] = set()
        self._stopped = False

    def add(self, part: Partition) -> None:
        """Follow ``part`` from its leader (again from the truncation step); ignored once stopped."""
        if self._stopped:
            return
        self.remove(part.tp)
        fetcher = self.fetchers.get(part.leader_id)
        if fetcher is None:
            fetcher = self.fetchers[part.leader_id] = ReplicaFetcher(
                self.broker_id, part.leader_id, self.metadata, self.config, self.now_ms, self.inter_broker
            )
        fetcher.add(part)
        self._owner[part.tp] = part.leader_id

    def remove(self, tp: TopicPartition) -> None:
        leader = self._owner.pop(tp, None)
        if leader is None:
            return
        fetcher = self.fetchers.get(leader)
        if fetcher is None:
            return
        fetcher.remove(tp)
        if not fetcher.partitions:
            del self.fetchers[leader]
            task = asyncio.get_running_loop().create_task(fetcher.stop())
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    async def stop(self) -> None:
        self._stopped = True
        fetchers, self.fetchers = list(self.fetchers.values()), {}
        self._owner.clear()
        await asyncio.gather(*(f.stop() for f in fetchers), *self._stopping, return_exceptions=True)
