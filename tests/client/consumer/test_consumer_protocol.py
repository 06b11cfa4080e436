"""Consumer protocol payloads: byte-identical to kafka-python's for every version, and round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as KpAssignment
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KpSubscription

from spark_kafkalog.client.consumer.consumer_protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import DecodeError, UnsupportedVersionError

SUBSCRIPTION = Subscription(
    topics=["orders", "clicks"],
    user_data=b"\x00\x01ud",
    owned_partitions=[TopicPartition("orders", 2), TopicPartition("clicks", 1), TopicPartition("orders", 0)],
    generation_id=7,
    rack_id="rack-a",
)


def kafka_python_subscription(version: int) -> bytes:
    """What kafka-python writes for SUBSCRIPTION (topics and owned partitions sorted, as Java does)."""
    fields = {"topics": ["clicks", "orders"], "user_data": b"\x00\x01ud"}
    if version >= 1:
        fields["owned_partitions"] = [
            KpSubscription.TopicPartition(topic="clicks", partitions=[1]),
            KpSubscription.TopicPartition(topic="orders", partitions=[0, 2]),
        ]
    if version >= 2:
        fields["generation_id"] = 7
    if version >= 3:
        fields["rack_id"] = "rack-a"
    return KpSubscription(version=version, **fields).encode()


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_bytes_match_kafka_python_at_every_version(version):
    assert encode_subscription(SUBSCRIPTION, version) == kafka_python_subscription(version)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_kafka_python_subscription_decodes_to_the_fields_its_version_carries(version):
    decoded = decode_subscription(kafka_python_subscription(version))
    assert decoded.topics == ("clicks", "orders")
    assert decoded.user_data == b"\x00\x01ud"
    owned = (TopicPartition("clicks", 1), TopicPartition("orders", 0), TopicPartition("orders", 2))
    assert decoded.owned_partitions == (owned if version >= 1 else ())
    assert decoded.generation_id == (7 if version >= 2 else -1)
    assert decoded.rack_id == ("rack-a" if version >= 3 else None)


def test_subscription_without_user_data_matches_kafka_python():
    ours = encode_subscription(Subscription(topics=["t"]), 0)
    assert ours == KpSubscription(version=0, topics=["t"], user_data=None).encode()
    assert decode_subscription(ours) == Subscription(topics=["t"])


def test_empty_rack_id_reads_as_no_rack():
    data = KpSubscription(version=3, topics=["t"], user_data=None, rack_id="").encode()
    assert decode_subscription(data).rack_id is None


def test_group_instance_id_is_attached_on_decode_and_never_encoded():
    data = encode_subscription(Subscription(topics=["t"], group_instance_id="static-1"))
    assert data == encode_subscription(Subscription(topics=["t"]))
    assert decode_subscription(data, group_instance_id="static-1").group_instance_id == "static-1"


def test_a_newer_subscription_version_is_read_by_its_known_prefix():
    tail = b"\x00\x00\x00\x2a"  # a field a future version appends
    data = b"\x00\x04" + encode_subscription(SUBSCRIPTION, 3)[2:] + tail
    assert decode_subscription(data) == decode_subscription(encode_subscription(SUBSCRIPTION, 3))


def test_subscription_version_outside_0_to_3_cannot_be_written():
    with pytest.raises(UnsupportedVersionError, match="ConsumerProtocolSubscription v4"):
        encode_subscription(SUBSCRIPTION, 4)


@pytest.mark.parametrize("cut", [1, 2, 5, 12, 30])
def test_truncated_subscription_raises_decode_error(cut):
    data = encode_subscription(SUBSCRIPTION)
    with pytest.raises(DecodeError, match="ConsumerProtocolSubscription"):
        decode_subscription(data[:-cut])


ASSIGNMENT = Assignment(
    partitions=[TopicPartition("orders", 2), TopicPartition("clicks", 1), TopicPartition("orders", 0)],
    user_data=b"sticky",
)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_assignment_bytes_match_kafka_python_at_every_version(version):
    # grouped by topic in order of first appearance, partitions in the given order (Java's serializeAssignment)
    theirs = KpAssignment(
        version=version,
        assigned_partitions=[
            KpAssignment.TopicPartition(topic="orders", partitions=[2, 0]),
            KpAssignment.TopicPartition(topic="clicks", partitions=[1]),
        ],
        user_data=b"sticky",
    ).encode()
    assert encode_assignment(ASSIGNMENT, version) == theirs
    decoded = decode_assignment(theirs)
    assert decoded.partitions == (TopicPartition("orders", 2), TopicPartition("orders", 0), TopicPartition("clicks", 1))
    assert decoded.user_data == b"sticky"


def test_kafka_python_range_assignor_output_decodes():
    theirs = KpAssignment(0, [("t0", [0, 1]), ("t1", [0, 1])], b"").encode()
    decoded = decode_assignment(theirs)
    assert decoded == Assignment([("t0", 0), ("t0", 1), ("t1", 0), ("t1", 1)], b"")


def test_empty_assignment_bytes_are_malformed():
    with pytest.raises(DecodeError):
        decode_assignment(b"")


topic_names = st.text(alphabet="abcxyz._-09", min_size=1, max_size=8)
partitions = st.lists(st.builds(TopicPartition, topic_names, st.integers(0, 2**31 - 1)), max_size=8)


@given(
    topics=st.lists(topic_names, max_size=6, unique=True),
    user_data=st.none() | st.binary(max_size=20),
    owned=partitions.map(lambda tps: sorted(set(tps))),
    generation=st.integers(-1, 2**31 - 1),
    rack=st.none() | topic_names,
)
def test_subscription_round_trips_at_v3(topics, user_data, owned, generation, rack):
    sub = Subscription(sorted(topics), user_data, owned, generation, rack)
    assert decode_subscription(encode_subscription(sub)) == sub


@given(version=st.integers(0, 3), topics=st.lists(topic_names, max_size=6, unique=True), owned=partitions)
def test_subscription_round_trips_the_fields_of_each_version(version, topics, owned):
    sub = Subscription(topics, b"u", owned, 3, "r")
    decoded = decode_subscription(encode_subscription(sub, version))
    assert decoded.topics == tuple(sorted(topics))
    assert decoded.owned_partitions == (tuple(sorted(owned)) if version >= 1 else ())
    assert (decoded.generation_id, decoded.rack_id) == ((3 if version >= 2 else -1), ("r" if version >= 3 else None))


@given(version=st.integers(0, 3), tps=partitions, user_data=st.none() | st.binary(max_size=20))
def test_assignment_round_trips_grouped_by_topic(version, tps, user_data):
    decoded = decode_assignment(encode_assignment(Assignment(tps, user_data), version))
    grouped = sorted(tps, key=lambda tp: [t.topic for t in tps].index(tp.topic))  # stable: order within a topic kept
    assert decoded == Assignment(grouped, user_data)
