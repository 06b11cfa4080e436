"""Raw requests for broker tests: record batches, and Produce, Fetch and CreateTopics at exact versions over a
``tests.broker.wire.Wire`` (the bodies, and calls returning the one partition's or topic's answer)."""

from __future__ import annotations

import time
import uuid

from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.records import Compression, RecordBatchBuilder, iter_batches

K = ApiKey


def batch(values, *, codec=Compression.NONE, ts=None, pid=-1, epoch=-1, seq=-1, keys=None):
    b = RecordBatchBuilder(codec, producer_id=pid, producer_epoch=epoch, base_sequence=seq)
    now = ts if ts is not None else int(time.time() * 1000)
    for i, v in enumerate(values):
        b.append(now + i if ts is not None else now, keys[i] if keys else None, v, [])
    return b.build()


def produce_body(topic, partition, records, acks=1, version=9):
    R = API_BY_KEY[K.PRODUCE].Request
    return R(
        acks=acks,
        timeout_ms=5000,
        topic_data=[
            R.TopicProduceData(
                name=topic, partition_data=[R.TopicProduceData.PartitionProduceData(index=partition, records=records)]
            )
        ],
    )


def produce(w, topic, records, *, partition=0, acks=1, version=9):
    resp = w.call(K.PRODUCE, version, produce_body(topic, partition, records, acks))
    return resp.responses[0].partition_responses[0]


def fetch_body(topic, partition, offset, *, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation=0):
    R = API_BY_KEY[K.FETCH].Request
    return R(
        replica_id=-1,
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        isolation_level=isolation,
        session_id=0,
        session_epoch=-1,
        topics=[
            R.FetchTopic(
                topic=topic,
                partitions=[
                    R.FetchTopic.FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=max_bytes)
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )


def fetch(w, topic, offset, *, partition=0, version=12, **kw):
    resp = w.call(K.FETCH, version, fetch_body(topic, partition, offset, **kw))
    return resp.responses[0].partitions[0]


def values_in(records):
    return [r.value for v in iter_batches(bytes(records or b"")) for r in v.records()]


def create(w, name, partitions=1, version=7, **kw):
    R = API_BY_KEY[K.CREATE_TOPICS].Request
    configs = [R.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in kw.pop("configs", {}).items()]
    body = R(
        topics=[
            R.CreatableTopic(
                name=name,
                num_partitions=partitions,
                replication_factor=kw.pop("rf", -1),
                assignments=[],
                configs=configs,
            )
        ],
        timeout_ms=kw.pop("timeout_ms", 10000),
        validate_only=kw.pop("validate_only", False),
    )
    return w.call(K.CREATE_TOPICS, version, body).topics[0]


def unique(prefix="t"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
