"""SharePartitionManager over a real partition log, a fake replica manager and a memory persister (clock injected)."""

from __future__ import annotations

import asyncio
import types
import uuid

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.cluster.registry import RegistryError
from broker.config import BrokerConfig
from broker.config_admin.group_configs import GroupConfigs
from broker.log import LogConfig
from broker.log.clock import SYSTEM_CLOCK
from broker.log.partition_log import PartitionLog
from broker.replication.notifier import Notifier
from broker.replication.partition import TopicPartition
from broker.share.share_load import parse_iso_duration_ms
from broker.share.share_partition_manager import SharePartitionManager
from broker.share.state_batches import AckBatch, RecordState
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.batch_builder import build_batch, build_control_batch
from spark_kafkalog.records.splitter import iter_records

from .memory_persister import MemoryPersister

TID = uuid.UUID(int=7)
TOPIC = "t"
G = "g"
ACCEPT, RELEASE, REJECT = 1, 2, 3


class FakeReplicaManager:
    def __init__(self, plog: PartitionLog) -> None:
        self.part = types.SimpleNamespace(log=plog, leader_epoch=0, data_notifier=Notifier())
        self.leading = True
        self.leadership_listeners: list = []

    def leader_partition(self, topic, p):
        if topic != TOPIC or p != 0:
            return None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return (self.part, ErrorCode.NONE) if self.leading else (None, ErrorCode.NOT_LEADER_OR_FOLLOWER)

    def get_partition(self, topic, p):
        return self.part


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def plog(tmp_path):
    log = PartitionLog.open(tmp_path / "t-0", LogConfig(), time=SYSTEM_CLOCK, recover=False)
    yield log
    log.close()


def append(plog, n, *, transactional=False, producer_id=-1):
    batch = build_batch(
        [(1000 + i, None, b"v%d" % i, ()) for i in range(n)],
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
        transactional=transactional,
    )
    plog.append_as_leader(batch, leader_epoch=0)
    plog.high_watermark = plog.log_end_offset


def manager(plog, persister, clock=None, **props):
    cfg = {"broker.id": "0", "zookeeper.connect": "memory:x", **props}
    rm = FakeReplicaManager(plog)
    m = SharePartitionManager(
        BrokerConfig.from_properties(cfg), None, rm, persister=lambda: persister, clock=clock or Clock()
    )
    return m, rm


def acquire(m, member="m1", max_records=500, **kw):
    return m.acquire(G, member, TOPIC, TID, 0, max_records=max_records, max_bytes=1 << 20, min_one_batch=True, **kw)


def test_first_load_resolves_latest_and_writes_it_back(plog):
    append(plog, 3)

    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        got = await acquire(m)
        assert got.error == ErrorCode.NONE and got.acquired == []
        assert p.states[(G, TID, 0)].start_offset == 3  # latest: the high watermark
        append(plog, 2)
        got = await acquire(m)
        assert [(a.first_offset, a.last_offset, a.delivery_count) for a in got.acquired] == [(3, 4, 1)]
        assert got.records  # the batch holding them, whole

    asyncio.run(main())


@pytest.mark.parametrize(
    "reset,start",
    [("earliest", 0), ("latest", 4), ("by_duration:PT0S", 4)],
)
def test_auto_offset_reset_choices(plog, reset, start):
    append(plog, 4)

    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        m._group_configs = lambda: types.SimpleNamespace(
            share_config=lambda g: types.SimpleNamespace(
                record_lock_duration_ms=30000,
                delivery_count_limit=5,
                auto_offset_reset=reset,
                isolation_level="read_uncommitted",
            )
        )
        await acquire(m)
        assert p.states[(G, TID, 0)].start_offset == start

    asyncio.run(main())


class CountingRegistry:
    """A registry view whose group config reads are counted (or fail with ``RegistryError``)."""

    def __init__(self, fail: bool = False) -> None:
        self.view = MemoryRegistryStore().view()
        self.view.start()
        self.fail = fail
        self.reads = 0

    def group_config(self, group_id):
        self.reads += 1
        if self.fail:
            raise RegistryError("zookeeper is gone")
        return self.view.group_config(group_id)


async def run_inline(fn, *args):
    return fn(*args)


def test_the_first_start_offset_follows_the_registry_when_the_cache_has_not_seen_the_alter_yet(plog):
    """Another broker answered the alter (share.auto.offset.reset=earliest); the notification has not reached
    this broker's cache, which still says latest: the first load reads the group's config from the registry."""
    append(plog, 4)

    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        registry = CountingRegistry()
        configs = GroupConfigs(m.config, registry, run_inline)  # type: ignore[arg-type]
        configs.set_group(G, {"share.auto.offset.reset": "latest"})  # stale
        registry.view.alter_group_config(G, {"share.auto.offset.reset": "earliest"})
        m._group_configs = lambda: configs
        got = await acquire(m)
        assert p.states[(G, TID, 0)].start_offset == 0
        assert [(a.first_offset, a.last_offset) for a in got.acquired] == [(0, 3)]
        await acquire(m)
        assert registry.reads == 1  # one registry read, for the first load only
        registry.view.close()

    asyncio.run(main())


