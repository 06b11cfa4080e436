"""FetchSessionCache and FetchContext: Kafka's KIP-227 rules, driven by a manual clock."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from broker.replication.fetch_session import (
    EVICTION_MS,
    INVALID_SESSION_ID,
    FetchItem,
    FetchSessionCache,
    PartitionRequest,
    next_epoch,
)
from spark_kafkalog.protocol import ErrorCode

TID = uuid.UUID(int=0xA1)
ZERO = uuid.UUID(int=0)


@dataclass
class _Diverging:
    epoch: int = -1
    end_offset: int = -1


@dataclass
class Result:
    """A stand-in for a Fetch response's PartitionData."""

    high_watermark: int = 10
    last_stable_offset: int = 10
    log_start_offset: int = 0
    error_code: int = 0
    preferred_read_replica: int = -1
    records: Any = b""
    diverging_epoch: _Diverging = field(default_factory=_Diverging)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def _item(topic: str | None, partition: int, offset: int = 0, topic_id: uuid.UUID = ZERO) -> FetchItem:
    return FetchItem(topic, topic_id, partition, PartitionRequest(fetch_offset=offset, partition_max_bytes=1024))


def _cache(slots: int = 10) -> tuple[FetchSessionCache, Clock]:
    clock = Clock()
    return FetchSessionCache(slots, clock=clock, rng=random.Random(7)), clock


def _names(_tid: uuid.UUID) -> str | None:
    return None


def _full(cache, items, *, version=12, privileged=False, session_id=0):
    ctx = cache.new_context(version, session_id, 0, privileged=privileged, items=items, forgotten=[], topic_name=_names)
    return ctx, ctx.respond([Result() for _ in ctx.items])


def _incremental(cache, sid, epoch, items=(), forgotten=(), version=12, names=_names):
    return cache.new_context(
        version, sid, epoch, privileged=False, items=list(items), forgotten=list(forgotten), topic_name=names
    )


@pytest.mark.parametrize(
    "epoch, expected",
    [(-1, -1), (0, 1), (1, 2), (41, 42), (0x7FFFFFFF, 1)],
)
def test_next_epoch_follows_kafka(epoch, expected):
    assert next_epoch(epoch) == expected


@pytest.mark.parametrize(
    "version, session_id, epoch, kind, error",
    [
        (6, 0, -1, "sessionless", 0),  # before v7 there are no sessions
        (12, 0, -1, "sessionless", 0),
        (12, 0, 0, "full", 0),
        (12, 12345, 1, "error", ErrorCode.FETCH_SESSION_ID_NOT_FOUND),
        (12, 0, 3, "error", ErrorCode.FETCH_SESSION_ID_NOT_FOUND),  # an incremental request needs a session
    ],
)
def test_context_kind_by_session_fields(version, session_id, epoch, kind, error):
    cache, _ = _cache()
    ctx = cache.new_context(
        version, session_id, epoch, privileged=False, items=[_item("t", 0)], forgotten=[], topic_name=_names
    )
    assert (ctx.kind, ctx.error) == (kind, error)
    code, sid, kept = ctx.respond([Result() for _ in ctx.items])
    assert code == error
    if kind == "full":
        assert sid != INVALID_SESSION_ID and cache.get(sid).epoch == 1
    else:
        assert sid == INVALID_SESSION_ID and len(cache) == 0


def test_full_request_creates_a_session_and_answers_every_partition():
    cache, _ = _cache()
    ctx, (code, sid, kept) = _full(cache, [_item("t", 0), _item("t", 1)])
    assert code == 0 and kept == [0, 1]
    session = cache.get(sid)
    assert session.size == 2 and not session.uses_topic_ids
    assert cache.figures() == (1, 2, 0)


def test_incremental_answer_lists_only_changed_partitions():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0), _item("t", 1), _item("t", 2)])
    ctx = _incremental(cache, sid, 1)
    assert ctx.kind == "incremental" and [i.partition for i in ctx.items] == [0, 1, 2]
    # 0 unchanged, 1 has records, 2 has a new high watermark
    code, sid2, kept = ctx.respond([Result(), Result(records=b"x" * 10), Result(high_watermark=11)])
    assert (code, sid2, kept) == (0, sid, [1, 2])
    # nothing changed now (partition 1 returned records, so it is read last)
    ctx = _incremental(cache, sid, 2)
    assert [i.partition for i in ctx.items] == [0, 2, 1]
    assert ctx.respond([Result(), Result(high_watermark=11), Result()]) == (0, sid, [])


