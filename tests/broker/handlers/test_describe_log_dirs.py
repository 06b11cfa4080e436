"""DescribeLogDirs on an in-process broker with two log dirs, over the wire: every dir with the partitions it
holds and their sizes (the partition logs' bytes), a null topic list, unknown topics left out, v0 and v4."""

from __future__ import annotations

import os
import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.protocol import ApiKey as K

from ..requests import batch, create, produce, unique
from ..wire import Wire


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    dirs = [tmp_path_factory.mktemp("logs-a"), tmp_path_factory.mktemp("logs-b")]
    b = EmbeddedBroker(0, zookeeper_connect=f"memory:test-{uuid.uuid4().hex[:8]}", log_dir=",".join(map(str, dirs)))
    b.start()
    yield b
    b.stop()


@pytest.fixture()
def wire(broker):
    with Wire(broker.bootstrap_servers) as w:
        yield w


def describe(w, topics: dict[str, list[int]] | None, version: int = 4):
    R = API_BY_KEY[K.DESCRIBE_LOG_DIRS].Request
    named = None if topics is None else [R.DescribableLogDirTopic(topic=t, partitions=ps) for t, ps in topics.items()]
    body = R(topics=named)
    return w.call(K.DESCRIBE_LOG_DIRS, version, body)


def partitions(resp) -> dict[tuple[str, int], tuple[str, int, int, bool]]:
    """(topic, partition) -> (log dir, size, offset lag, is future)."""
    return {
        (t.name, p.partition_index): (r.log_dir, p.partition_size, p.offset_lag, p.is_future_key)
        for r in resp.results
        for t in r.topics
        for p in t.partitions
    }


def expected(broker, topic: str, count: int) -> dict[tuple[str, int], tuple[str, int, int, bool]]:
    logs = broker.broker.log_manager
    return {
        (topic, i): (str(logs.log_dir_of(topic, i)), logs.get_log(topic, i).size_in_bytes, 0, False)
        for i in range(count)
    }


def test_describe_log_dirs_lists_each_dir_with_its_partitions_and_their_sizes(broker, wire):
    topic = unique("logdirs")
    assert create(wire, topic, partitions=2).error_code == ErrorCode.NONE
    assert produce(wire, topic, batch([b"x" * 100] * 3), partition=0).error_code == ErrorCode.NONE
    assert produce(wire, topic, batch([b"y" * 10]), partition=1).error_code == ErrorCode.NONE

    resp = describe(wire, {topic: [0, 1]})
    assert resp.error_code == ErrorCode.NONE
    dirs = [str(d) for d in broker.broker.log_manager.log_dirs]
    assert [r.log_dir for r in resp.results] == dirs and all(r.error_code == ErrorCode.NONE for r in resp.results)
    want = expected(broker, topic, 2)
    assert partitions(resp) == want
    assert {d for d, *_ in want.values()} == set(dirs)  # new partitions go to the dir holding the fewest
    assert want[(topic, 0)][1] > want[(topic, 1)][1] > 0
    for r in resp.results:
        st = os.statvfs(r.log_dir)
        assert r.total_bytes == st.f_blocks * st.f_frsize and 0 < r.usable_bytes <= r.total_bytes


def test_describe_log_dirs_with_a_null_topic_list_lists_every_partition(broker, wire):
    a, b = unique("logdirs-a"), unique("logdirs-b")
    assert create(wire, a, partitions=3).error_code == ErrorCode.NONE
    assert create(wire, b).error_code == ErrorCode.NONE
    assert produce(wire, b, batch([b"z"])).error_code == ErrorCode.NONE
    got = partitions(describe(wire, None))
    logs = broker.broker.log_manager
    assert set(got) == {(p.topic, p.partition) for p in logs.all_logs()}
    assert {k: v for k, v in got.items() if k[0] in (a, b)} == {**expected(broker, a, 3), **expected(broker, b, 1)}


def test_describe_log_dirs_leaves_out_unknown_topics_and_partitions(broker, wire):
    topic = unique("logdirs")
    assert create(wire, topic).error_code == ErrorCode.NONE
    resp = describe(wire, {topic: [0, 7], unique("missing"): [0]})
    assert resp.error_code == ErrorCode.NONE and len(resp.results) == 2
    assert partitions(resp) == expected(broker, topic, 1)
    assert all(r.topics == [] for r in describe(wire, {unique("missing"): [0]}).results)


def test_describe_log_dirs_v0_has_no_volume_sizes_and_v4_has_them(broker, wire):
    topic = unique("logdirs")
    assert create(wire, topic).error_code == ErrorCode.NONE
    assert produce(wire, topic, batch([b"v0"])).error_code == ErrorCode.NONE
    v0, v4 = describe(wire, {topic: [0]}, version=0), describe(wire, {topic: [0]}, version=4)
    assert partitions(v0) == partitions(v4) == expected(broker, topic, 1)
    assert all((r.total_bytes, r.usable_bytes) == (-1, -1) for r in v0.results)
    assert all(r.total_bytes > 0 and r.usable_bytes > 0 for r in v4.results)
