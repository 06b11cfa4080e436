"""Partition assignors: Kafka's documented examples, Java's own answers, kafka-python's, and the invariants."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KpSubscription

from spark_kafkalog.client.consumer.assignors import RangeAssignor, RoundRobinAssignor, assignor_by_name
from spark_kafkalog.client.consumer.consumer_protocol import Subscription
from spark_kafkalog.client.consumer.partition_assignor import RebalanceProtocol, UnknownAssignorError
from spark_kafkalog.client.consumer.sticky_assignors import (
    CooperativeStickyAssignor,
    StickyAssignor,
    decode_sticky_user_data,
    encode_sticky_user_data,
)
from spark_kafkalog.client.types import TopicPartition

JAVA_CASES = Path(__file__).parent / "data" / "java_assignments.tsv"


def tp(text: str) -> TopicPartition:
    """``"t0p1"`` -> TopicPartition("t0", 1), the javadoc notation."""
    topic, partition = text.rsplit("p", 1)
    return TopicPartition(topic, int(partition))


def tps(*texts: str) -> set[TopicPartition]:
    return {tp(t) for t in texts}


def assigned(result) -> dict[str, set[TopicPartition]]:
    return {member: set(a.partitions) for member, a in result.items()}


def sticky_subscription(topics, owned=(), generation=1) -> Subscription:
    """What a sticky member sends: its last assignment and generation in the user data."""
    owned = [tp(t) for t in owned]
    return Subscription(topics, encode_sticky_user_data(owned, generation), owned, generation)


# Kafka's documented examples ----------------------------------------------------------------------------
def test_range_javadoc_example_two_consumers_two_topics_of_three_partitions():
    subs = {"C0": Subscription(["t0", "t1"]), "C1": Subscription(["t0", "t1"])}
    result = assigned(RangeAssignor().assign({"t0": 3, "t1": 3}, subs))
    assert result == {"C0": tps("t0p0", "t0p1", "t1p0", "t1p1"), "C1": tps("t0p2", "t1p2")}


def test_range_orders_static_members_by_instance_id_whatever_their_member_ids():
    # RangeAssignor javadoc: after a rolling bounce member ids change, instance ids I0/I1 keep the ranges
    subs = {
        "C3": Subscription(["t0", "t1"], group_instance_id="I0"),
        "C2": Subscription(["t0", "t1"], group_instance_id="I1"),
    }
    result = assigned(RangeAssignor().assign({"t0": 3, "t1": 3}, subs))
    assert result == {"C3": tps("t0p0", "t0p1", "t1p0", "t1p1"), "C2": tps("t0p2", "t1p2")}


def test_range_puts_static_members_before_dynamic_ones():
    subs = {"a": Subscription(["t"]), "z": Subscription(["t"], group_instance_id="zz")}
    assert assigned(RangeAssignor().assign({"t": 3}, subs)) == {"z": tps("tp0", "tp1"), "a": tps("tp2")}


def test_roundrobin_javadoc_example_identical_subscriptions():
    subs = {"C0": Subscription(["t0", "t1"]), "C1": Subscription(["t0", "t1"])}
    result = assigned(RoundRobinAssignor().assign({"t0": 3, "t1": 3}, subs))
    assert result == {"C0": tps("t0p0", "t0p2", "t1p1"), "C1": tps("t0p1", "t1p0", "t1p2")}


def test_roundrobin_javadoc_example_skips_members_not_subscribed():
    subs = {"C0": Subscription(["t0"]), "C1": Subscription(["t0", "t1"]), "C2": Subscription(["t0", "t1", "t2"])}
    result = assigned(RoundRobinAssignor().assign({"t0": 1, "t1": 2, "t2": 3}, subs))
    assert result == {"C0": tps("t0p0"), "C1": tps("t1p0"), "C2": tps("t1p1", "t2p0", "t2p1", "t2p2")}


def test_sticky_javadoc_example_2_keeps_partitions_when_a_member_leaves():
    cluster = {"t0": 1, "t1": 2, "t2": 3}
    first = StickyAssignor().assign(
        cluster, {"C0": Subscription(["t0"]), "C1": Subscription(["t0", "t1"]), "C2": Subscription(["t0", "t1", "t2"])}
    )
    assert assigned(first) == {"C0": tps("t0p0"), "C1": tps("t1p0", "t1p1"), "C2": tps("t2p0", "t2p1", "t2p2")}
    subs = {
        "C1": sticky_subscription(["t0", "t1"], ["t1p0", "t1p1"]),
        "C2": sticky_subscription(["t0", "t1", "t2"], ["t2p0", "t2p1", "t2p2"]),
    }
    assert assigned(StickyAssignor().assign(cluster, subs)) == {
        "C1": tps("t1p0", "t1p1", "t0p0"),
        "C2": tps("t2p0", "t2p1", "t2p2"),
    }


def test_sticky_javadoc_example_1_survivors_keep_their_partitions_and_share_the_leavers():
    # C1 (t0p1, t2p0, t3p1) left; the javadoc shows one balanced split, Java 4.0 computes this one
    subs = {
        "C0": sticky_subscription(["t0", "t1", "t2", "t3"], ["t0p0", "t1p1", "t3p0"]),
        "C2": sticky_subscription(["t0", "t1", "t2", "t3"], ["t1p0", "t2p1"]),
    }
    result = assigned(StickyAssignor().assign({"t0": 2, "t1": 2, "t2": 2, "t3": 2}, subs))
    assert result == {"C0": tps("t0p0", "t1p1", "t3p0", "t0p1"), "C2": tps("t1p0", "t2p1", "t2p0", "t3p1")}


def test_cooperative_first_rebalance_gives_a_joining_member_only_what_nobody_owns():
    topics = ["t0", "t1"]
    subs = {
        "C0": Subscription(topics, owned_partitions=tps("t0p0", "t0p1", "t0p2"), generation_id=4),
        "C1": Subscription(topics, owned_partitions=tps("t1p0", "t1p1", "t1p2"), generation_id=4),
        "C2": Subscription(topics),
    }
    first = assigned(CooperativeStickyAssignor().assign({"t0": 3, "t1": 3}, subs))
    assert first["C2"] == set()  # what C2 will get is first revoked by its owners
    assert first["C0"] < tps("t0p0", "t0p1", "t0p2") and first["C1"] < tps("t1p0", "t1p1", "t1p2")
    revoked = tps("t0p0", "t0p1", "t0p2", "t1p0", "t1p1", "t1p2") - first["C0"] - first["C1"]
    assert len(revoked) == 2
    subs = {m: Subscription(topics, owned_partitions=first[m], generation_id=5) for m in ("C0", "C1", "C2")}
    second = assigned(CooperativeStickyAssignor().assign({"t0": 3, "t1": 3}, subs))
    assert second == {"C0": first["C0"], "C1": first["C1"], "C2": revoked}


# Java's answers ---------------------------------------------------------------------------------------------
class JavaCase(NamedTuple):
    assignor: str
    cluster: dict[str, int]
    subscriptions: dict[str, Subscription]
    expected: dict[str, set[TopicPartition]]


def _partitions(text: str) -> list[TopicPartition]:
    return [TopicPartition(t, int(p)) for t, p in (item.rsplit(":", 1) for item in text.split(",") if item)]


def java_cases() -> list[JavaCase]:
    cases = []
    for line in JAVA_CASES.read_text().splitlines():
        if line.startswith("#"):
            continue
        assignor, cluster_text, expected_text, *members = line.split("\t")
        cluster = {t: int(n) for t, n in (kv.split("=") for kv in cluster_text.split(",") if kv)}
        expected = {}
        for entry in expected_text.split(";")[:-1]:
            member, partitions = entry.split("=", 1)
            expected[member] = set(_partitions(partitions))
        subscriptions = {}
        for member_text in members:
            member, instance, generation, topics, owned = member_text.split(";")
            owned_tps = _partitions(owned)
            gen = int(generation)
            user_data = encode_sticky_user_data(owned_tps, gen if gen >= 0 else None) if assignor == "sticky" else None
            subscriptions[member] = Subscription(
                topics.split(",") if topics else [], user_data, owned_tps, gen, None, instance or None
            )
        cases.append(JavaCase(assignor, cluster, subscriptions, expected))
    return cases


JAVA_CASE_LIST = java_cases()


@pytest.mark.parametrize("case", JAVA_CASE_LIST, ids=[f"{c.assignor}-{i}" for i, c in enumerate(JAVA_CASE_LIST)])
def test_assignment_equals_what_kafkas_java_assignor_computed(case):
    assert assigned(assignor_by_name(case.assignor).assign(case.cluster, case.subscriptions)) == case.expected


def test_the_java_table_covers_every_assignor_and_both_sticky_paths():
    counts = Counter(case.assignor for case in JAVA_CASE_LIST)
    assert all(counts[name] >= 25 for name in ("range", "roundrobin", "sticky", "cooperative-sticky"))
    mixed = [c for c in JAVA_CASE_LIST if len({tuple(sorted(s.topics)) for s in c.subscriptions.values()}) > 1]
    assert any(c.assignor == "sticky" for c in mixed) and any(c.assignor == "cooperative-sticky" for c in mixed)


# kafka-python's answers -------------------------------------------------------------------------------------
class _KpCluster:
    """kafka-python's ClusterMetadata as its assignors read it (partitions_for_topic only)."""

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def partitions_for_topic(self, topic: str):
        return set(range(self.counts[topic])) if topic in self.counts else None


