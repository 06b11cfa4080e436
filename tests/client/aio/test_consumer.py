"""``AIOConsumer`` against an in-process ``EmbeddedBroker``, mirroring the blocking consumer's tests: assign and poll,
``async for``, seek, auto.offset.reset, commit/committed, classic groups of two (range and cooperative-sticky) that
split the partitions and rebalance when one leaves, a KIP-848 group, groups shared with the blocking ``Consumer`` and
with confluent-kafka, read_committed skipping an aborted transaction, and a coroutine rebalance listener.

Each test runs its coroutine with ``asyncio.run`` (the repository has no pytest-asyncio); the broker rebalances at once
(group_initial_rebalance_delay_ms=0) and the members use short session and heartbeat intervals."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from broker.replication.replica_selector import RACK_AWARE_CLASS
from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, Consumer, KafkaClientError, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
from spark_kafkalog.client.aio import AIOAdminClient, AIOConsumer
from spark_kafkalog.client.consumer.group_membership import CommitFailedError
from spark_kafkalog.client.serialization import Deserializer, SerializationContext, SerializationError
from tests.waiting import wait_until_async

pytestmark = pytest.mark.integration

T = TypeVar("T")
SESSION_MS = 3000
HEARTBEAT_MS = 200
REBALANCE_S = 20


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:aioc-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b"),
        group_initial_rebalance_delay_ms=0,
        group_min_session_timeout_ms=500,
        group_consumer_heartbeat_interval_ms=200,
        group_consumer_session_timeout_ms=3000,
        offsets_topic_num_partitions=2,
        transaction_state_log_num_partitions=2,
    )
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def bootstrap(broker) -> str:
    return broker.bootstrap_servers


def new_topic(bootstrap: str, partitions: int, prefix: str = "aioc") -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


def produce(bootstrap: str, topic: str, n: int, partitions: int, start: int = 0) -> None:
    with Producer(bootstrap) as p:
        for i in range(start, start + n):
            p.send(topic, b"v%d" % i, key=b"k%d" % i, partition=i % partitions, headers=[("h", b"%d" % i)])
        p.flush()


def tps_of(topic: str, partitions: int) -> set[TopicPartition]:
    return {TopicPartition(topic, p) for p in range(partitions)}


async def poll_until(consumer: AIOConsumer, n: int, timeout_s: float = 15.0) -> list[Any]:
    out: list[Any] = []

    async def enough() -> bool:
        out.extend(await consumer.poll(timeout_ms=100))
        return len(out) >= n

    await wait_until_async(enough, timeout_s, f"{n} records polled")
    return out


def group_settings(group: str, **extra: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "group_id": group,
        "auto_offset_reset": "earliest",
        "session_timeout_ms": SESSION_MS,
        "heartbeat_interval_ms": HEARTBEAT_MS,
        "metadata_max_age_ms": 500,
        "auto_commit_interval_ms": 200,
    }
    settings.update(extra)
    return settings


class Member:
    """An AIOConsumer polling in a task of the running loop, keeping what it read."""

    def __init__(self, consumer: AIOConsumer) -> None:
        self.consumer = consumer
        self.values: list[Any] = []
        self.error: BaseException | None = None
        self._stop = False
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            while not self._stop:
                self.values += [r.value for r in await self.consumer.poll(timeout_ms=100)]
        except BaseException as e:  # reported by the test
            self.error = e

    @property
    def assignment(self) -> set[TopicPartition]:
        return set(self.consumer.assignment())

    async def stop(self) -> None:
        self._stop = True
        await self.task
        await self.consumer.close()
        assert self.error is None, self.error


def split(members: list[Any], tps: set[TopicPartition]) -> bool:
    shares = [m.assignment for m in members]
    return all(shares) and set().union(*shares) == tps and sum(len(s) for s in shares) == len(tps)


# manual assignment -------------------------------------------------------------------------------------------
def test_assign_and_poll_return_every_record_with_its_fields_and_async_for_iterates(bootstrap):
    topic = new_topic(bootstrap, 2)
    produce(bootstrap, topic, 10, 2)

    async def main() -> None:
        async with AIOConsumer(bootstrap, auto_offset_reset="earliest") as consumer:
            consumer.assign(sorted(tps_of(topic, 2)))
            records = await poll_until(consumer, 10)
            assert sorted(r.value for r in records) == sorted(b"v%d" % i for i in range(10))
            by_value = {r.value: r for r in records}
            r7 = by_value[b"v7"]
            assert (r7.topic, r7.partition, r7.offset, r7.key, r7.headers) == (topic, 1, 3, b"k7", [("h", b"7")])
            assert r7.timestamp > 0 and r7.timestamp_type == 0
            assert await consumer.position(TopicPartition(topic, 0)) == 5
            assert await consumer.poll(timeout_ms=0) == []
        # aiokafka's shape: topics positionally, bootstrap servers by keyword; async for until enough
        async with AIOConsumer(
            bootstrap_servers=bootstrap, auto_offset_reset="earliest", value_deserializer=bytes.decode
        ) as consumer:
            consumer.assign([TopicPartition(topic, 1)])
            seen = []
            async for record in consumer:
                seen.append(record.value)
                if len(seen) == 5:
                    break
            assert seen == [f"v{i}" for i in (1, 3, 5, 7, 9)]

    run(main())


def test_seek_seek_to_beginning_and_end_and_pause_resume(bootstrap):
    topic = new_topic(bootstrap, 2)
    produce(bootstrap, topic, 20, 2)
    p0, p1 = TopicPartition(topic, 0), TopicPartition(topic, 1)

    async def main() -> None:
        async with AIOConsumer(bootstrap, auto_offset_reset="earliest") as consumer:
            consumer.assign([p0, p1])
            consumer.seek(p0, 7)
            await consumer.seek_to_end([p1])
            assert await consumer.position(p1) == 10
            records = await poll_until(consumer, 3)
            assert [(r.partition, r.offset) for r in records] == [(0, 7), (0, 8), (0, 9)]
            await consumer.seek_to_beginning()
            consumer.pause([p0])
            assert consumer.paused() == {p0}
            records = await poll_until(consumer, 10)
            assert {r.partition for r in records} == {1} and [r.offset for r in records] == list(range(10))
            consumer.resume([p0])
            records = await poll_until(consumer, 10)
            assert [(r.partition, r.offset) for r in records] == [(0, i) for i in range(10)]
            with pytest.raises(KafkaClientError, match="not assigned"):
                consumer.seek(TopicPartition(topic, 5), 0)
            with pytest.raises(ValueError, match=">= 0"):
                consumer.seek(p0, -1)

    run(main())


def test_auto_offset_reset_latest_earliest_and_none(bootstrap):
    topic = new_topic(bootstrap, 1)
    produce(bootstrap, topic, 5, 1)
    tp = TopicPartition(topic, 0)

    async def main() -> None:
        async with AIOConsumer(bootstrap) as latest:  # Java's default: latest
            latest.assign([tp])
            assert await latest.poll(timeout_ms=200) == []
            assert await latest.position(tp) == 5
            await asyncio.to_thread(produce, bootstrap, topic, 2, 1, 5)
            assert [r.value for r in await poll_until(latest, 2)] == [b"v5", b"v6"]
        async with AIOConsumer(bootstrap, auto_offset_reset="earliest") as earliest:
            earliest.assign([tp])
            assert [r.offset for r in await poll_until(earliest, 7)] == list(range(7))
        async with AIOConsumer(bootstrap, auto_offset_reset="none") as none:
            none.assign([tp])
            with pytest.raises(KafkaClientError, match="auto.offset.reset=none"):
                await none.poll(timeout_ms=100)
            none.seek(tp, 6)
            assert [r.value for r in await poll_until(none, 1)] == [b"v6"]

    run(main())


def test_commit_and_committed_with_a_group_and_manual_assignment(bootstrap):
    topic = new_topic(bootstrap, 2)
    produce(bootstrap, topic, 10, 2)
    group = f"g-{uuid.uuid4().hex[:8]}"
    p0, p1 = TopicPartition(topic, 0), TopicPartition(topic, 1)

    async def main() -> None:
        async with AIOConsumer(bootstrap, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False) as c:
            c.assign([p0, p1])
            assert await c.committed([p0, p1]) == {p0: None, p1: None}
            await poll_until(c, 10)
            await c.commit()
            committed = await c.committed([p0, p1])
            assert {tp: om.offset for tp, om in committed.items() if om} == {p0: 5, p1: 5}
            await c.commit({p0: 2})
            assert await c.committed([p0]) == {p0: OffsetAndMetadata(2, "")}
            reported: list[tuple[Any, BaseException | None]] = []
            done = asyncio.Event()

            async def callback(offsets: Any, error: BaseException | None) -> None:
                reported.append((dict(offsets), error))
                done.set()

            await c.commit({p1: 4}, asynchronous=True, callback=callback)
            await asyncio.wait_for(done.wait(), 10)
            assert reported == [({p1: OffsetAndMetadata(4)}, None)]
            assert (await c.committed([p1]))[p1] == OffsetAndMetadata(4, "")
            await c.commit_async({p1: 5})  # no callback; close waits for it
        # a new consumer of the group starts at the committed offsets, and commits on close (auto commit)
        async with AIOConsumer(bootstrap, group_id=group, auto_offset_reset="latest") as c:
            c.assign([p0, p1])
            records = await poll_until(c, 3)
            assert [(r.partition, r.offset) for r in records] == [(0, 2), (0, 3), (0, 4)]
        async with AIOConsumer(bootstrap, group_id=group) as c:
            assert {tp: om.offset for tp, om in (await c.committed([p0, p1])).items() if om} == {p0: 5, p1: 5}
        with Consumer(bootstrap, group_id=group) as blocking:  # the same offsets as the blocking consumer reads
            assert {tp: om.offset for tp, om in blocking.committed([p0, p1]).items() if om} == {p0: 5, p1: 5}

    run(main())


# groups ------------------------------------------------------------------------------------------------------
async def two_members_share_then_one_leaves(bootstrap: str, settings: dict[str, Any]) -> AIOConsumer:
    """Two AIOConsumers of one group on a 4-partition topic with 20 records: they split the partitions and read each
    record once; one closes (leaving the group) and the other gets every partition and the 4 records produced then.
    Returns the survivor, open but no longer polled (the caller closes it)."""
    topic = await asyncio.to_thread(new_topic, bootstrap, 4)
    tps = tps_of(topic, 4)
    await asyncio.to_thread(produce, bootstrap, topic, 20, 4)
    a, b = AIOConsumer(bootstrap, **settings), AIOConsumer(bootstrap, **settings)
    await a.start()
    await b.start()
    a.subscribe([topic])
    b.subscribe(topic)
    members = [Member(a), Member(b)]

    def read(n: int) -> bool:
        return len(members[0].values) + len(members[1].values) >= n

    try:
        await wait_until_async(lambda: split(members, tps), REBALANCE_S, "the two members to split 4 partitions")
        await wait_until_async(lambda: read(20), 15, "20 records")
        metadata = a.group_metadata()
        assert metadata.generation_id > 0 and metadata.member_id  # the generation, or the KIP-848 member epoch
        await members[1].stop()  # leaves the group, committing its positions first
        await wait_until_async(lambda: members[0].assignment == tps, REBALANCE_S, "the survivor to own all")
        await asyncio.to_thread(produce, bootstrap, topic, 4, 4, 20)
        await wait_until_async(lambda: read(24), 15, "24 records")
        assert sorted(members[0].values + members[1].values) == sorted(b"v%d" % i for i in range(24))  # each once
        members[0]._stop = True
        await members[0].task
        return a
    except BaseException:
        for m in members:
            if not m.consumer._closed:
                await m.stop()
        raise


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_a_classic_group_of_two_splits_the_partitions_and_rebalances_when_one_leaves(bootstrap, strategy):
    settings = group_settings(f"g-{uuid.uuid4().hex[:8]}", partition_assignment_strategy=strategy)

    async def main() -> None:
        survivor = await two_members_share_then_one_leaves(bootstrap, settings)
        await survivor.close()

    run(main())


def test_a_kip848_group_of_two_splits_the_partitions_and_the_survivor_gets_them_all(bootstrap):
    settings = group_settings(f"g-{uuid.uuid4().hex[:8]}", group_protocol="consumer")
    for key in ("session_timeout_ms", "heartbeat_interval_ms"):  # the coordinator sets them under KIP-848
        settings.pop(key)

    async def main() -> None:
        survivor = await two_members_share_then_one_leaves(bootstrap, settings)
        try:
            tps = survivor.assignment()
            await survivor.commit()  # as the member, with its epoch
            committed = await survivor.committed(tps)
            assert {tp: om.offset for tp, om in committed.items() if om} == dict.fromkeys(tps, 6)
        finally:
            await survivor.close()

    run(main())


class ThreadPoller:
    """A blocking consumer polling on its own thread (``poll`` and ``assignment`` are the client's own)."""

    def __init__(self, poll: Any, assignment: Any, close: Any) -> None:
        self._poll, self._assignment, self._close = poll, assignment, close
        self.share: set[TopicPartition] = set()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._poll()
                self.share = {TopicPartition(tp.topic, tp.partition) for tp in self._assignment()}
        except BaseException as e:  # reported by the test
            self.error = e

    @property
    def assignment(self) -> set[TopicPartition]:
        return self.share

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=15)
        self._close()
        assert self.error is None, self.error


