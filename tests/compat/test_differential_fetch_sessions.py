"""Differential check of Fetch by topic id (KIP-516) and incremental fetch sessions (KIP-227): the same raw
Fetch v16 sequence to kafkalog and Apache Kafka (each broker's own topic id and session id filled in from its
earlier answers; both normalized by the allow-list) gets the same answers: full answers that open a session,
incremental answers with only what changed, forgotten partitions, session errors, an unknown topic id and a
session closed by epoch -1."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.records.batch_builder import build_batch

from .differential import Step
from .test_differential import K, base_ts, check, create, metadata_ready, produce, records, req, tag

pytestmark = pytest.mark.compat

V = 16  # served by Kafka 3.9 (ZooKeeper mode), 4.4 and kafkalog


def session_fetch(label, topic, parts, *, session=None, epoch, forget=(), version=V, by_name=False, **kw) -> Step:
    """A Fetch of ``{partition: offset}`` of ``topic`` by its id (by name with ``by_name``) in the session the
    step labelled ``session`` opened (0: none); ``forget`` lists partitions to forget."""

    def body(ctx):
        tid = ctx[f"metadata {topic}"].topics[0].topic_id
        sid = ctx[session].session_id if isinstance(session, str) else (session or 0)
        name = {"topic": topic} if by_name else {"topic_id": tid}
        return req(
            K.FETCH,
            max_wait_ms=0,
            min_bytes=0,
            max_bytes=1 << 20,
            session_id=sid,
            session_epoch=epoch,
            topics=[
                {**name, "partitions": [{"partition": p, "fetch_offset": o, "partition_max_bytes": 1 << 20}]}
                for p, o in parts.items()
            ]
            if parts
            else [],
            forgotten_topics_data=[{**name, "partitions": list(forget)}] if forget else [],
        )

    return Step(label, K.FETCH, version, body, **kw)


def test_fetch_sessions_by_topic_id(kafkalog, kafka):
    t = f"dsess-{tag()}"
    t0 = base_ts()
    stranger = uuid.uuid4()
    steps = [
        create("create", [(t, 2, 1, {})]),
        *metadata_ready(t, 2),
        produce("produce p0", t, build_batch(records([t0, t0 + 1], "a")), partition=0),
        session_fetch("full", t, {0: 0, 1: 0}, epoch=0),
        session_fetch("p0 moved on, nothing new", t, {0: 2}, session="full", epoch=1),
        produce("produce p1", t, build_batch(records([t0 + 2], "b")), partition=1),
        session_fetch("p1 has data", t, {}, session="full", epoch=2),
        session_fetch("stale epoch", t, {}, session="full", epoch=2),
        session_fetch("unknown session", t, {}, session=2_000_000_007, epoch=1),
        session_fetch("forget p1", t, {}, session="full", epoch=3, forget=[1]),
        produce("produce p1 again", t, build_batch(records([t0 + 3], "c")), partition=1),
        produce("produce p0 again", t, build_batch(records([t0 + 4], "d")), partition=0),
        session_fetch("only p0 is left", t, {}, session="full", epoch=4),
        session_fetch("close", t, {0: 0}, session="full", epoch=-1),
        Step(
            "unknown topic id",
            K.FETCH,
            V,
            req(
                K.FETCH,
                max_wait_ms=0,
                min_bytes=0,
                max_bytes=1 << 20,
                topics=[
                    {
                        "topic_id": stranger,
                        "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1}],
                    }
                ],
            ),
        ),
        session_fetch("full by name", t, {0: 0}, epoch=0, version=12, by_name=True),
        session_fetch("continued by id", t, {}, session="full by name", epoch=1),
    ]
    check(kafkalog, kafka, steps)


def test_session_of_a_topic_created_again(kafkalog, kafka):
    """A session cached the partition under the topic's first id; the topic is deleted and created again (a new
    id): the session's partition answers INCONSISTENT_TOPIC_ID, a fetch by the old id UNKNOWN_TOPIC_ID."""
    t = f"drecr-{tag()}"
    steps = [
        create("create", [(t, 1, 1, {})]),
        *metadata_ready(t, 1),
        session_fetch("full", t, {0: 0}, epoch=0),
        Step(
            "delete",
            K.DELETE_TOPICS,
            6,
            req(K.DELETE_TOPICS, topics=[{"name": t}], timeout_ms=30000),
        ),
        Step(
            "create again",
            K.CREATE_TOPICS,
            7,
            req(
                K.CREATE_TOPICS,
                topics=[{"name": t, "num_partitions": 1, "replication_factor": 1, "configs": []}],
                timeout_ms=30000,
            ),
            until=lambda r: r.topics[0].error_code == 0,
            compare=False,
        ),
        Step(
            "metadata again",
            K.METADATA,
            12,
            req(K.METADATA, topics=[{"name": t}], allow_auto_topic_creation=False),
            until=lambda r: r.topics[0].error_code == 0 and all(p.leader_id >= 0 for p in r.topics[0].partitions),
            compare=False,
        ),
        session_fetch(
            "session after re-creation",
            t,
            {},
            session="full",
            epoch=1,
            until=lambda r: r.error_code != 0 or any(p.error_code != 0 for x in r.responses for p in x.partitions),
        ),
        session_fetch("by the old id", t, {0: 0}, epoch=-1),
    ]
    check(kafkalog, kafka, steps)