@pytest.mark.parametrize(
    "change",
    [
        {"high_watermark": 11},
        {"last_stable_offset": 9},
        {"log_start_offset": 3},
        {"error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER},
        {"preferred_read_replica": 2},
        {"diverging_epoch": _Diverging(3, 40)},
        {"records": b"r"},
    ],
)
def test_each_change_puts_a_partition_in_the_incremental_answer(change):
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0)])
    assert _incremental(cache, sid, 1).respond([Result(**change)])[2] == [0]


def test_partition_with_an_error_is_sent_again_when_the_error_clears():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0)])
    assert _incremental(cache, sid, 1).respond([Result(error_code=6)])[2] == [0]
    assert _incremental(cache, sid, 2).respond([Result()])[2] == [0]  # same figures, but the error went away
    assert _incremental(cache, sid, 3).respond([Result()])[2] == []


def test_incremental_request_adds_updates_and_forgets_partitions():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0, 5), _item("t", 1, 7)])
    ctx = _incremental(cache, sid, 1, items=[_item("t", 1, 9), _item("u", 0, 0)], forgotten=[("t", ZERO, 0)])
    assert [(i.topic, i.partition, i.request.fetch_offset) for i in ctx.items] == [("t", 1, 9), ("u", 0, 0)]
    assert cache.figures().partitions_cached == 2


def test_forgetting_every_partition_closes_the_session():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0)])
    ctx = _incremental(cache, sid, 1, forgotten=[("t", ZERO, 0)])
    assert ctx.kind == "sessionless" and cache.get(sid) is None
    assert ctx.respond([]) == (0, INVALID_SESSION_ID, [])
    assert cache.figures() == (0, 0, 0)


def test_partitions_that_returned_records_move_to_the_end():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0), _item("t", 1), _item("t", 2)])
    _incremental(cache, sid, 1).respond([Result(records=b"a"), Result(), Result()])
    assert [i.partition for i in _incremental(cache, sid, 2).items] == [1, 2, 0]


@pytest.mark.parametrize(
    "epoch, error",
    [(2, ErrorCode.INVALID_FETCH_SESSION_EPOCH), (7, ErrorCode.INVALID_FETCH_SESSION_EPOCH)],
)
def test_wrong_epoch_is_invalid_fetch_session_epoch(epoch, error):
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0)])
    ctx = _incremental(cache, sid, epoch)
    assert (ctx.kind, ctx.error) == ("error", error)
    assert cache.get(sid).epoch == 1  # the session is untouched


def test_a_duplicate_request_answered_after_another_gets_invalid_epoch():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0)])
    first = _incremental(cache, sid, 1)
    second = _incremental(cache, sid, 2)  # the session moved on before the first answered
    assert first.respond([Result()])[0] == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert second.respond([Result(records=b"a")])[0] == 0


@pytest.mark.parametrize("created_at, asked_at", [(12, 13), (13, 12)])
def test_session_and_request_must_name_topics_the_same_way(created_at, asked_at):
    cache, _ = _cache()
    tid = TID if created_at >= 13 else ZERO
    _, (_, sid, _) = _full(cache, [_item("t", 0, topic_id=tid)], version=created_at)
    ctx = _incremental(cache, sid, 1, version=asked_at)
    assert ctx.error == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR


def test_final_epoch_closes_the_session_and_answers_sessionless():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0)])
    ctx = cache.new_context(12, sid, -1, privileged=False, items=[_item("t", 0)], forgotten=[], topic_name=_names)
    assert ctx.kind == "sessionless" and cache.get(sid) is None


def test_full_request_naming_a_session_replaces_it():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0)])
    _, (_, sid2, _) = _full(cache, [_item("t", 0)], session_id=sid)
    assert cache.get(sid) is None and cache.get(sid2) is not None and len(cache) == 1