class _KpMember(NamedTuple):
    member_id: str
    group_instance_id: str | None
    metadata: KpSubscription


member_ids = st.lists(st.text(alphabet="abcxyz-019", min_size=1, max_size=6), min_size=1, max_size=7, unique=True)
topic_counts = st.dictionaries(st.sampled_from(["t0", "t1", "orders", "zz"]), st.integers(1, 9), min_size=1)


@st.composite
def dynamic_groups(draw):
    cluster = draw(topic_counts)
    members = draw(member_ids)
    topics = sorted(cluster)
    subs = {m: draw(st.lists(st.sampled_from(topics), min_size=1, unique=True)) for m in members}
    return cluster, subs


def kafka_python_assignment(theirs, cluster, subs) -> dict[str, set[TopicPartition]]:
    kp_members = [_KpMember(m, None, KpSubscription(version=0, topics=t, user_data=b"")) for m, t in subs.items()]
    return {
        member: {TopicPartition(topic, p) for topic, parts in a.assigned_partitions for p in parts}
        for member, a in theirs.assign(_KpCluster(cluster), kp_members).items()
    }


@given(group=dynamic_groups())
def test_range_agrees_with_kafka_python(group):
    cluster, subs = group
    expected = kafka_python_assignment(RangePartitionAssignor, cluster, subs)
    assert assigned(RangeAssignor().assign(cluster, {m: Subscription(t) for m, t in subs.items()})) == expected


