"""Reconciliation of one member toward its target (Kafka's CurrentAssignmentBuilder), as a table."""

from __future__ import annotations

import uuid

import pytest

from broker.coordinator.consumer.member import ConsumerGroupMember, MemberState
from broker.coordinator.consumer.reconciliation import reconcile
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import ErrorCode

A = uuid.UUID(int=1)
B = uuid.UUID(int=2)


def asg(**topics: list[int]) -> dict[uuid.UUID, frozenset[int]]:
    ids = {"a": A, "b": B}
    return {ids[t]: frozenset(p) for t, p in topics.items() if p}


def member(epoch: int, state: MemberState = MemberState.STABLE, assigned=None, revoking=None) -> ConsumerGroupMember:
    return ConsumerGroupMember(
        member_id="me",
        member_epoch=epoch,
        previous_member_epoch=epoch - 1,
        state=state,
        assigned_partitions=assigned or {},
        partitions_pending_revocation=revoking or {},
    )


OTHER_HOLDS = {(A, 2): "other", (A, 3): "other"}

CASES = [
    # (name, member, target epoch, target, owned reported, expected epoch, state, assigned, revoking)
    (
        "stable at the target epoch stays",
        member(3, assigned=asg(a=[0])),
        3,
        asg(a=[0, 1]),
        asg(a=[0]),
        3,
        MemberState.STABLE,
        asg(a=[0]),
        {},
    ),
    (
        "new partitions, none held: straight to the new epoch",
        member(1, assigned=asg(a=[0])),
        2,
        asg(a=[0, 1]),
        asg(a=[0]),
        2,
        MemberState.STABLE,
        asg(a=[0, 1]),
        {},
    ),
    (
        "partitions to revoke: epoch stays, revocation first",
        member(1, assigned=asg(a=[0, 1])),
        2,
        asg(a=[0, 5]),
        asg(a=[0, 1]),
        1,
        MemberState.UNREVOKED_PARTITIONS,
        asg(a=[0]),
        asg(a=[1]),
    ),
    (
        "owned not reported counts as still owning",
        member(1, assigned=asg(a=[0, 1])),
        2,
        asg(a=[0]),
        None,
        1,
        MemberState.UNREVOKED_PARTITIONS,
        asg(a=[0]),
        asg(a=[1]),
    ),
    (
        "revocation already done by the client: new epoch at once",
        member(1, assigned=asg(a=[0, 1])),
        2,
        asg(a=[0]),
        asg(a=[0]),
        2,
        MemberState.STABLE,
        asg(a=[0]),
        {},
    ),
    (
        "still reporting a revoked partition: unchanged",
        member(1, MemberState.UNREVOKED_PARTITIONS, asg(a=[0]), asg(a=[1])),
        2,
        asg(a=[0]),
        asg(a=[0, 1]),
        1,
        MemberState.UNREVOKED_PARTITIONS,
        asg(a=[0]),
        asg(a=[1]),
    ),
    (
        "revocation acknowledged: moves to the target epoch",
        member(1, MemberState.UNREVOKED_PARTITIONS, asg(a=[0]), asg(a=[1])),
        2,
        asg(a=[0]),
        asg(a=[0]),
        2,
        MemberState.STABLE,
        asg(a=[0]),
        {},
    ),
    (
        "target partitions held by another member are held back",
        member(1, assigned=asg(a=[0])),
        2,
        asg(a=[0, 2, 4]),
        asg(a=[0]),
        2,
        MemberState.UNRELEASED_PARTITIONS,
        asg(a=[0, 4]),
        {},
    ),
    (
        "only held partitions missing: unreleased at the target epoch",
        member(1, assigned=asg(a=[0])),
        2,
        asg(a=[0, 3]),
        asg(a=[0]),
        2,
        MemberState.UNRELEASED_PARTITIONS,
        asg(a=[0]),
        {},
    ),
    (
        "an unsubscribed topic's partitions are revoked",
        member(1, assigned=asg(a=[0], b=[0])),
        2,
        asg(a=[0], b=[0]),
        asg(a=[0], b=[0]),
        1,
        MemberState.UNREVOKED_PARTITIONS,
        asg(a=[0]),
        asg(b=[0]),
    ),
]


@pytest.mark.parametrize(
    ("m", "target_epoch", "target", "owned", "epoch", "state", "assigned", "revoking"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_reconcile(m, target_epoch, target, owned, epoch, state, assigned, revoking):
    out = reconcile(
        m,
        target_epoch=target_epoch,
        target=target,
        subscribed_topic_ids={A},
        partition_owner=lambda t, p: OTHER_HOLDS.get((t, p)),
        owned=owned,
    )
    assert (out.member_epoch, out.state, dict(out.assigned_partitions), dict(out.partitions_pending_revocation)) == (
        epoch,
        state,
        assigned,
        revoking,
    )
    if epoch != m.member_epoch:
        assert out.previous_member_epoch == m.member_epoch


def test_a_partition_the_member_itself_is_revoking_is_not_unreleased():
    m = member(1, MemberState.UNRELEASED_PARTITIONS, asg(a=[0]), {})
    out = reconcile(
        m,
        target_epoch=2,
        target=asg(a=[0, 1]),
        subscribed_topic_ids={A},
        partition_owner=lambda t, p: "me" if p == 1 else None,
        owned=asg(a=[0]),
    )
    assert out.state is MemberState.STABLE and dict(out.assigned_partitions) == asg(a=[0, 1])


@pytest.mark.parametrize("owned", [None, asg(a=[0])])
def test_unknown_state_fences_a_member_that_still_owns_partitions(owned):
    with pytest.raises(GroupError) as err:
        reconcile(
            member(1, MemberState.UNKNOWN, asg(a=[0])),
            target_epoch=2,
            target=asg(a=[0]),
            subscribed_topic_ids={A},
            partition_owner=lambda t, p: None,
            owned=owned,
        )
    assert err.value.error_code == ErrorCode.FENCED_MEMBER_EPOCH


def test_unknown_state_with_nothing_owned_reconciles_from_the_target_epoch():
    out = reconcile(
        member(1, MemberState.UNKNOWN, asg(a=[0])),
        target_epoch=4,
        target=asg(a=[0, 1]),
        subscribed_topic_ids={A},
        partition_owner=lambda t, p: None,
        owned={},
    )
    assert (out.member_epoch, out.state, dict(out.assigned_partitions)) == (4, MemberState.STABLE, asg(a=[0, 1]))
