"""ShareFetch and ShareAcknowledge authorization as Kafka's: Read on the group for the request, Read on each topic
for its partitions (handlers called as ``User:bob`` on built services with an enabled authorizer)."""

from __future__ import annotations

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.handlers import share_acknowledge, share_fetch
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.handlers.acl_services import Op, Rt, Secured

from .memory_persister import MemoryPersister

F = API_BY_KEY[ApiKey.SHARE_FETCH].Request
A = API_BY_KEY[ApiKey.SHARE_ACKNOWLEDGE].Request


@pytest.fixture
def sec(tmp_path):
    registry = MemoryRegistryStore().view()
    registry.start()
    s = Secured(tmp_path, registry)
    s.topic("secret")
    s.topic("open")
    s.services.share_partitions.persister_of = MemoryPersister
    yield s
    registry.close()


def topic_id(sec, name):
    return sec.services.metadata.topics[name].topic_id


def fetch_body(sec, member="m1", epoch=0):
    return F(
        group_id="g",
        member_id=member,
        share_session_epoch=epoch,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=10,
        batch_size=10,
        topics=[
            F.FetchTopic(topic_id=topic_id(sec, n), partitions=[F.FetchTopic.FetchPartition(partition_index=0)])
            for n in ("secret", "open")
        ],
    )


def test_share_fetch_without_read_on_the_group_is_group_authorization_failed(sec):
    sec.grant(Op.READ, Rt.TOPIC, "open")
    resp = sec.send(share_fetch, 2, fetch_body(sec))
    assert resp.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED and resp.responses == []


def test_share_fetch_answers_topic_authorization_failed_for_topics_without_read(sec):
    sec.grant(Op.READ, Rt.GROUP, "g")
    sec.grant(Op.READ, Rt.TOPIC, "open")
    resp = sec.send(share_fetch, 2, fetch_body(sec))
    assert resp.error_code == ErrorCode.NONE
    codes = {t.topic_id: t.partitions[0].error_code for t in resp.responses}
    assert codes == {topic_id(sec, "secret"): ErrorCode.TOPIC_AUTHORIZATION_FAILED, topic_id(sec, "open"): 0}


def test_share_acknowledge_needs_read_on_the_group_and_the_topic(sec):
    body = A(
        group_id="g",
        member_id="m1",
        share_session_epoch=1,
        topics=[
            A.AcknowledgeTopic(
                topic_id=topic_id(sec, "secret"),
                partitions=[
                    A.AcknowledgeTopic.AcknowledgePartition(
                        partition_index=0,
                        acknowledgement_batches=[
                            A.AcknowledgeTopic.AcknowledgePartition.AcknowledgementBatch(
                                first_offset=0, last_offset=0, acknowledge_types=[1]
                            )
                        ],
                    )
                ],
            )
        ],
    )
    assert sec.send(share_acknowledge, 2, body).error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    sec.grant(Op.READ, Rt.GROUP, "g")
    assert sec.send(share_fetch, 2, fetch_body(sec)).error_code == ErrorCode.NONE  # opens the session
    resp = sec.send(share_acknowledge, 2, body)
    assert resp.error_code == ErrorCode.NONE
    assert resp.responses[0].partitions[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
