"""The controller: one broker at a time elects partition leaders and completes topic deletions.

Every broker runs a ``Controller``; it competes for the ephemeral ``/controller`` whenever nobody holds it
(at start-up and when the holder's session ends). The winner, for the lifetime of its controller epoch:

* creates the state of every partition that has none (a new topic or new partitions): leader = the first
  live replica in assignment order, leader epoch 0, ISR = the live replicas;
* when a leader's broker leaves, elects the first live replica in assignment order that is in the ISR and
  shrinks the ISR to its live members (``election.offline_election``); when a follower's broker leaves, the
  live leader's ISR loses it (``election.dead_followers_removed``, a new leader epoch as in Kafka). With no live ISR member the leader
  becomes -1, "offline", and the ISR keeps its last members, unless ``unclean.leader.election.enable`` (the
  topic's override, else the broker's) allows a live replica outside the ISR, logged as a warning. When a
  broker returns, offline partitions whose ISR holds it get it as leader; every change bumps the leader epoch;
* controlled shutdown (``controlled_shutdown``, served as ControlledShutdown, key 7): moves the leadership
  of every partition the stopping broker leads to another live ISR member and drops the broker from the
  ISRs it follows in; the answer lists the replicated partitions it still leads (the broker retries);
* preferred-replica election every ``leader.imbalance.check.interval.seconds`` with
  ``auto.leader.rebalance.enable``: for each broker whose share of partitions it is preferred for (first
  replica) but does not lead exceeds ``leader.imbalance.per.broker.percentage``, leadership moves back to it
  where it is alive and in the ISR. The same check also runs as soon as a broker that (re)registered is back in
  the ISR of every partition it is preferred for (``broker.cluster.returning_brokers``), so a restarted broker
  leads again within moments rather than at the next tick;
* removes topics marked under ``/admin/delete_topics``;
* leader elections on request (``elect_leaders``, served as ElectLeaders): preferred or unclean, see
  ``broker.cluster.controller_elections``;
* partition reassignment (``alter_reassignments`` / ``list_reassignments``, served as
  AlterPartitionReassignments and ListPartitionReassignments): see ``broker.cluster.controller_reassignment``.
  Partitions being reassigned are left out of the preferred-replica election.

Figures for ``broker.metrics``: ``is_active`` and ``offline_partition_count`` (partitions without a live
leader in the broker's metadata cache, 0 on a broker that is not the active controller, as Kafka reports them).

All writes are compare-and-set on the state node's version and carry the controller epoch. Registry
events are queued onto the broker's event loop and handled in order by one task; the blocking registry
calls run in the broker's executor.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from . import election
from .controller_elections import ElectionResult, Elections, ElectionType
from .controller_reassignment import PartitionResult, Reassignments
from .registry import ClusterRegistry, NoSuchTopicError, PartitionState, RegistryError, StaleStateError, TopicAssignment
from .returning_brokers import ReturningBrokers

if TYPE_CHECKING:
    from broker.metadata.cache import MetadataCache

log = logging.getLogger("kafkalog.controller")


class Controller:
    """``run_blocking(fn, *args)`` runs a blocking registry call off the event loop (the broker's pool);
    ``config``: the broker's ``BrokerConfig`` (election and rebalance settings; None: Kafka's defaults);
    ``metadata``: the broker's metadata cache (the partition states ``offline_partition_count`` reads)."""

    def __init__(
        self,
        broker_id: int,
        registry: ClusterRegistry,
        run_blocking: Callable[..., Awaitable[Any]],
        config: Any = None,
        *,
        metadata: MetadataCache,
    ) -> None:
        self.broker_id = broker_id
        self.registry = registry
        self.metadata = metadata
        self.run_blocking = run_blocking
        setting = (lambda key, default: default) if config is None else (lambda key, default: config[key])
        self.unclean_default: bool = setting("unclean.leader.election.enable", False)
        self.auto_rebalance: bool = setting("auto.leader.rebalance.enable", True)
        self.rebalance_interval_s: float = setting("leader.imbalance.check.interval.seconds", 300)
        self.imbalance_percentage: float = setting("leader.imbalance.per.broker.percentage", 10)
        self._shutting_down: set[int] = set()
        self._rebalance_task: asyncio.Task | None = None
        self.epoch: int | None = None
        self._events: asyncio.Queue = asyncio.Queue()
        self._subs: list[Any] = []
        self._controller_sub: Any = None
        self._task: asyncio.Task | None = None
        self._live: dict[int, Any] = {}
        self._topics: dict[str, TopicAssignment] = {}
        self._deletions: list[str] = []
        self.reassignments = Reassignments(self)
        self.returning = ReturningBrokers(self)
        self.elections = Elections(self)
        self._pending: set[asyncio.Future] = set()

    # what ``Reassignments`` sees of the controller (its task only)
    @property
    def topics(self) -> dict[str, TopicAssignment]:
        return self._topics

    @property
    def deletions(self) -> list[str]:
        return self._deletions

    @property
    def live(self) -> dict[int, Any]:
        return self._live

    def live_not_stopping(self) -> set[int]:
        """Live brokers not in a controlled shutdown."""
        return {b for b in self._live if b not in self._shutting_down}

    def post_states(self, topic: str, kind: str = "states") -> Callable[[Any], None]:
        """A registry callback queueing ``topic``'s partition states onto the controller's task, as a ``kind``
        event ("states": reassignments; "preferred_states": ``returning``)."""
        post = self._poster(asyncio.get_running_loop())(kind)
        return lambda states: post((topic, states))

    @property
    def is_active(self) -> bool:
        """This broker holds ``/controller`` now."""
        return self.epoch is not None

    def offline_partition_count(self) -> int:
        """Partitions without a live leader (none, or one whose broker is not registered) as the metadata
        cache shows them; 0 unless this broker is the active controller (Kafka's OfflinePartitionsCount)."""
        if not self.is_active:
            return 0
        live = self.metadata.brokers
        return sum(
            1
            for t in list(self.metadata.topics.values())
            for p in t.replicas
            if t.leader(p) < 0 or t.leader(p) not in live
        )

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._run(), name="controller")
        post = self._poster(loop)
        self._controller_sub = self.registry.on_controller_changed(post("controller"))

    async def stop(self) -> None:
        if self._controller_sub is not None:
            self._controller_sub.cancel()
        self._unsubscribe()
        self._stop_rebalancing()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        for done in self._pending:  # requests queued or interrupted: "not the controller"
            if not done.done():
                done.set_result(None)
        self._pending.clear()
        if self.epoch is not None:
            self.epoch = None
            try:
                await self.run_blocking(self.registry.resign_controller)
            except RegistryError:
                pass

    def _poster(self, loop: asyncio.AbstractEventLoop):
        def make(kind: str):
            def callback(value: Any) -> None:
                try:
                    loop.call_soon_threadsafe(self._events.put_nowait, (kind, value))
                except RuntimeError:  # the loop is closed: the broker is gone
                    pass

            return callback

        return make

    def _unsubscribe(self) -> None:
        for sub in self._subs:
            sub.cancel()
        self._subs = []
        self.reassignments.stop()
        self.returning.stop()

    def _stop_rebalancing(self) -> None:
        if self._rebalance_task is not None:
            self._rebalance_task.cancel()
            self._rebalance_task = None

    async def _rebalance_timer(self) -> None:
        while True:
            await asyncio.sleep(self.rebalance_interval_s)
            self._events.put_nowait(("rebalance", None))

    async def controlled_shutdown(self, broker_id: int) -> list[tuple[str, int]] | None:
        """Move leadership away from ``broker_id`` (see the module docstring); runs on the controller's task.

        Returns the replicated partitions the broker still leads (empty: it may stop), or None when this
        broker is not the controller.
        """
        return await self._request("shutdown", broker_id)

    async def alter_reassignments(
        self, requests: dict[tuple[str, int], tuple[int, ...] | None]
    ) -> dict[tuple[str, int], PartitionResult] | None:
        """Start (target replicas) or cancel (None) partition reassignments; None when not the controller."""
        return await self._request("reassign", requests)

    async def list_reassignments(self, wanted: dict[str, list[int]] | None) -> list | None:
        """Ongoing reassignments ``[(topic, partition, ReplicaAssignment)]`` of ``{topic: partitions}`` (all
        when None); None when not the controller."""
        return await self._request("list", wanted)

    async def elect_leaders(
        self, election_type: ElectionType, partitions: list[tuple[str, int]] | None
    ) -> dict[tuple[str, int], ElectionResult] | None:
        """Elect the leaders of ``partitions`` (every partition when None; see ``controller_elections``);
        ``{(topic, partition): (error code, message)}``, or None when this broker is not the controller."""
        return await self._request("elect", (election_type, partitions))

    async def write_election(self, topic: str, p: int, state: PartitionState, chosen: election.Election) -> bool:
        """Compare-and-set ``chosen`` over ``state`` with a new leader epoch (controller's task only); False when
        the state moved meanwhile."""
        return await self._write(topic, p, state, chosen)

    async def _request(self, kind: str, value: Any) -> Any:
        if self._task is None or self.epoch is None:
            return None
        done = asyncio.get_running_loop().create_future()
        self._pending.add(done)
        done.add_done_callback(self._pending.discard)
        self._events.put_nowait((kind, (value, done)))
        return await done

    async def _run(self) -> None:
        while True:
            kind, value = await self._events.get()
            try:
                await self._handle(kind, value)
            except asyncio.CancelledError:
                raise
            except RegistryError as e:
                log.warning("controller: %s event failed (%s); retrying on the next change", kind, e)
            except Exception:
                log.exception("controller: %s event failed", kind)

    async def _handle(self, kind: str, value: Any) -> None:
        if kind in ("shutdown", "reassign", "list", "elect"):
            arg, done = value
            try:
                result = None if self.epoch is None else await self._answer(kind, arg)
            except BaseException as e:
                if not done.done():
                    done.set_exception(e)
                raise
            if not done.done():
                done.set_result(result)
            return
        if kind == "controller":
            if value is None:
                epoch = await self.run_blocking(self.registry.try_become_controller, self.broker_id)
                if epoch is not None:
                    await self._become_active(epoch)
            elif value != self.broker_id and self.epoch is not None:
                log.info("broker %d is no longer the controller (now %s)", self.broker_id, value)
                self.epoch = None
                self._unsubscribe()
                self._stop_rebalancing()
            return
        if self.epoch is None:
            return
        if kind == "brokers":
            registered = set(value) - set(self._live)
            self._live = value
            self._shutting_down &= set(value)
            await self._elect_all()
            self.returning.live_changed(value)
            if self.auto_rebalance and registered:
                await self.returning.registered(registered)
        elif kind == "topics":
            self._topics = value
            await self._elect_all()
            self.reassignments.sync_watches()
            self.returning.sync_watches()
        elif kind == "states":
            await self.reassignments.states_changed(*value)
        elif kind == "preferred_states":
            await self.returning.states_changed(*value)
        elif kind == "deletions":
            self._deletions = value
            await self._delete_topics()
            self.reassignments.sync_watches()
            self.returning.sync_watches()
        elif kind == "rebalance":
            await self._rebalance()

    async def _answer(self, kind: str, arg: Any) -> Any:
        if kind == "shutdown":
            return await self._controlled_shutdown(arg)
        if kind == "reassign":
            return await self.reassignments.alter(arg)
        if kind == "elect":
            return await self.elections.elect(*arg)
        return self.reassignments.list(arg)

    async def _become_active(self, epoch: int) -> None:
        self.epoch = epoch
        log.info("broker %d is the controller (epoch %d)", self.broker_id, epoch)
        loop = asyncio.get_running_loop()
        post = self._poster(loop)
        reg = self.registry
        self._live = await self.run_blocking(reg.live_brokers)
        self._topics = await self.run_blocking(reg.topics)
        self._subs = [
            reg.on_brokers_changed(post("brokers")),
            reg.on_topics_changed(post("topics")),
            reg.on_topic_deletions(post("deletions")),
        ]
        self.reassignments.sync_watches()
        if self.auto_rebalance:
            self._rebalance_task = loop.create_task(self._rebalance_timer(), name="controller-rebalance")
            await self.returning.registered(self._live)

    async def _elect_all(self) -> None:
        for name, assignment in list(self._topics.items()):
            if name in self._deletions:
                continue
            try:
                states = await self.run_blocking(self.registry.partition_states, name)
                for p, replicas in sorted(assignment.partitions.items()):
                    await self._elect(name, p, replicas, states.get(p))
            except NoSuchTopicError:
                continue

    def _writing_epoch(self) -> int:
        """The controller epoch a partition state write carries (only the active controller's task writes)."""
        assert self.epoch is not None, "only the active controller writes partition states"
        return self.epoch

    async def _elect(self, topic: str, p: int, replicas: tuple[int, ...], state: PartitionState | None) -> None:
        reg = self.registry
        live = [r for r in replicas if r in self._live]
        unclean: bool | None = None
        for _ in range(5):
            if state is None:
                if not live:
                    new = PartitionState(-1, 0, tuple(replicas[:1]), self._writing_epoch())
                else:
                    new = PartitionState(live[0], 0, tuple(live), self._writing_epoch())
                try:
                    await self.run_blocking(reg.create_partition_state, topic, p, new)
                    log.info("%s-%d: created with leader %d, isr %s", topic, p, new.leader, list(new.isr))
                    return
                except StaleStateError:
                    state = await self.run_blocking(reg.partition_state, topic, p)
                    continue
            if state.leader in self._live and state.leader in replicas:
                shrunk = election.dead_followers_removed(state.leader, state.isr, self._live)
                if shrunk is None or await self._write(topic, p, state, shrunk):
                    return
                state = await self.run_blocking(reg.partition_state, topic, p)
                if state is None:
                    return
                continue
            if unclean is None and not any(r in self._live and r in state.isr for r in replicas):
                unclean = await self._unclean_enabled(topic)
            live_now = {b for b in self._live if b not in self._shutting_down}
            chosen = election.offline_election(replicas, state.isr, live_now, unclean=bool(unclean))
            if chosen.leader == -1 and state.leader == -1:
                return  # already offline; wait for an in-sync replica to return
            if await self._write(topic, p, state, chosen):
                if chosen.unclean:
                    log.warning(
                        "%s-%d: unclean leader election: %d was not in the ISR %s; records only the old ISR "
                        "had are lost",
                        topic,
                        p,
                        chosen.leader,
                        list(state.isr),
                    )
                return
            state = await self.run_blocking(reg.partition_state, topic, p)
            if state is None:
                return
        log.warning("%s-%d: gave up electing a leader after repeated concurrent changes", topic, p)

    async def _unclean_enabled(self, topic: str) -> bool:
        try:
            config = await self.run_blocking(self.registry.topic_config, topic)
        except NoSuchTopicError:
            return False
        return election.unclean_enabled(config, self.unclean_default)

    async def _write(self, topic: str, p: int, state: PartitionState, chosen: election.Election) -> bool:
        """Compare-and-set ``chosen`` over ``state`` with a new leader epoch; False when the state moved."""
        epoch = self._writing_epoch()
        new = PartitionState(chosen.leader, state.leader_epoch + 1, chosen.isr, epoch, state.zk_version)
        try:
            await self.run_blocking(self.registry.update_partition_state, topic, p, new)
        except StaleStateError:
            return False
        log.info(
            "%s-%d: leader %d -> %d, isr %s (epoch %d)",
            topic,
            p,
            state.leader,
            chosen.leader,
            list(chosen.isr),
            new.leader_epoch,
        )
        return True

    async def _controlled_shutdown(self, broker_id: int) -> list[tuple[str, int]]:
        self._shutting_down.add(broker_id)
        live = {b for b in self._live if b not in self._shutting_down}
        remaining = []
        for name, assignment in list(self._topics.items()):
            try:
                states = await self.run_blocking(self.registry.partition_states, name)
            except NoSuchTopicError:
                continue
            for p, replicas in sorted(assignment.partitions.items()):
                if broker_id not in replicas:
                    continue
                state = states.get(p)
                for _ in range(5):
                    if state is None or broker_id not in (state.leader, *state.isr):
                        break
                    if state.leader == broker_id:
                        chosen = election.shutdown_election(replicas, state.isr, live, self._shutting_down)
                    elif len(state.isr) > 1:  # a follower leaves the ISR; never empty an ISR
                        chosen = election.Election(state.leader, tuple(b for b in state.isr if b != broker_id))
                    else:
                        chosen = None
                    if chosen is None or await self._write(name, p, state, chosen):
                        break
                    state = await self.run_blocking(self.registry.partition_state, name, p)
                if state is not None and len(replicas) > 1:
                    now = await self.run_blocking(self.registry.partition_state, name, p)
                    if now is not None and now.leader == broker_id:
                        remaining.append((name, p))
        log.info("controlled shutdown of broker %d: %d partitions still led by it", broker_id, len(remaining))
        return remaining

    async def check_leader_imbalance(self) -> None:
        """The timer's preferred-replica election check, now (controller's task; ``returning`` calls it)."""
        await self._rebalance()

    async def _rebalance(self) -> None:
        """Preferred-replica election for brokers over ``leader.imbalance.per.broker.percentage``."""
        rows: list[tuple[str, int, tuple[int, ...], PartitionState]] = []
        for name, assignment in list(self._topics.items()):
            if name in self._deletions:
                continue
            try:
                states = await self.run_blocking(self.registry.partition_states, name)
            except NoSuchTopicError:
                continue
            for p, replicas in sorted(assignment.partitions.items()):
                if p in states and not assignment.is_reassigning(p):
                    rows.append((name, p, replicas, states[p]))
        imbalanced = election.imbalanced_brokers(((r[2], r[3].leader) for r in rows), self.imbalance_percentage)
        live = {b for b in self._live if b not in self._shutting_down}
        for broker_id, indexes in imbalanced.items():
            if broker_id not in live:
                continue
            for i in indexes:
                name, p, replicas, state = rows[i]
                chosen = election.preferred_election(replicas, state.leader, state.isr, live)
                if chosen is not None and await self._write(name, p, state, chosen):
                    log.info("%s-%d: preferred replica %d leads again", name, p, chosen.leader)

    async def _delete_topics(self) -> None:
        for name in list(self._deletions):
            await self.run_blocking(self.registry.remove_topic, name)
            log.info("deleted topic %s", name)