@given(group=dynamic_groups())
def test_roundrobin_agrees_with_kafka_python_on_identical_subscriptions(group):
    # kafka-python 3.0.12 cannot skip an unsubscribed member (it puts a tuple where a member id belongs and
    # raises KeyError), so it is compared where no member is skipped; Java's table covers the rest
    cluster, subs = group
    subs = {m: sorted(cluster) for m in subs}
    expected = kafka_python_assignment(RoundRobinPartitionAssignor, cluster, subs)
    assert assigned(RoundRobinAssignor().assign(cluster, {m: Subscription(t) for m, t in subs.items()})) == expected


# invariants -----------------------------------------------------------------------------------------------
@st.composite
def groups(draw, identical: bool = False):
    """(cluster, subscriptions) with valid owned partitions: one owner each, in one generation."""
    cluster = draw(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 8), min_size=1))
    members = draw(member_ids)
    topics = sorted(cluster) + ["missing"]
    common = draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
    subs_topics = {
        m: common if identical else draw(st.lists(st.sampled_from(topics), min_size=1, unique=True)) for m in members
    }
    owned: dict[str, list[TopicPartition]] = {m: [] for m in members}
    for topic, count in cluster.items():
        for p in range(count):
            owner = draw(st.sampled_from([None, *members]))
            if owner is not None:
                owned[owner].append(TopicPartition(topic, p))
    generation = draw(st.integers(-1, 5))
    subs = {
        m: Subscription(
            subs_topics[m],
            encode_sticky_user_data(owned[m], generation if generation >= 0 else None),
            owned[m],
            generation,
        )
        for m in members
    }
    return cluster, subs