def test_the_first_start_offset_falls_back_to_the_cache_when_the_registry_cannot_be_read(plog):
    append(plog, 4)

    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        registry = CountingRegistry(fail=True)
        configs = GroupConfigs(m.config, registry, run_inline)  # type: ignore[arg-type]
        configs.set_group(G, {"share.auto.offset.reset": "earliest"})
        m._group_configs = lambda: configs
        got = await acquire(m)
        assert registry.reads == 1 and got.error == ErrorCode.NONE
        assert p.states[(G, TID, 0)].start_offset == 0

    asyncio.run(main())


@pytest.mark.parametrize(
    "text,ms",
    [("PT1S", 1000), ("PT1.5S", 1500), ("P1D", 86_400_000), ("PT2H3M", 7_380_000), ("-PT1M", -60_000)],
)
def test_iso_durations(text, ms):
    assert parse_iso_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["", "P", "1H", "PT", "PTXS"])
def test_bad_iso_durations_are_refused(text):
    with pytest.raises(ValueError, match="ISO-8601"):
        parse_iso_duration_ms(text)


def test_acknowledge_is_written_before_it_returns_and_release_redelivers(plog):
    async def main():
        p = MemoryPersister()
        p.states[(G, TID, 0)] = p.states.get((G, TID, 0)) or __import__(
            "broker.share.state_batches", fromlist=["PersistedState"]
        ).PersistedState(0, 0, ())
        append(plog, 5)
        m, _ = manager(plog, p)
        got = await acquire(m)
        assert [(a.first_offset, a.last_offset) for a in got.acquired] == [(0, 4)]
        code, _ = await m.acknowledge(G, "m1", TOPIC, TID, 0, [AckBatch(0, 1, (ACCEPT,)), AckBatch(2, 4, (RELEASE,))])
        assert code == ErrorCode.NONE
        state = p.states[(G, TID, 0)]
        assert state.start_offset == 2
        assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in state.state_batches] == [
            (2, 4, RecordState.AVAILABLE, 1)
        ]
        got = await acquire(m, member="m2")
        assert [(a.first_offset, a.last_offset, a.delivery_count) for a in got.acquired] == [(2, 4, 2)]
        code, _ = await m.acknowledge(G, "m1", TOPIC, TID, 0, [AckBatch(2, 4, (ACCEPT,))])
        assert code == ErrorCode.INVALID_RECORD_STATE  # m2 holds them now

    asyncio.run(main())


def test_lock_expiry_makes_records_available_and_is_written(plog):
    async def main():
        p = MemoryPersister()
        clock = Clock()
        m, _ = manager(plog, p, clock, **{"group.share.record.lock.duration.ms": "1000"})
        await acquire(m)  # loads at latest = 0 on an empty log
        append(plog, 2)
        got = await acquire(m)
        assert len(got.acquired) == 1
        woken = m.notifier(TOPIC, 0)
        fut = asyncio.get_running_loop().create_future()
        woken.register(fut)
        writes = len(p.writes)
        clock.now += 0.5
        await m.expire_locks()
        assert len(p.writes) == writes and not fut.done()
        clock.now += 0.6
        await m.expire_locks()
        assert len(p.writes) == writes + 1 and fut.done()
        got = await acquire(m, member="m2")
        assert [(a.first_offset, a.delivery_count) for a in got.acquired] == [(0, 2)]

    asyncio.run(main())


def test_delivery_limit_archives(plog):
    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p, **{"group.share.delivery.count.limit": "2"})
        await acquire(m)
        append(plog, 1)
        for count in (1, 2):
            got = await acquire(m)
            assert [a.delivery_count for a in got.acquired] == [count]
            await m.acknowledge(G, "m1", TOPIC, TID, 0, [AckBatch(0, 0, (RELEASE,))])
        got = await acquire(m)
        assert got.acquired == []
        assert p.states[(G, TID, 0)].start_offset == 1  # archived, finished

    asyncio.run(main())


def test_release_member_and_leadership_loss(plog):
    async def main():
        p = MemoryPersister()
        m, rm = manager(plog, p)
        await acquire(m)
        append(plog, 3)
        await acquire(m)
        await m.release_member(G, "m1", [(TID, 0)])
        got = await acquire(m, member="m2")
        assert [(a.first_offset, a.last_offset, a.delivery_count) for a in got.acquired] == [(0, 2, 2)]
        m._leadership_changed(TopicPartition(TOPIC, 0), False)
        assert m.loaded(G, TID, 0) is None
        rm.leading = False
        got = await acquire(m)
        assert got.error == ErrorCode.NOT_LEADER_OR_FOLLOWER

    asyncio.run(main())


