"""The controller against an in-process registry: election from the ISR, unclean election, controlled
shutdown and preferred-replica election. Each "broker" is a registry view holding ``/brokers/ids/<id>``;
the controller is the real ``Controller`` on an event loop, with the registry calls in a thread pool."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging

from broker.cluster.controller import Controller
from broker.cluster.memory_registry import MemoryRegistryStore
from broker.cluster.registry import BrokerInfo, PartitionState, TopicAssignment
from broker.config import BrokerConfig
from broker.metadata.cache import MetadataCache
from tests.waiting import stays_true_async, wait_until_async


class Cluster:
    """``new_registry()``: a started registry of the shared store (default: a new in-process store)."""

    def __init__(self, broker_ids, new_registry=None, **config):
        if new_registry is None:
            store = MemoryRegistryStore()

            def new_registry():
                view = store.view()
                view.start()
                return view

        self.new_registry = new_registry
        self.pool = concurrent.futures.ThreadPoolExecutor(4)
        self.views = {}
        for b in broker_ids:
            self.start_broker(b)
        props = {"broker.id": "0", "log.dirs": "/nonexistent", "zookeeper.connect": "memory:x"}
        props.update({k.replace("_", "."): str(v).lower() for k, v in config.items()})
        self.config = BrokerConfig.from_properties(props)
        self.admin = new_registry()
        self.controller: Controller | None = None

    def start_broker(self, b):
        v = self.new_registry()
        v.register_broker(BrokerInfo(b, "127.0.0.1", 9000 + b))
        self.views[b] = v

    def kill(self, b):
        self.views.pop(b).close()

    async def run_blocking(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.pool, functools.partial(fn, *args))

    async def start_controller(self):
        self.controller = Controller(0, self.admin, self.run_blocking, self.config, metadata=MetadataCache(0))
        self.controller.start()
        await wait_until_async(lambda: self.controller.is_active, 5, "the controller to become active")

    def state(self, topic, p=0) -> PartitionState | None:
        return self.admin.partition_state(topic, p)

    def set_isr(self, topic, isr, p=0):
        cur = self.state(topic, p)
        self.admin.update_partition_state(
            topic, p, PartitionState(cur.leader, cur.leader_epoch, tuple(isr), cur.controller_epoch, cur.zk_version)
        )

    async def close(self):
        if self.controller is not None:
            await self.controller.stop()
        for v in list(self.views.values()) + [self.admin]:
            v.close()
        self.pool.shutdown()


def run(brokers, test, new_registry=None, **config):
    async def main():
        c = Cluster(brokers, new_registry, **config)
        try:
            await c.start_controller()
            await test(c)
        finally:
            await c.close()

    asyncio.run(main())


def test_new_partitions_get_the_first_live_replica_and_every_live_replica_in_the_isr():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (2, 1, 3), 1: (3, 2, 1)}), {})
        await wait_until_async(lambda: c.state("t", 1) is not None, 5, "t-1's state")
        assert (c.state("t", 0).leader, c.state("t", 0).isr) == (2, (2, 1))
        assert (c.state("t", 1).leader, c.state("t", 1).isr) == (2, (2, 1))

    run([1, 2], test)


def test_leader_loss_elects_the_first_live_isr_replica_and_shrinks_the_isr():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2, 3)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        c.set_isr("t", (1, 3))  # 2 is out of sync: skipped although it comes first
        c.kill(1)
        await wait_until_async(lambda: c.state("t").leader != 1, 5, "a leader of t other than 1")
        st = c.state("t")
        assert (st.leader, st.isr, st.leader_epoch) == (3, (3,), 1)

    run([1, 2, 3], test)


def test_a_dead_follower_leaves_the_isr_at_once():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2, 3)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        c.kill(2)
        await wait_until_async(lambda: c.state("t").isr == (1, 3), 5, "t's ISR (1, 3)")
        st = c.state("t")
        assert (st.leader, st.leader_epoch) == (1, 1)  # the leader stays; a new leader epoch as in Kafka

    run([1, 2, 3], test)


def test_without_a_live_isr_member_the_partition_goes_offline_until_one_returns():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        c.set_isr("t", (1,))
        c.kill(1)
        await wait_until_async(lambda: c.state("t").leader == -1, 5, "t to go offline")
        assert c.state("t").isr == (1,)
        # 2 is alive but out of sync: no unclean election by default
        await stays_true_async(lambda: c.state("t").leader == -1, 0.1, "t offline")
        c.start_broker(1)
        await wait_until_async(lambda: c.state("t").leader == 1, 5, "broker 1 to lead t")
        assert c.state("t").isr == (1,)

    run([1, 2], test)


def test_unclean_election_enabled_by_the_broker_elects_an_out_of_sync_replica():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        c.set_isr("t", (1,))
        c.kill(1)
        await wait_until_async(lambda: c.state("t").leader == 2, 5, "broker 2 to lead t")
        assert c.state("t").isr == (2,)

    run([1, 2], test, unclean_leader_election_enable=True)


def test_unclean_election_enabled_by_a_topic_override():
    async def test(c):
        c.admin.create_topic(TopicAssignment("clean", {0: (1, 2)}), {})
        c.admin.create_topic(TopicAssignment("dirty", {0: (1, 2)}), {"unclean.leader.election.enable": "true"})
        await wait_until_async(
            lambda: c.state("clean") is not None and c.state("dirty") is not None, 5, "the states of clean and dirty"
        )
        c.set_isr("clean", (1,))
        c.set_isr("dirty", (1,))
        c.kill(1)
        await wait_until_async(lambda: c.state("dirty").leader == 2, 5, "broker 2 to lead dirty")
        assert c.state("clean").leader == -1

    run([1, 2], test)


def test_controlled_shutdown_moves_leadership_to_another_isr_member():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2, 3), 1: (2, 1, 3), 2: (1, 3, 2)}), {})
        c.admin.create_topic(TopicAssignment("single", {0: (1,)}), {})
        await wait_until_async(
            lambda: c.state("t", 2) is not None and c.state("single") is not None, 5, "the states of t-2 and single"
        )
        c.set_isr("t", (1, 3), p=2)
        remaining = await c.controller.controlled_shutdown(1)
        assert remaining == []  # "single" has replication factor 1: nowhere to move, not reported
        assert (c.state("t", 0).leader, c.state("t", 0).isr) == (2, (2, 3))
        assert (c.state("t", 1).leader, c.state("t", 1).isr) == (2, (2, 3))  # follower 1 left the ISR
        assert (c.state("t", 2).leader, c.state("t", 2).isr) == (3, (3,))
        assert c.state("single").leader == 1
        c.kill(1)  # its partitions were moved: the departure changes nothing but the offline RF-1 one
        await wait_until_async(lambda: c.state("single").leader == -1, 5, "single to go offline")
        assert c.state("t", 0).leader == 2 and c.state("t", 0).leader_epoch == 1

    run([1, 2, 3], test)


def test_controlled_shutdown_reports_partitions_without_another_isr_member():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        c.set_isr("t", (1,))
        assert await c.controller.controlled_shutdown(1) == [("t", 0)]
        assert c.state("t").leader == 1

    run([1, 2], test)


def test_preferred_replica_election_moves_leadership_back():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2), 1: (2, 1)}), {})
        await wait_until_async(lambda: c.state("t", 1) is not None, 5, "t-1's state")
        c.kill(1)
        await wait_until_async(lambda: c.state("t", 0).leader == 2, 5, "broker 2 to lead t-0")
        c.start_broker(1)
        # back, but not in the ISR: not preferred yet
        await stays_true_async(lambda: c.state("t", 0).leader == 2, 0.2, "broker 2 leading t-0")
        c.set_isr("t", (2, 1))  # the leader let it rejoin
        await wait_until_async(lambda: c.state("t", 0).leader == 1, 5, "broker 1 to lead t-0")
        assert c.state("t", 0).isr == (2, 1) and c.state("t", 1).leader == 2

    run([1, 2], test, leader_imbalance_check_interval_seconds=1)


def test_no_preferred_replica_election_when_disabled():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        c.kill(1)
        await wait_until_async(lambda: c.state("t").leader == 2, 5, "broker 2 to lead t")
        c.start_broker(1)
        c.set_isr("t", (2, 1))
        await stays_true_async(lambda: c.state("t").leader == 2, 1.5, "broker 2 leading t")

    run([1, 2], test, leader_imbalance_check_interval_seconds=1, auto_leader_rebalance_enable=False)


def test_a_clean_stop_moves_leadership_through_controlled_shutdown(tmp_path_factory, caplog):
    """Real brokers: the stopping broker asks the controller over ControlledShutdown (or its own controller
    when it is the controller); its partitions change leader before it leaves, never passing through -1."""
    from spark_kafkalog.protocol import ApiKey, ErrorCode
    from tests.waiting import wait_until

    from ..conftest import start_brokers
    from ..wire import Wire

    caplog.set_level(logging.INFO, logger="kafkalog.controller")
    brokers = start_brokers(3, tmp_path_factory, controlled_shutdown_retry_backoff_ms=100)
    try:
        reg = brokers[0].broker.registry.store.view()  # outlives the brokers
        reg.start()
        reg.create_topic(TopicAssignment("cs", {0: (0, 1, 2), 1: (1, 2, 0), 2: (2, 0, 1)}), {})
        wait_until(lambda: len(reg.partition_states("cs")) == 3)
        controller = reg.controller_id()
        others = [b for b in brokers if b.broker.broker_id != controller]
        with Wire(others[0].bootstrap_servers) as w:
            resp = w.call(ApiKey.CONTROLLED_SHUTDOWN, 3, broker_id=others[1].broker.broker_id, broker_epoch=-1)
        assert resp.error_code == ErrorCode.NOT_CONTROLLER
        seen: list[PartitionState] = []
        sub = reg.on_partition_states_changed("cs", lambda states: seen.extend(states.values()))
        for victim in (others[0], next(b for b in brokers if b.broker.broker_id == controller)):
            vid = victim.broker.broker_id
            led = [p for p, st in reg.partition_states("cs").items() if st.leader == vid]
            assert led, f"broker {vid} leads nothing"
            victim.stop()
            states = reg.partition_states("cs")
            for p in led:
                assert states[p].leader not in (vid, -1), states[p]
            assert f"broker {vid}: controlled shutdown done" in caplog.text
        wait_until(lambda: reg.controller_id() is not None)
        sub.cancel()
        assert all(st.leader != -1 for st in seen)
        reg.close()
    finally:
        for b in brokers:
            b.stop()


def test_the_last_replica_stops_without_waiting_for_retries(tmp_path_factory, caplog):
    import time

    from tests.waiting import wait_until

    from ..conftest import start_brokers

    caplog.set_level(logging.INFO, logger="kafkalog.controller")
    (b,) = start_brokers(1, tmp_path_factory)  # controlled.shutdown.retry.backoff.ms: the default 5 s
    reg = b.broker.registry
    reg.create_topic(TopicAssignment("last", {0: (0, 7)}), {})  # broker 7 never starts
    wait_until(lambda: reg.partition_state("last", 0) is not None)
    started = time.monotonic()
    b.stop()
    assert time.monotonic() - started < 4
    assert "broker 0: controlled shutdown done; 1 partitions stay led here" in caplog.text


def test_a_returning_broker_leads_its_preferred_partitions_again_once_in_sync_without_waiting_for_the_timer():
    """leader.imbalance.check.interval.seconds keeps Kafka's 300 s: only the (re)registration can trigger it."""

    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2, 3), 1: (2, 3, 1), 2: (3, 1, 2), 3: (1, 3, 2)}), {})
        c.admin.create_topic(TopicAssignment("u", {0: (1, 2, 3)}), {})
        await wait_until_async(
            lambda: c.state("t", 3) is not None and c.state("u") is not None, 5, "the states of t-3 and u"
        )
        c.kill(1)
        await wait_until_async(
            lambda: c.state("t", 0).leader == 2 and c.state("t", 3).leader == 3 and c.state("u").leader == 2,
            5,
            "leaders 2, 3 and 2 of t-0, t-3 and u",
        )
        c.start_broker(1)
        for topic, p in (("t", 0), ("t", 2), ("t", 3), ("u", 0)):  # the leaders let it rejoin, one at a time
            c.set_isr(topic, (*c.state(topic, p).isr, 1), p=p)
        await wait_until_async(
            lambda: c.state("t", 0).leader == 1 and c.state("t", 3).leader == 1 and c.state("u").leader == 1,
            5,
            "broker 1 to lead t-0, t-3 and u",
        )
        assert [c.state("t", p).leader for p in (1, 2)] == [2, 3]

    run([1, 2, 3], test)


