"""Incremental fetch sessions (KIP-227): the broker's session cache and the context of one Fetch request.

A Fetch request (v7+) carries ``session_id`` and ``session_epoch``; with ``FetchSessionCache.new_context``
they pick one of four contexts, as Kafka's ``FetchManager.newContext`` does:

    session_id  epoch      context
    any         -1         sessionless: a full answer with session id 0; session_id (if not 0) is closed
    any         0          full: a full answer; session_id (if not 0) is closed and a new session is created
                           when the cache has room (``max.incremental.fetch.session.cache.slots``)
    S > 0       n > 0      incremental: session S must exist (else FETCH_SESSION_ID_NOT_FOUND), its epoch must
                           be n (else INVALID_FETCH_SESSION_EPOCH), and it must name topics the same way as
                           the request (ids from v13, names before; else FETCH_SESSION_TOPIC_ID_ERROR). The
                           request's partitions are added or updated, ``forgotten_topics_data`` removed, the
                           whole session is read, and the answer lists only the partitions with records, a
                           changed high watermark, last stable offset or log start offset, an error, a
                           preferred read replica or a diverging epoch. A session left with no partitions is
                           closed and the answer is sessionless.

A new session answers with epoch 1 expected next; each incremental request moves it on by one (after
2^31-1 comes 1). Partitions that returned records move to the end of the session, so every partition
gets its turn at the response size limit.

Eviction (Kafka's ``FetchSessionCacheShard.tryEvict``), when a full request finds the cache full: the least
recently used session goes if it has been idle longer than ``EVICTION_MS``; otherwise the session with the
smallest (privileged, size, id) among the evictable ones goes if the new session's key is not smaller.
A session becomes evictable when touched: by anyone once it is older than ``EVICTION_MS``, by a follower
(privileged) request at once when it is a consumer's. So followers' sessions beat consumers', larger
sessions beat smaller ones, and a young session is safe from consumers.

Topic identity in a session: the topic id when the session uses ids (v13+), the name otherwise. A partition
whose id the broker does not know keeps no name (the handler answers UNKNOWN_TOPIC_ID) and takes one when
the id becomes known.

Figures (``figures``): Kafka's ``kafka.server:type=FetchSessionCache`` metrics NumIncrementalFetchSessions,
NumIncrementalFetchPartitionsCached and IncrementalFetchSessionEvictionsPerSec (a count here).

Concurrency: event-loop only (the broker's handlers); the clock is injected (milliseconds) for tests.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "EVICTION_MS",
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "INVALID_SESSION_ID",
    "CachedPartition",
    "FetchContext",
    "FetchItem",
    "FetchSession",
    "FetchSessionCache",
    "PartitionRequest",
    "SessionFigures",
    "next_epoch",
]

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
EVICTION_MS = 120_000
"""How long a session is safe from eviction after its creation, and how long idle makes it stale (Kafka's
``MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS``)."""
_MAX_INT32 = 0x7FFFFFFF
ZERO_UUID = uuid.UUID(int=0)


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (Kafka's ``FetchMetadata.nextEpoch``): -1 stays -1, 2^31-1 wraps to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_INT32 else epoch + 1


@dataclass(slots=True)
class PartitionRequest:
    """What a fetcher asks of one partition (a Fetch request's ``FetchPartition``)."""

    fetch_offset: int
    partition_max_bytes: int
    log_start_offset: int = -1
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1


class FetchItem(NamedTuple):
    """One partition to read: ``topic`` is None when ``topic_id`` is unknown to the broker."""

    topic: str | None
    topic_id: uuid.UUID
    partition: int
    request: PartitionRequest

    @property
    def fetch_offset(self) -> int:
        return self.request.fetch_offset

    @property
    def partition_max_bytes(self) -> int:
        return self.request.partition_max_bytes

    @property
    def log_start_offset(self) -> int:
        return self.request.log_start_offset

    @property
    def current_leader_epoch(self) -> int:
        return self.request.current_leader_epoch

    @property
    def last_fetched_epoch(self) -> int:
        return self.request.last_fetched_epoch


class PartitionResult(Protocol):
    """The parts of a Fetch response's ``PartitionData`` a session compares."""

    error_code: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    preferred_read_replica: int
    records: Any
    diverging_epoch: Any


def _key(topic: str | None, topic_id: uuid.UUID, partition: int) -> tuple[Any, int]:
    return (topic_id if topic_id != ZERO_UUID else topic, partition)


@dataclass(slots=True, eq=False)
class CachedPartition:
    """A partition of a session: the last request parameters and the figures last sent for it
    (-1: never sent, or sent with an error, so the next answer includes it)."""

    topic: str | None
    topic_id: uuid.UUID
    partition: int
    request: PartitionRequest
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    """The leader's log start offset last sent (the fetcher's own is ``request.log_start_offset``)."""

    @property
    def key(self) -> tuple[Any, int]:
        return _key(self.topic, self.topic_id, self.partition)

    def item(self) -> FetchItem:
        return FetchItem(self.topic, self.topic_id, self.partition, self.request)

    def must_respond(self, result: PartitionResult, *, update: bool) -> bool:
        """Whether an incremental answer must list this partition (Kafka's ``maybeUpdateResponseData``,
        plus the last stable offset); with ``update``, remember what is being sent."""
        respond = bool(result.records is not None and len(result.records) > 0)
        if result.high_watermark != self.high_watermark:
            respond = True
            if update:
                self.high_watermark = result.high_watermark
        if result.last_stable_offset != self.last_stable_offset:
            respond = True
            if update:
                self.last_stable_offset = result.last_stable_offset
        if result.log_start_offset != self.log_start_offset:
            respond = True
            if update:
                self.log_start_offset = result.log_start_offset
        if result.preferred_read_replica >= 0:
            respond = True
        if result.error_code != ErrorCode.NONE:
            respond = True
            if update:
                self.high_watermark = -1  # re-sent once the error is gone
        diverging = result.diverging_epoch
        if diverging is not None and (diverging.epoch >= 0 or diverging.end_offset >= 0):
            respond = True
        return respond


@dataclass(eq=False)
class FetchSession:
    """One incremental fetch session; ``epoch`` is the epoch its next request must carry."""

    id: int
    privileged: bool
    uses_topic_ids: bool
    creation_ms: int
    last_used_ms: int
    epoch: int
    partitions: dict[tuple[Any, int], CachedPartition] = field(default_factory=dict)
    cached_size: int = -1
    """The size the cache last counted (-1: not in the cache)."""
    evictable_by_privileged: bool = False
    evictable_by_all: bool = False

    @property
    def size(self) -> int:
        return len(self.partitions)

    def update(self, items: Iterable[FetchItem], forgotten: Iterable[tuple[str | None, uuid.UUID, int]]) -> None:
        """Add or update the request's partitions, then remove the forgotten ones."""
        for it in items:
            k = _key(it.topic, it.topic_id, it.partition)
            cached = self.partitions.get(k)
            if cached is None:
                self.partitions[k] = CachedPartition(it.topic, it.topic_id, it.partition, it.request)
            else:
                cached.request = it.request
        for topic, topic_id, partition in forgotten:
            self.partitions.pop(_key(topic, topic_id, partition), None)


class SessionFigures(NamedTuple):
    sessions: int
    partitions_cached: int
    evictions: int


class FetchContext:
    """How one Fetch request is read and answered; built by ``FetchSessionCache.new_context``.

    ``kind`` is ``"error"``, ``"sessionless"``, ``"full"`` or ``"incremental"``; ``items`` are the partitions
    to read, in answer order. The handler reads them and calls ``respond`` once with the results (same order),
    or ``throttled`` instead when the answer is emptied by a quota.
    """

    def __init__(
        self,
        cache: FetchSessionCache,
        kind: str,
        items: list[FetchItem],
        *,
        error: int = ErrorCode.NONE,
        session: FetchSession | None = None,
        request_epoch: int = INITIAL_EPOCH,
        privileged: bool = False,
        uses_topic_ids: bool = False,
    ) -> None:
        self.cache = cache
        self.kind = kind
        self.items = items
        self.error = error
        self.session = session
        self._request_epoch = request_epoch
        self._privileged = privileged
        self._uses_topic_ids = uses_topic_ids

    def __repr__(self) -> str:
        sid = self.session.id if self.session is not None else INVALID_SESSION_ID
        return f"FetchContext({self.kind}, session={sid}, partitions={len(self.items)}, error={self.error})"

    def _epoch_moved(self) -> bool:
        """Another request of the session was answered since this one began (Kafka: a duplicate request)."""
        assert self.session is not None
        return self.session.epoch != next_epoch(self._request_epoch)

    def respond(self, results: list[PartitionResult]) -> tuple[int, int, list[int]]:
        """``(error code, session id, indexes of the results to send)`` for ``results`` of ``items``."""
        if self.kind == "error":
            return self.error, INVALID_SESSION_ID, []
        if self.kind == "sessionless":
            return ErrorCode.NONE, INVALID_SESSION_ID, list(range(len(results)))
        if self.kind == "full":
            created = []
            for it, res in zip(self.items, results):
                cp = CachedPartition(it.topic, it.topic_id, it.partition, it.request)
                cp.must_respond(res, update=True)
                created.append(cp)
            sid = self.cache.maybe_create_session(self._privileged, created, self._uses_topic_ids)
            return ErrorCode.NONE, sid, list(range(len(results)))
        session = self.session
        assert session is not None
        if self._epoch_moved():
            return ErrorCode.INVALID_FETCH_SESSION_EPOCH, session.id, []
        keep: list[int] = []
        moved: list[CachedPartition] = []
        for i, (it, res) in enumerate(zip(self.items, results)):
            cached = session.partitions.get(_key(it.topic, it.topic_id, it.partition))
            if cached is None or not cached.must_respond(res, update=True):
                continue
            keep.append(i)
            if res.records is not None and len(res.records) > 0:
                moved.append(cached)
        for served in moved:  # round robin: partitions that were served go last
            del session.partitions[served.key]
            session.partitions[served.key] = served
        return ErrorCode.NONE, session.id, keep

    def throttled(self) -> tuple[int, int]:
        """``(error code, session id)`` of an answer emptied by a quota (the session is left as it was)."""
        if self.kind != "incremental":
            return ErrorCode.NONE, INVALID_SESSION_ID
        assert self.session is not None
        if self._epoch_moved():
            return ErrorCode.INVALID_FETCH_SESSION_EPOCH, self.session.id
        return ErrorCode.NONE, self.session.id


class FetchSessionCache:
    """The fetch sessions of one broker, at most ``max_entries`` of them (0: no sessions at all)."""

    def __init__(
        self,
        max_entries: int,
        *,
        eviction_ms: int = EVICTION_MS,
        clock: Callable[[], int],
        rng: random.Random | None = None,
    ) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.clock = clock
        self._rng = rng or random.Random()
        self.sessions: dict[int, FetchSession] = {}
        self.total_partitions = 0
        self.evictions = 0

    # -- the cache -------------------------------------------------------------------------------
    def get(self, session_id: int) -> FetchSession | None:
        return self.sessions.get(session_id)

    def __len__(self) -> int:
        return len(self.sessions)

    def __iter__(self) -> Iterator[FetchSession]:
        return iter(self.sessions.values())

    def figures(self) -> SessionFigures:
        return SessionFigures(len(self.sessions), self.total_partitions, self.evictions)

    def _new_session_id(self) -> int:
        while True:
            sid = self._rng.randint(1, _MAX_INT32)
            if sid not in self.sessions:
                return sid

    def maybe_create_session(self, privileged: bool, partitions: list[CachedPartition], uses_topic_ids: bool) -> int:
        """Create a session of ``partitions`` when there is room (evicting one if the rules allow): its id,
        else ``INVALID_SESSION_ID``."""
        now = self.clock()
        if self.max_entries <= 0:
            return INVALID_SESSION_ID
        if len(self.sessions) >= self.max_entries and not self._try_evict(privileged, len(partitions), now):
            return INVALID_SESSION_ID
        session = FetchSession(self._new_session_id(), privileged, uses_topic_ids, now, now, next_epoch(INITIAL_EPOCH))
        for cp in partitions:
            session.partitions[cp.key] = cp
        self.sessions[session.id] = session
        self.touch(session, now)
        return session.id

    def _try_evict(self, privileged: bool, size: int, now: int) -> bool:
        if not self.sessions:
            return False
        lru = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now - lru.last_used_ms > self.eviction_ms:  # stale
            self.remove(lru.id)
            self.evictions += 1
            return True
        pool = [s for s in self.sessions.values() if (s.evictable_by_privileged if privileged else s.evictable_by_all)]
        if not pool:
            return False
        victim = min(pool, key=lambda s: (s.privileged, s.cached_size, s.id))
        if (privileged, size, 0) < (victim.privileged, victim.cached_size, victim.id):
            return False
        self.remove(victim.id)
        self.evictions += 1
        return True

    def remove(self, session_id: int) -> FetchSession | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.total_partitions -= session.cached_size
            session.cached_size = -1
        return session

    def touch(self, session: FetchSession, now: int) -> None:
        """Mark ``session`` used at ``now``; recount its size and decide who may evict it."""
        session.last_used_ms = now
        if session.cached_size != -1:
            self.total_partitions -= session.cached_size
        session.cached_size = session.size
        self.total_partitions += session.cached_size
        old = now - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = (not session.privileged) or old
        session.evictable_by_all = old

    # -- a request's context ----------------------------------------------------------------------
    def new_context(
        self,
        version: int,
        session_id: int,
        epoch: int,
        *,
        privileged: bool,
        items: list[FetchItem],
        forgotten: list[tuple[str | None, uuid.UUID, int]],
        topic_name: Callable[[uuid.UUID], str | None],
    ) -> FetchContext:
        """The context of a Fetch request at ``version`` with these session fields, partitions (``items``,
        request order) and ``forgotten_topics_data``; ``topic_name`` resolves ids (for partitions of a session
        that had no name yet)."""
        uses_ids = version >= 13
        if version < 7:
            return FetchContext(self, "sessionless", items)
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):  # a full request closes the session it names
            if session_id != INVALID_SESSION_ID:
                self.remove(session_id)
            if epoch == FINAL_EPOCH:
                return FetchContext(self, "sessionless", items)
            return FetchContext(self, "full", items, privileged=privileged, uses_topic_ids=uses_ids)
        session = self.sessions.get(session_id)
        if session is None:
            return FetchContext(self, "error", [], error=ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext(self, "error", [], error=ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_ids:
            return FetchContext(self, "error", [], error=ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        session.update(items, forgotten)
        if not session.partitions:
            self.remove(session.id)
            return FetchContext(self, "sessionless", items)
        self.touch(session, self.clock())
        session.epoch = next_epoch(session.epoch)
        for cached in list(session.partitions.values()):
            if cached.topic is None and uses_ids:
                cached.topic = topic_name(cached.topic_id)
        read = [cached.item() for cached in session.partitions.values()]
        return FetchContext(self, "incremental", read, session=session, request_epoch=epoch)
