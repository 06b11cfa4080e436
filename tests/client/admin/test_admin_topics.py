"""AdminClient.describe_topic_partitions (DescribeTopicPartitions, paged by the cursor) against an in-process
broker: the same partitions, leaders, replicas and ids as Metadata's describe_topics, whatever the page size;
an unknown topic raises AdminOperationError naming it."""

from __future__ import annotations

import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client.admin import AdminClient, AdminOperationError
from spark_kafkalog.client.types import NewTopic
from spark_kafkalog.protocol import ErrorCode


@pytest.fixture(scope="module")
def admin(tmp_path_factory):
    b = EmbeddedBroker(
        0, zookeeper_connect=f"memory:dtp-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("dtp")
    ).start()
    with AdminClient(b.bootstrap_servers) as a:
        a.create_topics([NewTopic("dtp-a", 3, 1), NewTopic("dtp-b", 1, 1), NewTopic("dtp-c", 5, 1)])
        yield a
    b.stop()


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 2000])
def test_paged_descriptions_equal_metadatas_whatever_the_page_size(admin, limit):
    names = ["dtp-c", "dtp-a", "dtp-b"]
    want = admin.describe_topics(names)
    got = admin.describe_topic_partitions(names, partition_limit=limit)
    assert list(got) == sorted(names)
    assert got == want
    assert [p.partition for p in got["dtp-c"].partitions] == [0, 1, 2, 3, 4]


def test_all_topics_are_described_when_none_are_named(admin):
    got = admin.describe_topic_partitions(partition_limit=2)
    assert {"dtp-a", "dtp-b", "dtp-c"} <= set(got)
    assert got["dtp-a"].topic_id == admin.describe_topics(["dtp-a"])["dtp-a"].topic_id is not None


def test_an_unknown_topic_raises_naming_it(admin):
    with pytest.raises(AdminOperationError) as e:
        admin.describe_topic_partitions(["dtp-a", "dtp-missing"])
    assert set(e.value.errors) == {"dtp-missing"}
    assert e.value.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