def test_topic_ids_unknown_at_first_take_their_name_later():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item(None, 0, topic_id=TID)], version=13)
    ctx = _incremental(cache, sid, 1, version=13, names=lambda tid: "t" if tid == TID else None)
    assert [(i.topic, i.topic_id) for i in ctx.items] == [("t", TID)]


def test_no_slots_means_no_sessions():
    cache, _ = _cache(slots=0)
    assert _full(cache, [_item("t", 0)])[1][1] == INVALID_SESSION_ID


def _fill(cache, clock, n, *, size=1, privileged=False):
    ids = []
    for _ in range(n):
        _, (_, sid, _) = _full(cache, [_item("t", p) for p in range(size)], privileged=privileged)
        ids.append(sid)
        clock.now += 1
    return ids


def test_full_cache_of_young_sessions_refuses_a_consumer():
    cache, clock = _cache(slots=2)
    _fill(cache, clock, 2, size=1)
    assert _full(cache, [_item("t", p) for p in range(5)])[1][1] == INVALID_SESSION_ID
    assert cache.evictions == 0


def test_a_stale_session_is_evicted_first():
    cache, clock = _cache(slots=2)
    old, young = _fill(cache, clock, 2, size=5)
    clock.now += EVICTION_MS - 1
    _incremental(cache, young, 1).respond([Result() for _ in range(5)])  # young is used, old goes stale
    clock.now += 2
    _, (_, sid, _) = _full(cache, [_item("t", 0)])
    assert sid != INVALID_SESSION_ID and cache.get(old) is None and cache.get(young) is not None
    assert cache.evictions == 1


def test_follower_evicts_a_young_consumer_session():
    cache, clock = _cache(slots=1)
    (consumer,) = _fill(cache, clock, 1, size=50)
    _, (_, sid, _) = _full(cache, [_item("t", 0)], privileged=True)
    assert sid != INVALID_SESSION_ID and cache.get(consumer) is None and cache.evictions == 1


def test_consumer_cannot_evict_a_follower_session():
    cache, clock = _cache(slots=1)
    (follower,) = _fill(cache, clock, 1, size=1, privileged=True)
    clock.now += EVICTION_MS + 1
    _incremental(cache, follower, 1).respond([Result()])  # old but recently used: not stale
    assert _full(cache, [_item("t", p) for p in range(9)])[1][1] == INVALID_SESSION_ID


@pytest.mark.parametrize("new_size, evicted", [(3, True), (2, False), (1, False)])
def test_an_old_session_gives_way_only_to_a_larger_session(new_size, evicted):
    cache, clock = _cache(slots=1)
    (old,) = _fill(cache, clock, 1, size=2)
    clock.now += EVICTION_MS + 1
    _incremental(cache, old, 1).respond([Result(), Result()])  # touched: old enough to be evictable by all
    _, (_, sid, _) = _full(cache, [_item("t", p) for p in range(new_size)])
    assert (sid != INVALID_SESSION_ID) is evicted
    assert (cache.get(old) is None) is evicted


def test_throttled_incremental_answer_keeps_the_session():
    cache, _ = _cache()
    _, (_, sid, _) = _full(cache, [_item("t", 0)])
    ctx = _incremental(cache, sid, 1)
    assert ctx.throttled() == (0, sid)
    # nothing was recorded as sent: the next answer includes the new high watermark
    assert _incremental(cache, sid, 2).respond([Result(high_watermark=12)])[2] == [0]


def test_figures_are_served_under_kafka_names():
    from prometheus_client import generate_latest

    from broker.metrics import BrokerMetrics

    cache, clock = _cache(slots=1)
    _fill(cache, clock, 1, size=2)
    _full(cache, [_item("t", 0)], privileged=True)  # evicts the consumer's young session
    metrics = BrokerMetrics()
    metrics.watch_fetch_sessions(cache.figures)
    text = generate_latest(metrics.registry).decode()
    assert "kafka_server_fetchsessioncache_numincrementalfetchsessions 1.0" in text
    assert "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached 1.0" in text
    assert "kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total 1.0" in text