async def ours_and_theirs_split(ours: AIOConsumer, theirs: ThreadPoller, topic: str) -> None:
    """``ours`` subscribes to ``topic`` (4 partitions), in the group ``theirs`` polls in: they split the partitions.
    Both are closed afterwards."""
    await ours.start()
    ours.subscribe([topic])
    member = Member(ours)
    try:
        await wait_until_async(lambda: split([member, theirs], tps_of(topic, 4)), REBALANCE_S, "the two to split")
    finally:
        await asyncio.to_thread(theirs.stop)
        await member.stop()


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_group_shared_with_the_blocking_consumer(bootstrap, protocol):
    topic = new_topic(bootstrap, 4)
    settings = group_settings(f"g-{uuid.uuid4().hex[:8]}", group_protocol=protocol)
    if protocol == "consumer":  # the coordinator sets the session and heartbeat intervals under KIP-848
        settings = {k: v for k, v in settings.items() if k not in ("session_timeout_ms", "heartbeat_interval_ms")}

    async def main() -> None:
        blocking = Consumer(bootstrap, **settings)
        blocking.subscribe([topic])
        theirs = ThreadPoller(lambda: blocking.poll(timeout_ms=100), blocking.assignment, blocking.close)
        await ours_and_theirs_split(AIOConsumer(bootstrap, **settings), theirs, topic)

    run(main())