def test_failed_write_answers_the_error_and_reloads_the_persisted_state(plog):
    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        await acquire(m)
        append(plog, 2)
        await acquire(m)
        p.fail_writes.append(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        code, _ = await m.acknowledge(G, "m1", TOPIC, TID, 0, [AckBatch(0, 1, (ACCEPT,))])
        assert code == ErrorCode.COORDINATOR_NOT_AVAILABLE
        assert m.loaded(G, TID, 0) is None
        got = await acquire(m)  # the ack was not persisted: the records come again
        assert [(a.first_offset, a.last_offset) for a in got.acquired] == [(0, 1)]

    asyncio.run(main())


def test_control_batches_are_never_acquired(plog):
    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        await acquire(m)
        append(plog, 2, transactional=True, producer_id=9)
        control = bytearray(
            build_control_batch("commit", producer_id=9, producer_epoch=0, coordinator_epoch=0, timestamp_ms=1)
        )
        plog.append_as_leader(control, leader_epoch=0, is_from_client=False)
        plog.high_watermark = plog.log_end_offset
        got = await acquire(m)
        assert [(a.first_offset, a.last_offset) for a in got.acquired] == [(0, 1)]
        append(plog, 1)
        got = await acquire(m)
        assert [(a.first_offset, a.last_offset) for a in got.acquired] == [(3, 3)]  # 2, the marker, archived

    asyncio.run(main())


def test_record_limit_mode_acquires_exactly_max_records(plog):
    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        await acquire(m)
        append(plog, 10)
        got = await acquire(m, max_records=3, record_limit=True)
        assert [(a.first_offset, a.last_offset) for a in got.acquired] == [(0, 2)]
        got = await acquire(m, max_records=3)
        assert [(a.first_offset, a.last_offset) for a in got.acquired] == [(3, 9)]  # batch-optimized: whole batch

    asyncio.run(main())


def test_session_close_releases_the_members_records(plog):
    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        m.sessions.new_fetch_context(G, "m1", 0, [(TID, 0)])
        await acquire(m)
        append(plog, 1)
        await acquire(m)
        await m.close_session(G, "m1")
        assert m.sessions.get(G, "m1") is None
        got = await acquire(m, member="m2")
        assert [a.delivery_count for a in got.acquired] == [2]

    asyncio.run(main())


def read_committed_configs(reset="earliest"):
    config = types.SimpleNamespace(
        record_lock_duration_ms=30000,
        delivery_count_limit=5,
        auto_offset_reset=reset,
        isolation_level="read_committed",
    )
    return types.SimpleNamespace(share_config=lambda g: config)


def marker(plog, kind, producer_id=9):
    batch = bytearray(
        build_control_batch(kind, producer_id=producer_id, producer_epoch=0, coordinator_epoch=0, timestamp_ms=1)
    )
    plog.append_as_leader(batch, leader_epoch=0, is_from_client=False)
    plog.high_watermark = plog.log_end_offset


def test_read_committed_stops_at_the_last_stable_offset_and_archives_aborted_records(plog):
    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        m._group_configs = lambda: read_committed_configs()
        append(plog, 2, transactional=True, producer_id=9)  # 0-1, open transaction
        got = await acquire(m)
        assert got.acquired == []  # nothing below the last stable offset (0)
        marker(plog, "abort")  # 2
        append(plog, 1)  # 3
        got = await acquire(m)
        assert [(a.first_offset, a.last_offset) for a in got.acquired] == [(3, 3)]
        assert [r.value for r in iter_records(got.records)] == [b"v0"]

    asyncio.run(main())


def test_concurrent_first_uses_load_one_share_partition(plog):
    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        m._group_configs = lambda: read_committed_configs()
        append(plog, 1)
        append(plog, 1)
        a, b = await asyncio.gather(acquire(m, member="a", max_records=1), acquire(m, member="b", max_records=1))
        assert p.reads == 1
        assert sorted(r.first_offset for r in a.acquired + b.acquired) == [0, 1]

    asyncio.run(main())


def test_a_changed_group_config_applies_to_a_loaded_share_partition(plog):
    async def main():
        p = MemoryPersister()
        clock = Clock()
        m, _ = manager(plog, p, clock)
        lock = {"ms": 30000}
        config = types.SimpleNamespace(
            share_config=lambda g: types.SimpleNamespace(
                record_lock_duration_ms=lock["ms"],
                delivery_count_limit=5,
                auto_offset_reset="earliest",
                isolation_level="read_uncommitted",
            )
        )
        m._group_configs = lambda: config
        append(plog, 1)
        await acquire(m)
        assert m.loaded(G, TID, 0).next_lock_deadline() == pytest.approx(clock.now + 30)
        lock["ms"] = 5000
        append(plog, 1)
        await acquire(m)
        assert m.loaded(G, TID, 0).next_lock_deadline() == pytest.approx(clock.now + 5)

    asyncio.run(main())


def test_a_fetch_reads_only_the_batches_it_acquires(plog):
    async def main():
        p = MemoryPersister()
        m, _ = manager(plog, p)
        await acquire(m)
        for _ in range(10):
            append(plog, 2)  # 10 batches of 2 records
        got = await acquire(m, max_records=3)  # batch-optimized: 2 whole batches
        assert [(a.first_offset, a.last_offset) for a in got.acquired] == [(0, 3)]
        assert len(list(iter_records(got.records))) == 4

    asyncio.run(main())
