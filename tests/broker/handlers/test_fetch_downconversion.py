"""message.downconversion.enable: with false, Fetch v0-3 consumers get UNSUPPORTED_VERSION per partition
(Kafka's rule), Fetch v4+ and other topics are served as before."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ..log.helpers import batch
from ..wire import Wire
from .test_produce_legacy import FETCH, produce

K = ApiKey


def _create(w, name, configs):
    R = API_BY_KEY[K.CREATE_TOPICS].Request
    topic = R.CreatableTopic(
        name=name,
        num_partitions=1,
        replication_factor=-1,
        assignments=[],
        configs=[R.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()],
    )
    assert (
        w.call(K.CREATE_TOPICS, 7, R(topics=[topic], timeout_ms=10000, validate_only=False)).topics[0].error_code == 0
    )


def _fetch(w, topic, version):
    body = FETCH(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            FETCH.FetchTopic(
                topic=topic,
                partitions=[FETCH.FetchTopic.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )
    return w.call(K.FETCH, version, body).responses[0].partitions[0]


@pytest.mark.parametrize("enabled", ["true", "false"])
@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 12])
def test_fetch_below_v4_needs_downconversion_enabled(broker, enabled, version):
    with Wire(broker.bootstrap_servers) as w:
        name = f"downconv-{uuid.uuid4().hex[:8]}"
        _create(w, name, {"message.downconversion.enable": enabled})
        assert produce(w, name, {0: bytes(batch([b"a", b"b"]))}, version=7)[0].error_code == 0
        part = _fetch(w, name, version)
        if enabled == "false" and version < 4:
            assert part.error_code == ErrorCode.UNSUPPORTED_VERSION
            assert not part.records
        else:
            assert part.error_code == ErrorCode.NONE
            assert part.records
        assert _fetch(w, name, 12).error_code == ErrorCode.NONE  # the connection still serves
