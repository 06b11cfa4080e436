"""Which committed offsets expire (Kafka's KIP-211 rules), as pure code over groups in each state."""

from __future__ import annotations

from broker.coordinator.group import Group, GroupState, JoinRequest
from broker.coordinator.group_coordinator import _expired_offsets
from broker.coordinator.offset_store import CommittedOffset
from spark_kafkalog.client.consumer.consumer_protocol import Subscription, encode_subscription

RETENTION = 7 * 24 * 3600 * 1000
T0 = 1_700_000_000_000


def consumer_group(topics=("a",), metadata: bytes | None = None, now: int = T0) -> Group:
    """A Stable consumer group of one member subscribed to ``topics``."""
    g = Group("g")
    meta = encode_subscription(Subscription(topics)) if metadata is None else metadata
    request = JoinRequest(
        member_id="",
        group_instance_id=None,
        client_id="c",
        client_host="/127.0.0.1",
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        protocol_type="consumer",
        protocols=[("range", meta)],
        require_known_member_id=False,
    )
    member, _ = g.join(request, now=now)
    g.complete_join(now)
    g.sync(member_id=member, group_instance_id=None, generation=1, assignments={member: b""}, now=now)
    assert g.state is GroupState.STABLE
    return g


def offsets(**commit_times) -> dict:
    return {(topic, 0): CommittedOffset(5, commit_timestamp=ts) for topic, ts in commit_times.items()}


def test_offsets_of_a_group_known_only_by_its_commits_expire_a_retention_after_their_commit():
    committed = offsets(a=T0, b=T0 + 1000)
    assert _expired_offsets(None, committed, T0 + RETENTION - 1, RETENTION) == []
    assert _expired_offsets(None, committed, T0 + RETENTION, RETENTION) == [("a", 0)]
    simple = Group("g")  # commits with generation -1 created it: no protocol type
    assert _expired_offsets(simple, committed, T0 + RETENTION + 1000, RETENTION) == [("a", 0), ("b", 0)]


def test_an_emptied_consumer_group_keeps_old_commits_until_it_has_been_empty_for_the_retention():
    g = consumer_group()
    emptied_at = T0 + 2 * RETENTION  # a partition it stopped committing to long before it became Empty
    g.leave(member_id=next(iter(g.members)), group_instance_id=None, now=emptied_at)
    g.complete_join(emptied_at)
    assert g.state is GroupState.EMPTY and g.state_timestamp_ms == emptied_at
    committed = offsets(a=T0)
    assert _expired_offsets(g, committed, emptied_at + 1000, RETENTION) == []
    assert _expired_offsets(g, committed, emptied_at + RETENTION, RETENTION) == [("a", 0)]


def test_a_stable_consumer_group_loses_only_old_offsets_of_topics_it_no_longer_subscribes_to():
    g = consumer_group(topics=("a",))
    committed = offsets(a=T0, b=T0)
    assert _expired_offsets(g, committed, T0 + RETENTION, RETENTION) == [("b", 0)]
    assert _expired_offsets(g, committed, T0 + RETENTION - 1, RETENTION) == []


def test_nothing_expires_while_subscriptions_are_unreadable_or_the_group_rebalances():
    unreadable = consumer_group(metadata=b"\xff")
    assert _expired_offsets(unreadable, offsets(b=T0), T0 + 2 * RETENTION, RETENTION) == []
    rebalancing = consumer_group()
    rebalancing.prepare_rebalance(T0)
    assert _expired_offsets(rebalancing, offsets(b=T0), T0 + 2 * RETENTION, RETENTION) == []


def test_an_explicit_retention_time_wins():
    g = consumer_group()
    g.leave(member_id=next(iter(g.members)), group_instance_id=None, now=T0)
    g.complete_join(T0)
    committed = {("a", 0): CommittedOffset(5, commit_timestamp=T0, expire_timestamp=T0 + 10)}
    assert _expired_offsets(g, committed, T0 + 10, RETENTION) == [("a", 0)]
