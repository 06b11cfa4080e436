"""The controller: one broker at a time elects partition leaders and completes topic deletions.

Every broker runs a ``Controller``; it competes for the ephemeral ``/controller`` whenever nobody holds it
(at start-up and when the holder's session ends). The winner, for the lifetime of its controller epoch:

* creates the state of every partition that has none (a new topic or new partitions): leader = the first
  live replica in assignment order, leader epoch 0, ISR = the live replicas (at most the leader while
  replication is not implemented);
* when a leader's broker leaves, elects the next live replica that is in the ISR (with replication factor 1
  there is none: the leader becomes -1, "offline", and the ISR keeps the last leader, as Kafka does with
  unclean election off); when a broker returns, offline partitions whose ISR holds it get it as leader;
  every change bumps the leader epoch;
* removes topics marked under ``/admin/delete_topics``.

All writes are compare-and-set on the state node's version and carry the controller epoch. Registry
events are queued onto the broker's event loop and handled in order by one task; the blocking registry
calls run in the broker's executor.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .registry import ClusterRegistry, NoSuchTopicError, PartitionState, RegistryError, StaleStateError, TopicAssignment

log = logging.getLogger("kafkalog.controller")


class Controller:
    """``run_blocking(fn, *args)`` runs a blocking registry call off the event loop (the broker's pool)."""

    def __init__(self, broker_id: int, registry: ClusterRegistry, run_blocking: Callable[..., Awaitable[Any]]) -> None:
        self.broker_id = broker_id
        self.registry = registry
        self.run_blocking = run_blocking
        self.epoch: int | None = None
        self._events: asyncio.Queue = asyncio.Queue()
        self._subs: list[Any] = []
        self._controller_sub: Any = None
        self._task: asyncio.Task | None = None
        self._live: dict[int, Any] = {}
        self._topics: dict[str, TopicAssignment] = {}
        self._deletions: list[str] = []

    @property
    def is_active(self) -> bool:
        return self.epoch is not None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._run(), name="controller")
        post = self._poster(loop)
        self._controller_sub = self.registry.on_controller_changed(post("controller"))

    async def stop(self) -> None:
        if self._controller_sub is not None:
            self._controller_sub.cancel()
        self._unsubscribe()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
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
        if kind == "controller":
            if value is None:
                epoch = await self.run_blocking(self.registry.try_become_controller, self.broker_id)
                if epoch is not None:
                    await self._become_active(epoch)
            elif value != self.broker_id and self.epoch is not None:
                log.info("broker %d is no longer the controller (now %s)", self.broker_id, value)
                self.epoch = None
                self._unsubscribe()
            return
        if self.epoch is None:
            return
        if kind == "brokers":
            self._live = value
            await self._elect_all()
        elif kind == "topics":
            self._topics = value
            await self._elect_all()
        elif kind == "deletions":
            self._deletions = value
            await self._delete_topics()

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

    async def _elect(self, topic: str, p: int, replicas: tuple[int, ...], state: PartitionState | None) -> None:
        reg = self.registry
        live = [r for r in replicas if r in self._live]
        for _ in range(5):
            if state is None:
                if not live:
                    new = PartitionState(-1, 0, tuple(replicas[:1]), self.epoch)
                else:
                    new = PartitionState(live[0], 0, (live[0],), self.epoch)
                try:
                    await self.run_blocking(reg.create_partition_state, topic, p, new)
                    log.info("%s-%d: created with leader %d", topic, p, new.leader)
                    return
                except StaleStateError:
                    state = await self.run_blocking(reg.partition_state, topic, p)
                    continue
            leader_ok = state.leader in self._live and state.leader in replicas
            if leader_ok:
                return
            candidates = [r for r in live if r in state.isr]
            if candidates:
                leader, isr = candidates[0], tuple(r for r in state.isr if r in self._live)
            elif state.leader == -1:
                return  # already offline; wait for an in-sync replica to return
            else:
                leader, isr = -1, tuple(state.isr)
            new = PartitionState(leader, state.leader_epoch + 1, isr, self.epoch, state.zk_version)
            try:
                await self.run_blocking(reg.update_partition_state, topic, p, new)
                log.info("%s-%d: leader %d -> %d (epoch %d)", topic, p, state.leader, leader, new.leader_epoch)
                return
            except StaleStateError:
                state = await self.run_blocking(reg.partition_state, topic, p)
        log.warning("%s-%d: gave up electing a leader after repeated concurrent changes", topic, p)

    async def _delete_topics(self) -> None:
        for name in list(self._deletions):
            await self.run_blocking(self.registry.remove_topic, name)
            log.info("deleted topic %s", name)