def expected_partitions(cluster, subs) -> set[TopicPartition]:
    topics = {t for s in subs.values() for t in s.topics}
    return {TopicPartition(t, p) for t, n in cluster.items() if t in topics for p in range(n)}


def assert_valid(cluster, subs, result, complete: bool = True):
    assert set(result) == set(subs)
    seen = Counter(tp for a in result.values() for tp in a.partitions)
    assert all(n == 1 for n in seen.values()), "a partition was assigned twice"
    for member, a in result.items():
        assert all(p.topic in subs[member].topics for p in a.partitions), f"{member} got a topic it did not subscribe"
    if complete:
        assert set(seen) == expected_partitions(cluster, subs)
    else:
        assert set(seen) <= expected_partitions(cluster, subs)


ALL = [RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor]


@pytest.mark.parametrize("assignor", [RangeAssignor, RoundRobinAssignor, StickyAssignor], ids=lambda c: c.name)
@given(group=groups())
def test_every_subscribed_partition_goes_to_exactly_one_subscribed_member(assignor, group):
    cluster, subs = group
    assert_valid(cluster, subs, assignor().assign(cluster, subs))


@pytest.mark.parametrize("assignor", [RoundRobinAssignor, StickyAssignor], ids=lambda c: c.name)
@given(group=groups(identical=True))
def test_identical_subscriptions_are_balanced_within_one(assignor, group):
    cluster, subs = group
    sizes = [len(a.partitions) for a in assignor().assign(cluster, subs).values()]
    assert max(sizes) - min(sizes) <= 1


@given(group=groups(identical=True))
def test_sticky_keeps_owned_partitions_up_to_the_quota(group):
    cluster, subs = group
    result = assigned(StickyAssignor().assign(cluster, subs))
    min_quota = len(expected_partitions(cluster, subs)) // len(subs)
    for member, sub in subs.items():
        still_valid = {p for p in sub.owned_partitions if p.topic in sub.topics}
        assert len(result[member] & still_valid) >= min(len(still_valid), min_quota)


@given(group=groups(identical=True))
def test_sticky_leaves_a_balanced_complete_assignment_unchanged(group):
    cluster, subs = group
    balanced = assigned(RoundRobinAssignor().assign(cluster, subs))
    again = {
        m: sticky_subscription(s.topics, [f"{p.topic}p{p.partition}" for p in balanced[m]]) for m, s in subs.items()
    }
    assert assigned(StickyAssignor().assign(cluster, again)) == balanced


@settings(max_examples=150)
@given(group=groups())
def test_cooperative_never_assigns_a_partition_another_member_still_owns_and_converges(group):
    cluster, subs = group
    # Kafka's general sticky builder may hand a partition back to a previous owner that no longer subscribes
    # to its topic (its prevAssignment is not filtered by subscription: Java cases sticky-68 and sticky-83 in
    # the table show Java doing it), and we reproduce Java's results; such inputs are not this test's subject.
    assume(all(p.topic in s.topics for s in subs.values() for p in s.owned_partitions))
    # Each round, members revoke what they lost and rejoin with what they kept. A round never gives a member a
    # partition another member still owns; rounds end once every partition is handed out. A round's sticky
    # balance can move further partitions (then left out again), so that takes a few rounds, not always two.
    generation = max(s.generation_id for s in subs.values())
    for _ in range(6):
        result = CooperativeStickyAssignor().assign(cluster, subs)
        assert_valid(cluster, subs, result, complete=False)
        owner = {p: m for m, s in subs.items() for p in s.owned_partitions}
        for member, a in result.items():
            for p in a.partitions:
                assert owner.get(p, member) == member, f"{p} given to {member} while {owner[p]} owns it"
        seen = {tp for a in result.values() for tp in a.partitions}
        if seen == expected_partitions(cluster, subs):
            return
        generation += 1
        subs = {m: Subscription(s.topics, None, result[m].partitions, generation) for m, s in subs.items()}
    raise AssertionError(f"cooperative rebalancing did not hand out every partition in 6 rounds: {result}")


