"""ShareSessionCache: Kafka's share session epoch rules for ShareFetch and ShareAcknowledge, as tables."""

from __future__ import annotations

import uuid

import pytest

from broker.share.share_session import ShareSessionCache, ShareSessionError, next_epoch
from spark_kafkalog.protocol import ErrorCode

T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)
G, M = "g", "m"


def fetch(cache, epoch, parts=((T1, 0),), forget=(), acks=False, group=G, member=M, connection=None):
    return cache.new_fetch_context(
        group, member, epoch, list(parts), list(forget), has_acknowledgements=acks, connection_id=connection
    )


@pytest.mark.parametrize(
    "epoch,expected",
    [(0, 1), (1, 2), (-1, 1), (41, 42), (0x7FFFFFFF, 1)],
)
def test_next_epoch_wraps_to_one(epoch, expected):
    assert next_epoch(epoch) == expected


# (steps before, the request, the error it gets or None)
FETCH_RULES = [
    ("epoch 0 opens", [], dict(epoch=0), None),
    ("acks at epoch 0 are invalid", [], dict(epoch=0, acks=True), ErrorCode.INVALID_REQUEST),
    ("epoch 1 without session", [], dict(epoch=1), ErrorCode.SHARE_SESSION_NOT_FOUND),
    ("final without session", [], dict(epoch=-1), ErrorCode.SHARE_SESSION_NOT_FOUND),
    ("expected epoch", [dict(epoch=0)], dict(epoch=1), None),
    ("acks at epoch 1", [dict(epoch=0)], dict(epoch=1, acks=True), None),
    ("epoch reused", [dict(epoch=0), dict(epoch=1)], dict(epoch=1), ErrorCode.INVALID_SHARE_SESSION_EPOCH),
    ("epoch skipped", [dict(epoch=0)], dict(epoch=3), ErrorCode.INVALID_SHARE_SESSION_EPOCH),
    ("final closes", [dict(epoch=0)], dict(epoch=-1), None),
    ("reopen replaces", [dict(epoch=0), dict(epoch=1)], dict(epoch=0), None),
    ("after reopen epoch 1 again", [dict(epoch=0), dict(epoch=1), dict(epoch=0)], dict(epoch=1), None),
]


@pytest.mark.parametrize("name,before,request_,error", FETCH_RULES, ids=[r[0] for r in FETCH_RULES])
def test_share_fetch_session_rules(name, before, request_, error):
    cache = ShareSessionCache(10)
    for step in before:
        fetch(cache, **step)
    if error is None:
        fetch(cache, **request_)
    else:
        with pytest.raises(ShareSessionError) as got:
            fetch(cache, **request_)
        assert got.value.code == error


ACK_RULES = [
    ("epoch 0 is invalid for acknowledge", [dict(epoch=0)], 0, ErrorCode.INVALID_SHARE_SESSION_EPOCH),
    ("no session", [], 1, ErrorCode.SHARE_SESSION_NOT_FOUND),
    ("no session final", [], -1, ErrorCode.SHARE_SESSION_NOT_FOUND),
    ("expected epoch", [dict(epoch=0)], 1, None),
    ("wrong epoch", [dict(epoch=0)], 2, ErrorCode.INVALID_SHARE_SESSION_EPOCH),
    ("final", [dict(epoch=0), dict(epoch=1)], -1, None),
]


@pytest.mark.parametrize("name,before,epoch,error", ACK_RULES, ids=[r[0] for r in ACK_RULES])
def test_share_acknowledge_session_rules(name, before, epoch, error):
    cache = ShareSessionCache(10)
    for step in before:
        fetch(cache, **step)
    if error is None:
        cache.acknowledge_epoch(G, M, epoch)
    else:
        with pytest.raises(ShareSessionError) as got:
            cache.acknowledge_epoch(G, M, epoch)
        assert got.value.code == error


def test_fetch_and_acknowledge_share_one_epoch_sequence():
    cache = ShareSessionCache(10)
    fetch(cache, 0)
    cache.acknowledge_epoch(G, M, 1)
    fetch(cache, 2)
    with pytest.raises(ShareSessionError):
        cache.acknowledge_epoch(G, M, 2)
    cache.acknowledge_epoch(G, M, -1)  # the final epoch does not move the expected one
    fetch(cache, 3)


def test_full_cache_answers_share_session_limit_reached_and_reopening_needs_no_slot():
    cache = ShareSessionCache(1)
    fetch(cache, 0, member="a")
    with pytest.raises(ShareSessionError) as got:
        fetch(cache, 0, member="b")
    assert got.value.code == ErrorCode.SHARE_SESSION_LIMIT_REACHED
    fetch(cache, 0, member="a")  # replaces its own session
    assert len(cache) == 1


def test_session_partitions_grow_with_requests_and_shrink_with_forgotten_ones():
    cache = ShareSessionCache(10)
    assert fetch(cache, 0, parts=[(T1, 0)]).partitions == ((T1, 0),)
    assert fetch(cache, 1, parts=[(T2, 1), (T1, 0)]).partitions == ((T1, 0), (T2, 1))
    assert fetch(cache, 2, parts=[], forget=[(T1, 0)]).partitions == ((T2, 1),)
    ctx = fetch(cache, -1, parts=[])
    assert ctx.kind == "final" and ctx.partitions == ()
    assert cache.get(G, M) is not None  # the caller removes it after releasing


def test_sessions_of_a_closed_connection_are_removed():
    cache = ShareSessionCache(10)
    fetch(cache, 0, member="a", connection=7)
    fetch(cache, 0, member="b", connection=8)
    fetch(cache, 1, member="b", connection=7)  # last used over connection 7
    gone = cache.remove_connection(7)
    assert sorted(s.member_id for s in gone) == ["a", "b"]
    assert len(cache) == 0


def test_negative_capacity_is_refused():
    with pytest.raises(ValueError, match="max_sessions"):
        ShareSessionCache(-1)