def test_a_restarted_broker_leads_its_preferred_partitions_again_within_seconds(tmp_path_factory):
    """Real brokers, Kafka's default 300 s imbalance check interval: the restarted broker catches up, its
    leaders add it to the ISR, and the controller gives it back its preferred leaderships."""
    from broker.server import EmbeddedBroker
    from tests.waiting import wait_until

    from ..conftest import start_brokers

    brokers = start_brokers(3, tmp_path_factory, controlled_shutdown_retry_backoff_ms=100)
    try:
        reg = brokers[0].broker.registry.store.view()
        reg.start()
        reg.create_topic(TopicAssignment("pref", {0: (0, 1, 2), 1: (1, 2, 0), 2: (2, 0, 1), 3: (1, 0, 2)}), {})
        wait_until(lambda: {p: st.leader for p, st in reg.partition_states("pref").items()} == {0: 0, 1: 1, 2: 2, 3: 1})
        old = brokers[1]
        old.stop()
        assert {reg.partition_state("pref", p).leader for p in (1, 3)} <= {0, 2}  # moved by the controlled shutdown
        brokers[1] = EmbeddedBroker(
            1, zookeeper_connect=old.config.zookeeper_connect, log_dir=old.config.log_dirs[0],
            controlled_shutdown_retry_backoff_ms=100,
        ).start()  # fmt: skip
        wait_until(
            lambda: {p: reg.partition_state("pref", p).leader for p in range(4)} == {0: 0, 1: 1, 2: 2, 3: 1},
            timeout_s=30,
            what="broker 1 leading partitions 1 and 3 again",
        )
        assert 1 in reg.partition_state("pref", 1).isr
        reg.close()
    finally:
        for b in brokers:
            b.stop()
