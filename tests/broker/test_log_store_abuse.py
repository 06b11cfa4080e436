"""The log store under misuse, through a real in-process broker and the project's client: the longest legal
topic name through create/produce/delete/re-create, and a restart over garbage checkpoint files."""

from __future__ import annotations

import logging
import uuid

import pytest

from broker.log.leader_epoch import LEADER_EPOCH_CHECKPOINT
from broker.log.log_manager import (
    CLEAN_SHUTDOWN_FILE,
    CLEANER_CHECKPOINT,
    LOG_START_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_CHECKPOINT,
    is_delete_dir_name,
)
from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, Consumer, KafkaClient, NewTopic, OffsetSpec, Producer, TopicPartition
from tests.waiting import wait_until


def _start(log_dir, registry: str) -> EmbeddedBroker:
    return EmbeddedBroker(0, zookeeper_connect=registry, log_dir=log_dir).start()


def _produce(bootstrap: str, topic: str, partitions: int, n: int, tag: str) -> None:
    with Producer(bootstrap, linger_ms=0, batch_size=64) as producer:
        futures = [producer.send(topic, b"%s-%d" % (tag.encode(), i), partition=i % partitions) for i in range(n)]
        producer.flush(30)
    assert all(f.result(0) is not None for f in futures)


def _consume_all(bootstrap: str, topic: str, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """Every record from the log start to the high watermark of each partition."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    with KafkaClient(bootstrap) as client:
        ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
    out: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    with Consumer(bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign(tps)

        def caught_up() -> bool:
            if all(consumer.position(tp) >= ends[tp] for tp in tps):
                return True
            for record in consumer.poll(200):
                out[record.partition].append((record.offset, record.value))
            return False

        wait_until(caught_up, 30, f"the consumer to read up to {ends}")
    return out


def _offsets(bootstrap: str, topic: str, partitions: int) -> list[tuple[int, int]]:
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    with KafkaClient(bootstrap) as client:
        starts = client.list_offsets({tp: OffsetSpec.EARLIEST for tp in tps})
        ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
    return [(starts[tp], ends[tp]) for tp in tps]


def test_the_longest_topic_name_is_created_produced_deleted_and_recreated_empty(tmp_path):
    topic = "L" + uuid.uuid4().hex + "x" * (249 - 33)
    assert len(topic) == 249
    b = _start(tmp_path, f"memory:{uuid.uuid4().hex}")
    try:
        bootstrap = b.bootstrap_servers
        with AdminClient(bootstrap) as admin:
            admin.create_topics([NewTopic(topic, 2, 1)])
            _produce(bootstrap, topic, 2, 20, "old")
            consumed = _consume_all(bootstrap, topic, 2)
            assert [len(consumed[p]) for p in (0, 1)] == [10, 10]

            admin.delete_topics([topic])
            assert topic not in admin.list_topics()
            wait_until(  # renamed, then removed
                lambda: not [p for p in tmp_path.iterdir() if p.name.startswith(topic[:100])],
                30,
                "the deleted topic's directories to go",
            )

            admin.create_topics([NewTopic(topic, 2, 1)])
        assert _offsets(bootstrap, topic, 2) == [(0, 0), (0, 0)]  # none of the old data
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(topic)) == [f"{topic}-0", f"{topic}-1"]
        _produce(bootstrap, topic, 2, 2, "new")
        assert _consume_all(bootstrap, topic, 2) == {0: [(0, b"new-0")], 1: [(0, b"new-1")]}
    finally:
        b.stop()
    assert not [p for p in tmp_path.iterdir() if is_delete_dir_name(p.name)]


GARBAGE = {
    RECOVERY_POINT_CHECKPOINT: b"0\n2\n\xff\xfe 0 12\n",  # not UTF-8
    LOG_START_CHECKPOINT: b"0\n2\n{topic} -1 0\n{topic} 1 0\n",  # negative partition
    REPLICATION_CHECKPOINT: b"0\n2\n{topic} 0 5\n{topic} 0 5\n",  # duplicate line
    CLEANER_CHECKPOINT: b"\x00" * 512,  # binary zeros
}
EPOCH_GARBAGE = [b"0\n1\n0 -3\n", b"\xc3\x28\n"]  # negative offset; not UTF-8


@pytest.mark.parametrize("clean", [True, False], ids=["clean-shutdown", "unclean"])
def test_a_broker_restarts_over_garbage_checkpoints_and_serves_every_record(tmp_path, caplog, clean):
    topic = f"ckpt-{uuid.uuid4().hex[:8]}"
    registry = f"memory:{uuid.uuid4().hex}"
    b = _start(tmp_path, registry)
    try:
        with AdminClient(b.bootstrap_servers) as admin:
            admin.create_topics([NewTopic(topic, 2, 1)])
        _produce(b.bootstrap_servers, topic, 2, 40, "v")
        before = _consume_all(b.bootstrap_servers, topic, 2)
    finally:
        b.stop()
    assert [len(before[p]) for p in (0, 1)] == [20, 20]
    damaged = []
    for name, garbage in GARBAGE.items():
        (tmp_path / name).write_bytes(garbage.replace(b"{topic}", topic.encode()))
        damaged.append(tmp_path / name)
    for p, garbage in enumerate(EPOCH_GARBAGE):
        (tmp_path / f"{topic}-{p}" / LEADER_EPOCH_CHECKPOINT).write_bytes(garbage)
        damaged.append(tmp_path / f"{topic}-{p}" / LEADER_EPOCH_CHECKPOINT)
    if not clean:
        (tmp_path / CLEAN_SHUTDOWN_FILE).unlink()
    caplog.set_level(logging.WARNING, logger="kafkalog.log")

    b = _start(tmp_path, registry)
    try:
        warned = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
        assert [str(path) for path in damaged if str(path) not in warned] == []
        assert _consume_all(b.bootstrap_servers, topic, 2) == before
        assert _offsets(b.bootstrap_servers, topic, 2) == [(0, 20), (0, 20)]
        _produce(b.bootstrap_servers, topic, 2, 2, "after")
        assert _offsets(b.bootstrap_servers, topic, 2) == [(0, 21), (0, 21)]
    finally:
        b.stop()


BEYOND_THE_END = {  # offsets far past the log end of every partition (3 x 467 records)
    RECOVERY_POINT_CHECKPOINT: 1_000_000,
    LOG_START_CHECKPOINT: 1_000_000,
    REPLICATION_CHECKPOINT: (1 << 63) - 1,
    CLEANER_CHECKPOINT: 468,
}


@pytest.mark.parametrize("clean", [True, False], ids=["clean-shutdown", "unclean"])
def test_a_broker_restarts_over_checkpoint_offsets_beyond_the_log_end_and_serves_every_record(tmp_path, caplog, clean):
    topic = f"beyond-{uuid.uuid4().hex[:8]}"
    registry = f"memory:{uuid.uuid4().hex}"
    b = _start(tmp_path, registry)
    try:
        assert not b.bootstrap_servers.endswith(":0")  # port 0 asked, the real port reported
        with AdminClient(b.bootstrap_servers) as admin:
            admin.create_topics([NewTopic(topic, 3, 1)])
        _produce(b.bootstrap_servers, topic, 3, 1401, "v")
        before = _consume_all(b.bootstrap_servers, topic, 3)
    finally:
        b.stop()
    assert [len(before[p]) for p in range(3)] == [467, 467, 467]
    for name, offset in BEYOND_THE_END.items():
        entries = "".join(f"{topic} {p} {offset}\n" for p in range(3))
        (tmp_path / name).write_text(f"0\n3\n{entries}")
    if not clean:
        (tmp_path / CLEAN_SHUTDOWN_FILE).unlink()
    caplog.set_level(logging.WARNING, logger="kafkalog.log")

    b = _start(tmp_path, registry)
    try:
        assert _offsets(b.bootstrap_servers, topic, 3) == [(0, 467)] * 3
        assert _consume_all(b.bootstrap_servers, topic, 3) == before
        warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        for name in BEYOND_THE_END:
            naming = [w for w in warned if str(tmp_path / name) in w and "beyond the log end offset 467" in w]
            assert len(naming) == 3, (name, warned)  # one per partition
        _produce(b.bootstrap_servers, topic, 3, 3, "after")
        assert _offsets(b.bootstrap_servers, topic, 3) == [(0, 468)] * 3
    finally:
        b.stop()
    starts = "".join(f"{topic} {p} 0\n" for p in range(3))
    assert (tmp_path / LOG_START_CHECKPOINT).read_text() == f"0\n3\n{starts}"  # rewritten at the real start
