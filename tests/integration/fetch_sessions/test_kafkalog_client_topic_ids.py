"""kafkalog's own client fetches by topic id (Fetch v13+, ids from Metadata v10+), and a topic deleted and
created again under the same name is followed: the fetch by the old id answers UNKNOWN_TOPIC_ID, the client
refreshes its metadata and reads the new topic (as Kafka's client does)."""

from __future__ import annotations

import pytest

from spark_kafkalog.client import AdminClient, Consumer, KafkaClient, NewTopic, Producer, TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from tests.waiting import wait_until

from .test_client_fetch_sessions import fetch_versions, new_topic

pytestmark = pytest.mark.integration


def send(bootstrap: str, topic: str, values: list[bytes], partition: int = 0) -> None:
    with Producer(bootstrap) as producer:
        for v in values:
            producer.send(topic, v, partition=partition)
        producer.flush(30)


def read(client: KafkaClient, tp: TopicPartition, start: int, end: int) -> list[bytes]:
    return [r.value for f in client.fetch_batches(tp, start, end) for r in f.batch.records() if start <= r.offset < end]


def test_consumer_fetches_by_topic_id(fbroker):
    bootstrap = fbroker.bootstrap_servers
    topic = new_topic(fbroker, 2)
    send(bootstrap, topic, [b"a%d" % i for i in range(20)], partition=0)
    send(bootstrap, topic, [b"b%d" % i for i in range(20)], partition=1)
    newest = API_BY_KEY[ApiKey.FETCH].max_version  # the client's newest Fetch: topics by id (v13+)
    assert newest >= 13
    before = fetch_versions(fbroker).get(newest, 0)
    got: list[bytes] = []
    with Consumer(bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=50) as consumer:
        consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        wait_until(lambda: got.extend(r.value for r in consumer.poll(200)) or len(got) >= 40, 30, "40 records")
    assert sorted(got) == sorted([b"a%d" % i for i in range(20)] + [b"b%d" % i for i in range(20)])
    assert fetch_versions(fbroker).get(newest, 0) > before


def test_client_follows_a_topic_created_again_by_refreshing_its_metadata(fbroker):
    bootstrap = fbroker.bootstrap_servers
    topic = new_topic(fbroker, 1)
    tp = TopicPartition(topic, 0)
    send(bootstrap, topic, [b"old-%d" % i for i in range(5)])
    with KafkaClient(bootstrap) as client:
        assert read(client, tp, 0, 5) == [b"old-%d" % i for i in range(5)]
        old_id = client.metadata.topic(topic).topic_id
        with AdminClient(bootstrap) as admin:
            admin.delete_topics([topic])
            wait_until(lambda: topic not in admin.list_topics(), 30, "the topic to be deleted")
            admin.create_topics([NewTopic(topic, 1, 1, {})])
        send(bootstrap, topic, [b"new-%d" % i for i in range(8)])
        retries = client.stats["retries"]
        assert read(client, tp, 0, 8) == [b"new-%d" % i for i in range(8)]  # the client still held the old id
        assert client.metadata.topic(topic).topic_id not in (None, old_id)
        assert client.stats["retries"] > retries  # the first fetch, by the old id, was answered UNKNOWN_TOPIC_ID