def test_a_classic_group_shared_with_confluent_kafka(bootstrap):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    topic = new_topic(bootstrap, 4)
    group = f"g-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        theirs_consumer = confluent_kafka.Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "session.timeout.ms": SESSION_MS,
                "heartbeat.interval.ms": HEARTBEAT_MS,
                "partition.assignment.strategy": "range",
                "auto.offset.reset": "earliest",
            }
        )
        theirs_consumer.subscribe([topic])
        theirs = ThreadPoller(lambda: theirs_consumer.poll(0.1), theirs_consumer.assignment, theirs_consumer.close)
        ours = AIOConsumer(bootstrap, **group_settings(group, partition_assignment_strategy="range"))
        await ours_and_theirs_split(ours, theirs, topic)

    run(main())


class AsyncListener:
    """A rebalance listener whose callbacks are coroutines; each commits or reads as a real one would."""

    def __init__(self, consumer: AIOConsumer) -> None:
        self.consumer = consumer
        self.calls: list[tuple[str, list[TopicPartition]]] = []

    async def on_partitions_assigned(self, partitions: list[TopicPartition]) -> None:
        await asyncio.sleep(0.01)  # really awaited: the record comes after the sleep
        self.calls.append(("assigned", sorted(partitions)))
        if partitions:
            await self.consumer.committed(partitions)

    async def on_partitions_revoked(self, partitions: list[TopicPartition]) -> None:
        await asyncio.sleep(0.01)
        self.calls.append(("revoked", sorted(partitions)))
        assert set(partitions) <= set(self.consumer.assignment())  # still assigned during the callback