@pytest.mark.parametrize("assignor", ALL, ids=lambda c: c.name)
def test_topics_the_cluster_lacks_or_without_partitions_are_skipped(assignor):
    subs = {"m1": Subscription(["gone", "empty", "t"]), "m2": Subscription(["t"])}
    result = assigned(assignor().assign({"t": 2, "empty": 0}, subs))
    assert result["m1"] | result["m2"] == tps("tp0", "tp1")


@pytest.mark.parametrize("assignor", ALL, ids=lambda c: c.name)
def test_no_members_no_assignments(assignor):
    assert assignor().assign({"t": 3}, {}) == {}


def test_two_members_claiming_a_partition_in_one_generation_lose_it_to_a_fresh_assignment():
    subs = {
        "a": Subscription(["t"], owned_partitions=tps("tp0", "tp1"), generation_id=3),
        "b": Subscription(["t"], owned_partitions=tps("tp1"), generation_id=3),
    }
    # tp1 was claimed twice: neither keeps it, and as it changes hands it is first left out (cooperative)
    assert assigned(CooperativeStickyAssignor().assign({"t": 2}, subs)) == {"a": tps("tp0"), "b": set()}
    assert assigned(StickyAssignor().assign({"t": 2}, {m: sticky_subscription(["t"], []) for m in "ab"})) == {
        "a": tps("tp0"),
        "b": tps("tp1"),
    }


def test_the_newer_generation_keeps_a_doubly_claimed_partition():
    subs = {
        "a": Subscription(["t"], owned_partitions=tps("tp0", "tp1"), generation_id=2),
        "b": Subscription(["t"], owned_partitions=tps("tp1"), generation_id=3),
    }
    assert assigned(CooperativeStickyAssignor().assign({"t": 2}, subs)) == {"a": tps("tp0"), "b": tps("tp1")}


# names, protocols and member-side data ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_assignors_are_found_by_their_kafka_names(name):
    assert assignor_by_name(name).name == name


def test_an_unknown_assignor_name_is_refused_with_the_known_ones():
    with pytest.raises(UnknownAssignorError, match="'rnage'.*cooperative-sticky, range, roundrobin, sticky"):
        assignor_by_name("rnage")


def test_only_cooperative_sticky_speaks_the_cooperative_protocol():
    assert CooperativeStickyAssignor.supported_protocols == (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)
    assert all(cls.supported_protocols == (RebalanceProtocol.EAGER,) for cls in ALL[:3])


def test_sticky_user_data_bytes_match_kafka_python():
    theirs = StickyAssignorUserData(version=1, previous_assignment=[("orders", [2, 0, 5])], generation=7).encode(
        header=False
    )
    assert encode_sticky_user_data([tp("ordersp2"), tp("ordersp0"), tp("ordersp5")], 7) == theirs
    assert decode_sticky_user_data(theirs) == ([tp("ordersp2"), tp("ordersp0"), tp("ordersp5")], 7)


def test_sticky_user_data_without_generation_is_v0_and_garbage_means_nothing_owned():
    v0 = encode_sticky_user_data([tp("tp1")], None)
    assert decode_sticky_user_data(v0) == ([tp("tp1")], None)
    assert decode_sticky_user_data(b"\x00\x00\x00\x09") == ([], -1)
    assert decode_sticky_user_data(None) == ([], None) == decode_sticky_user_data(b"")


def test_a_sticky_member_reports_its_last_assignment_and_generation():
    assignor = StickyAssignor()
    assert assignor.subscription_user_data(["t"]) is None
    result = assignor.assign({"t": 2}, {"me": Subscription(["t"])})
    assignor.on_assignment(result["me"], 9)
    assert decode_sticky_user_data(assignor.subscription_user_data(["t"])) == ([tp("tp0"), tp("tp1")], 9)


def test_a_cooperative_member_reports_its_generation_as_user_data():
    assignor = CooperativeStickyAssignor()
    assert assignor.subscription_user_data(["t"]) == b"\xff\xff\xff\xff"
    assignor.on_assignment(assignor.assign({"t": 1}, {"me": Subscription(["t"])})["me"], 12)
    assert assignor.subscription_user_data(["t"]) == b"\x00\x00\x00\x0c"
