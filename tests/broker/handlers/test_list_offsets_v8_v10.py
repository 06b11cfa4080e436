"""ListOffsets v8-10 (the versions Kafka 4.x clients send): -4 earliest local offset from v8, -5 latest tiered
offset from v9 (nothing is tiered here), ``timeout_ms`` from v10; the special timestamps before their version
are INVALID_REQUEST."""

from __future__ import annotations

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ..requests import batch, create, produce, unique
from ..wire import Wire

R = API_BY_KEY[ApiKey.LIST_OFFSETS].Request


@pytest.fixture(scope="module")
def topic(broker):
    with Wire(broker.bootstrap_servers) as w:
        name = unique()
        create(w, name)
        produce(w, name, batch([b"a", b"b", b"c"], ts=1000))
    return name


def list_offsets(broker, name, ts, version):
    body = R(
        replica_id=-1,
        isolation_level=0,
        topics=[R.ListOffsetsTopic(name=name, partitions=[R.ListOffsetsTopic.ListOffsetsPartition(timestamp=ts)])],
        timeout_ms=5000,
    )
    with Wire(broker.bootstrap_servers) as w:
        p = w.call(ApiKey.LIST_OFFSETS, version, body).topics[0].partitions[0]
    return p.error_code, p.offset, p.timestamp, p.leader_epoch


@pytest.mark.parametrize(
    "ts, version, expected",
    [
        (-4, 8, (ErrorCode.NONE, 0, -1, 0)),  # earliest local = log start: every segment is local
        (-4, 10, (ErrorCode.NONE, 0, -1, 0)),
        (-5, 9, (ErrorCode.NONE, -1, -1, -1)),  # latest tiered: nothing tiered
        (-5, 10, (ErrorCode.NONE, -1, -1, -1)),
        (-1, 10, (ErrorCode.NONE, 3, -1, 0)),
        (1001, 10, (ErrorCode.NONE, 1, 1001, 0)),
        (-4, 7, (ErrorCode.INVALID_REQUEST, -1, -1, -1)),
        (-5, 8, (ErrorCode.INVALID_REQUEST, -1, -1, -1)),
        (-6, 10, (ErrorCode.INVALID_REQUEST, -1, -1, -1)),
        (-6, 11, (ErrorCode.NONE, -1, -1, -1)),  # earliest pending upload: nothing tiered (v11, KIP-1023)
        (-5, 11, (ErrorCode.NONE, -1, -1, -1)),
        (-4, 11, (ErrorCode.NONE, 0, -1, 0)),
        (-7, 11, (ErrorCode.INVALID_REQUEST, -1, -1, -1)),
    ],
)
def test_special_timestamps_by_version(broker, topic, ts, version, expected):
    assert list_offsets(broker, topic, ts, version) == expected