def test_a_coroutine_rebalance_listener_is_awaited_in_order(bootstrap):
    topic = new_topic(bootstrap, 2)
    produce(bootstrap, topic, 4, 2)
    group = f"g-{uuid.uuid4().hex[:8]}"
    tps = sorted(tps_of(topic, 2))

    async def main() -> None:
        consumer = AIOConsumer(bootstrap, **group_settings(group))
        await consumer.start()
        listener = AsyncListener(consumer)
        consumer.subscribe([topic], listener=listener)
        await poll_until(consumer, 4)
        assert listener.calls == [("assigned", tps)]
        await consumer.close()  # revocation awaited, positions committed first (auto commit)
        assert listener.calls == [("assigned", tps), ("revoked", tps)]
        async with AIOConsumer(bootstrap, group_id=group) as other:
            assert {tp: om.offset for tp, om in (await other.committed(tps)).items() if om} == dict.fromkeys(tps, 2)

    run(main())


class Listener:
    """A plain (not coroutine) rebalance listener recording its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[TopicPartition]]] = []

    def on_partitions_revoked(self, partitions: list[TopicPartition]) -> None:
        self.calls.append(("revoked", sorted(partitions)))

    def on_partitions_assigned(self, partitions: list[TopicPartition]) -> None:
        self.calls.append(("assigned", sorted(partitions)))

    def on_partitions_lost(self, partitions: list[TopicPartition]) -> None:
        self.calls.append(("lost", sorted(partitions)))


def test_commit_as_member_and_commit_failed_after_the_poll_interval_expired(bootstrap):
    topic, group = new_topic(bootstrap, 2), f"g-{uuid.uuid4().hex[:8]}"
    tps = [TopicPartition(topic, p) for p in range(2)]
    produce(bootstrap, topic, 10, 2)
    listener = Listener()

    async def members() -> int:
        async with AIOAdminClient(bootstrap) as admin:
            return len((await admin.describe_groups([group]))[group].members)

    async def main() -> None:
        settings = group_settings(group, enable_auto_commit=False, max_poll_interval_ms=1500)
        async with AIOConsumer(bootstrap, **settings) as c:
            c.subscribe([topic], listener=listener)
            await poll_until(c, 10)
            await c.commit()
            assert {tp: om.offset for tp, om in (await c.committed(tps)).items() if om} == dict.fromkeys(tps, 5)
            assert await members() == 1
            # no poll for longer than max.poll.interval.ms: the heartbeat task leaves the group
            await wait_until_async(lambda: _no_members(members), 10, "the member to leave the group")
            with pytest.raises(CommitFailedError, match="rebalanc"):
                await c.commit({tps[0]: 1})
            assert {tp: om.offset for tp, om in (await c.committed(tps)).items() if om} == dict.fromkeys(tps, 5)
            await wait_until_async(lambda: _polled(c), REBALANCE_S, "the member to rejoin")
            assert set(c.assignment()) == set(tps)
            assert ("lost", tps) in listener.calls  # the partitions were lost, not revoked
            await c.commit({tps[0]: 3})
            assert (await c.committed([tps[0]]))[tps[0]] == OffsetAndMetadata(3, "")

    run(main())


async def _no_members(members: Any) -> bool:
    return await members() == 0


async def _polled(consumer: AIOConsumer) -> bool:
    await consumer.poll(timeout_ms=100)
    return bool(consumer.assignment())


def test_read_committed_skips_an_aborted_transaction(bootstrap):
    topic = new_topic(bootstrap, 1)
    tp = TopicPartition(topic, 0)
    with Producer(bootstrap, transactional_id=f"t-{uuid.uuid4().hex[:6]}", linger_ms=1) as producer:
        producer.init_transactions(30)
        producer.begin_transaction()
        for i in range(3):
            producer.send(topic, b"commit-%d" % i, partition=0)
        producer.commit_transaction(30)
        producer.begin_transaction()
        for i in range(4):
            producer.send(topic, b"abort-%d" % i, partition=0)
        producer.flush(30)
        producer.abort_transaction(30)
        producer.begin_transaction()
        producer.send(topic, b"commit-3", partition=0)
        producer.commit_transaction(30)

    async def main() -> None:
        async with AIOConsumer(bootstrap, auto_offset_reset="earliest", isolation_level="read_committed") as c:
            c.assign([tp])
            records = await poll_until(c, 4)
            assert [r.value for r in records] == [b"commit-0", b"commit-1", b"commit-2", b"commit-3"]
            assert await c.poll(timeout_ms=300) == []
            assert await c.position(tp) == 11  # past the last commit marker (3 + 1 + 4 + 1 + 1 + 1)
        async with AIOConsumer(bootstrap, auto_offset_reset="earliest") as c:  # read_uncommitted sees them all
            c.assign([tp])
            assert len(await poll_until(c, 8)) == 8

    run(main())


def test_subscribe_needs_a_group_and_excludes_assign(bootstrap):
    async def main() -> None:
        async with AIOConsumer(bootstrap) as consumer:
            with pytest.raises(KafkaClientError, match="group.id"):
                consumer.subscribe(["t"])
        async with AIOConsumer(bootstrap, group_id="g") as consumer:
            consumer.assign([TopicPartition("t", 0)])
            with pytest.raises(KafkaClientError, match="mutually exclusive"):
                consumer.subscribe(["t"])
        consumer = AIOConsumer(bootstrap)
        await consumer.close()
        with pytest.raises(KafkaClientError, match="closed"):
            await consumer.poll()

    run(main())


def test_a_pattern_subscription_picks_up_a_topic_created_later(bootstrap):
    prefix = f"pat{uuid.uuid4().hex[:6]}"
    first = new_topic(bootstrap, 1, prefix)
    group = f"g-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        async with AIOConsumer(bootstrap, **group_settings(group)) as consumer:
            consumer.subscribe(pattern=f"{prefix}-.*")
            member = Member(consumer)
            await wait_until_async(lambda: member.assignment == tps_of(first, 1), REBALANCE_S, "the first topic")
            later = await asyncio.to_thread(new_topic, bootstrap, 2, prefix)
            await asyncio.to_thread(produce, bootstrap, later, 2, 2)
            want = tps_of(first, 1) | tps_of(later, 2)
            await wait_until_async(lambda: member.assignment == want, REBALANCE_S, "the topic created later")
            await wait_until_async(lambda: len(member.values) == 2, 10, "its records")
            assert consumer.subscription() == {first, later}
            member._stop = True
            await member.task

    run(main())


def test_records_before_one_the_deserializer_refuses_come_first_then_the_error(bootstrap):
    topic = new_topic(bootstrap, 1)
    produce(bootstrap, topic, 5, 1)

    class Refusing(Deserializer):
        def __call__(self, value: bytes | None, ctx: SerializationContext | None = None) -> Any:
            if value == b"v3":
                raise ValueError("not this one")
            return value

    async def main() -> None:
        async with AIOConsumer(bootstrap, auto_offset_reset="earliest", value_deserializer=Refusing()) as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            assert [r.value for r in await poll_until(consumer, 3)] == [b"v0", b"v1", b"v2"]
            with pytest.raises(SerializationError, match="not this one"):
                await consumer.poll(timeout_ms=1000)
            consumer.seek(TopicPartition(topic, 0), 4)
            assert [r.value for r in await poll_until(consumer, 1)] == [b"v4"]

    run(main())


def test_a_static_member_that_closes_keeps_its_partitions_until_it_returns(bootstrap):
    topic = new_topic(bootstrap, 2)
    tps = tps_of(topic, 2)
    group = f"g-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        a = AIOConsumer(bootstrap, **group_settings(group, group_instance_id="a", session_timeout_ms=10000))
        b = AIOConsumer(bootstrap, **group_settings(group))
        await a.start()
        await b.start()
        a.subscribe([topic])
        b.subscribe([topic])
        members = [Member(a), Member(b)]
        try:
            await wait_until_async(lambda: split(members, tps), REBALANCE_S, "the two members to split")
            share = members[0].assignment
            await members[0].stop()  # static: no LeaveGroup, the coordinator keeps its share for the session
            await asyncio.sleep(1.0)
            assert members[1].assignment == tps - share
            again = AIOConsumer(bootstrap, **group_settings(group, group_instance_id="a", session_timeout_ms=10000))
            await again.start()
            again.subscribe([topic])
            members[0] = Member(again)
            await wait_until_async(lambda: members[0].assignment == share, REBALANCE_S, "its share back")
        finally:
            for m in members:
                if not m.consumer._closed:
                    await m.stop()

    run(main())


def test_with_client_rack_the_partition_is_read_from_the_follower_in_its_rack(tmp_path):
    registry = f"memory:aioc-rack-{uuid.uuid4().hex[:8]}"
    brokers = [
        EmbeddedBroker(
            i,
            zookeeper_connect=registry,
            log_dir=tmp_path / f"b{i}",
            broker_rack=rack,
            replica_selector_class=RACK_AWARE_CLASS,
            offsets_topic_replication_factor=1,
        ).start()
        for i, rack in enumerate(["rack-a", "rack-b"])
    ]
    try:
        bootstrap = brokers[0].bootstrap_servers
        topic = f"racked-{uuid.uuid4().hex[:6]}"
        with AdminClient(bootstrap) as admin:
            admin.create_topics([NewTopic(topic, replica_assignment={0: [0, 1]})])
        with Producer(bootstrap, acks=-1) as p:
            for i in range(5):
                p.send(topic, b"v%d" % i, partition=0)
            p.flush()
        tp = TopicPartition(topic, 0)

        async def main() -> None:
            async with AIOConsumer(bootstrap, auto_offset_reset="earliest", client_rack="rack-b") as consumer:
                consumer.assign([tp])
                assert [r.value for r in await poll_until(consumer, 5, 30)] == [b"v%d" % i for i in range(5)]
                assert consumer.client.read_replicas.get(tp) == 1  # the leader (0) named rack-b's follower

        run(main())
    finally:
        for b in brokers:
            b.stop()


def test_topics_given_positionally_are_subscribed_by_start_as_aiokafka(bootstrap):
    topic = new_topic(bootstrap, 2)
    produce(bootstrap, topic, 6, 2)
    group = f"g-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        async with AIOConsumer(topic, bootstrap_servers=bootstrap, **group_settings(group)) as consumer:
            assert consumer.subscription() == {topic}
            assert sorted(r.value for r in await poll_until(consumer, 6)) == sorted(b"v%d" % i for i in range(6))
            assert set(consumer.assignment()) == tps_of(topic, 2)
        with pytest.raises(KafkaClientError, match="group.id"):
            async with AIOConsumer(topic, bootstrap_servers=bootstrap):
                pass

    run(main())


def test_fetch_errors_and_a_dropped_connection_are_retried_and_one_fetch_serves_every_partition(broker, bootstrap):
    topic = new_topic(bootstrap, 4)
    produce(bootstrap, topic, 8, 4)

    async def main() -> None:
        async with AIOConsumer(bootstrap, auto_offset_reset="earliest") as consumer:
            consumer.assign(sorted(tps_of(topic, 4)))
            await consumer.seek_to_beginning()
            with broker.faults.track_requests() as requests:
                records: list[Any] = await consumer.poll(timeout_ms=0)
            assert len(records) == 8 and requests.count("Fetch") == 1  # one request for the 4 partitions
            await asyncio.to_thread(produce, bootstrap, topic, 8, 4, 8)
            with broker.faults.push_errors("Fetch", ["NOT_LEADER_OR_FOLLOWER", "UNKNOWN_TOPIC_ID"], topic=topic) as inj:
                records = await poll_until(consumer, 8)
                assert inj.remaining == 0
            assert sorted(r.value for r in records) == sorted(b"v%d" % i for i in range(8, 16))
            await asyncio.to_thread(produce, bootstrap, topic, 4, 4, 16)
            assert await asyncio.to_thread(broker.faults.drop_connections) >= 1
            records = await poll_until(consumer, 4)
            assert sorted(r.value for r in records) == sorted(b"v%d" % i for i in range(16, 20))

    run(main())


def test_a_poll_cancelled_while_joingroup_is_in_flight_joins_again_at_the_next_poll(broker, bootstrap):
    topic = new_topic(bootstrap, 2)
    produce(bootstrap, topic, 4, 2)
    group = f"g-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        async with AIOConsumer(bootstrap, **group_settings(group)) as consumer:
            consumer.subscribe([topic])
            with broker.faults.set_rtt(600, api="JoinGroup"), broker.faults.track_requests() as requests:
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(consumer.poll(timeout_ms=5000), 0.3)
                assert requests.count("JoinGroup") == 1  # cancelled with it in flight
            assert [r.value for r in sorted(await poll_until(consumer, 4), key=lambda r: r.value)] == [
                b"v0",
                b"v1",
                b"v2",
                b"v3",
            ]
            assert set(consumer.assignment()) == tps_of(topic, 2)

    run(main())


def test_a_poll_cancelled_inside_a_coroutine_listener_still_gives_up_the_revoked_partitions(bootstrap):
    topic = new_topic(bootstrap, 2)
    tps = tps_of(topic, 2)
    group = f"g-{uuid.uuid4().hex[:8]}"

    class SlowRevocation:
        def __init__(self) -> None:
            self.revocations = 0

        async def on_partitions_revoked(self, partitions: list[TopicPartition]) -> None:
            self.revocations += 1
            if self.revocations == 1:
                await asyncio.sleep(10)

    async def main() -> None:
        settings = group_settings(group, partition_assignment_strategy="range")
        async with AIOConsumer(bootstrap, **settings) as a, AIOConsumer(bootstrap, **settings) as b:
            listener = SlowRevocation()
            a.subscribe([topic], listener=listener)
            await wait_until_async(lambda: _polled(a), REBALANCE_S, "the first member to own both partitions")
            assert set(a.assignment()) == tps
            b.subscribe([topic])
            other = Member(b)  # joining: the first member revokes everything (eager) before it rejoins

            async def keep_polling() -> None:
                while True:
                    await a.poll(timeout_ms=100)

            with pytest.raises(TimeoutError):
                await asyncio.wait_for(keep_polling(), 3)
            assert listener.revocations == 1  # cancelled inside the callback
            assert a.assignment() == []  # the revoked partitions left the assignment all the same
            first = Member(a)
            await wait_until_async(lambda: split([first, other], tps), REBALANCE_S, "the two members to split")
            first._stop = other._stop = True
            await asyncio.gather(first.task, other.task)

    run(main())
