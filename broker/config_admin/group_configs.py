"""``GroupConfigs``: every group's own configs (``GROUP`` config resources, ``/config/groups/<group id>``) cached on
this broker, and ``ShareGroupConfig``, the values a share group runs with.

The cache follows the registry as ``ClientMetricsSync`` does: at start (and after a ZooKeeper session
re-establishment, or when notifications may have been missed) every group config is read; otherwise each
``groups/<group id>`` change notification under ``/config/changes`` re-reads that group. Registry callbacks fire
on the registry's thread and only post onto the broker's event loop; one task applies them in order. ``ready`` is
set after the first full read. Reads (``overrides``, ``share_config``, ``consumer_config``) are plain dict
lookups: event-loop only, as every write. Values: ``group_config_defs`` (an override over the broker default).

Read-your-writes: the broker that alters a group's config (``config_admin.alter``) puts the config it wrote into
its cache with ``written`` before it answers; the other brokers see it when the notification arrives. A registry
read that was under way while this broker wrote the group is not applied over that write (it may be older): the
group is read again (``_READ_ATTEMPTS``; the write's own notification re-reads it anyway).
``read_share_config`` reads one group's config from the registry itself (the source of truth), for a decision
that must not miss a change the cache has not seen yet (a share partition's first start offset); it falls back
to the cache when the registry cannot be read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..cluster.group_config_entities import parse_group_entity_path
from ..cluster.registry import ClusterRegistry, RegistryError
from .group_config_defs import effective_group_config

__all__ = ["ConsumerGroupConfig", "GroupConfigs", "ShareGroupConfig"]

log = logging.getLogger("kafkalog.config")

_READ_ATTEMPTS = 3
"""Reads of a group's config while this broker keeps writing it, before the follower leaves it to the write."""


@dataclass(frozen=True)
class ShareGroupConfig:
    """What a share group runs with: its overrides over the broker's ``group.share.*`` defaults."""

    record_lock_duration_ms: int
    delivery_count_limit: int
    auto_offset_reset: str  # latest | earliest | by_duration:<ISO-8601 duration>
    isolation_level: str  # read_uncommitted | read_committed
    session_timeout_ms: int
    heartbeat_interval_ms: int


@dataclass(frozen=True)
class ConsumerGroupConfig:
    """What a consumer group (KIP-848) runs with: ``consumer.*`` overrides over ``group.consumer.*``."""

    session_timeout_ms: int
    heartbeat_interval_ms: int


class GroupConfigs:
    """The group configs of the cluster, cached; ``registry`` None: no follower (tests set ``replace_all``)."""

    def __init__(
        self,
        broker_config: Any,
        registry: ClusterRegistry | None = None,
        run_blocking: Callable[..., Awaitable[Any]] | None = None,
    ) -> None:
        self.broker_config = broker_config
        self.registry = registry
        self.run_blocking = run_blocking
        self.ready = asyncio.Event()
        self._configs: dict[str, dict[str, str]] = {}
        self._written: dict[str, int] = {}
        """Group id -> how many times this broker wrote its config (``written``): a read racing a write is dropped."""
        self._seq = -1
        self._events: asyncio.Queue[str] | None = None
        self._subs: list[Any] = []
        self._task: asyncio.Task | None = None

    # -- reads ----------------------------------------------------------------------------------------------------
    def overrides(self, group_id: str) -> dict[str, str]:
        """The keys the group sets (as stored)."""
        return dict(self._configs.get(group_id, {}))

    def group_ids(self) -> list[str]:
        return sorted(self._configs)

    def values(self, group_id: str) -> dict[str, Any]:
        """Every group config's value for the group (``group_config_defs.effective_group_config``)."""
        return effective_group_config(self._configs.get(group_id, {}), self.broker_config)

    def share_config(self, group_id: str) -> ShareGroupConfig:
        return self._share_config(self.values(group_id))

    async def read_share_config(self, group_id: str) -> ShareGroupConfig:
        """The group's ``ShareGroupConfig`` from its config as the registry holds it now (one registry read); the
        cached one without a registry or when the read fails. Event loop only."""
        if self.registry is None or self.run_blocking is None:
            return self.share_config(group_id)
        try:
            overrides = await self.run_blocking(self.registry.group_config, group_id)
        except (RegistryError, ValueError) as e:
            log.warning("could not read the config of group %r (using the cached one): %s", group_id, e)
            return self.share_config(group_id)
        return self._share_config(effective_group_config(overrides, self.broker_config))

    @staticmethod
    def _share_config(v: Mapping[str, Any]) -> ShareGroupConfig:
        return ShareGroupConfig(
            record_lock_duration_ms=v["share.record.lock.duration.ms"],
            delivery_count_limit=v["share.delivery.count.limit"],
            auto_offset_reset=v["share.auto.offset.reset"],
            isolation_level=v["share.isolation.level"],
            session_timeout_ms=v["share.session.timeout.ms"],
            heartbeat_interval_ms=v["share.heartbeat.interval.ms"],
        )

    def consumer_config(self, group_id: str) -> ConsumerGroupConfig:
        v = self.values(group_id)
        return ConsumerGroupConfig(v["consumer.session.timeout.ms"], v["consumer.heartbeat.interval.ms"])

    # -- writes (the follower's, the alter's; tests call them) ----------------------------------------------------
    def replace_all(self, configs: Mapping[str, Mapping[str, str]]) -> None:
        self._configs = {g: dict(c) for g, c in configs.items() if c}

    def set_group(self, group_id: str, config: Mapping[str, str]) -> None:
        if config:
            self._configs[group_id] = dict(config)
        else:
            self._configs.pop(group_id, None)

    def written(self, group_id: str, config: Mapping[str, str]) -> None:
        """This broker has just written ``config`` as the group's whole config to the registry: cache it now, and
        drop any registry read of the group already under way (read-your-writes; module docstring)."""
        self._written[group_id] = self._written.get(group_id, 0) + 1
        self.set_group(group_id, config)

    # -- following the registry -------------------------------------------------------------------------------------
    def start(self) -> None:
        if self.registry is None or self.run_blocking is None:
            self.ready.set()
            return
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[str] = asyncio.Queue()
        self._events = events

        def post(kind: str) -> Callable[..., None]:
            def callback(_value: Any = None) -> None:
                try:
                    loop.call_soon_threadsafe(events.put_nowait, kind)
                except RuntimeError:  # the loop is closed: the broker is gone
                    pass

            return callback

        events.put_nowait("all")
        self._task = loop.create_task(self._run(events), name="group-configs-sync")
        self._subs = [
            self.registry.on_config_changes(post("changes")),
            self.registry.on_session_reestablished(post("all")),
        ]

    async def stop(self) -> None:
        for sub in self._subs:
            sub.cancel()
        self._subs = []
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self, events: asyncio.Queue[str]) -> None:
        while True:
            kind = await events.get()
            try:
                await (self._reload() if kind == "all" else self._changed())
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("applying group configs failed")

    async def _reload(self) -> None:
        assert self.registry is not None and self.run_blocking is not None
        for _attempt in range(_READ_ATTEMPTS):
            written = dict(self._written)
            try:
                seq, _ = await self.run_blocking(self.registry.config_changes_since, self._seq)
                configs = await self.run_blocking(self.registry.group_configs)
            except RegistryError as e:
                log.error("could not read the group configs: %s", e)
                return
            if written == self._written:
                break
        raced = {g for g, n in self._written.items() if written.get(g) != n}
        configs = {g: c for g, c in configs.items() if g not in raced}
        configs |= {g: self._configs[g] for g in raced if g in self._configs}  # kept: written here meanwhile
        self._seq = max(self._seq, seq)
        self.replace_all(configs)
        self.ready.set()

    async def _changed(self) -> None:
        assert self.registry is not None and self.run_blocking is not None
        if self._seq < 0:
            return await self._reload()
        try:
            seq, paths = await self.run_blocking(self.registry.config_changes_since, self._seq)
        except RegistryError as e:
            log.error("could not read the config change notifications: %s", e)
            return
        if paths is None:
            return await self._reload()
        self._seq = seq
        groups = [g for p in paths if (g := parse_group_entity_path(p)) is not None]
        for group_id in dict.fromkeys(groups):
            await self._read_group(group_id)

    async def _read_group(self, group_id: str) -> None:
        """Cache the group's config as the registry holds it, unless this broker keeps writing it meanwhile."""
        assert self.registry is not None and self.run_blocking is not None
        for _ in range(_READ_ATTEMPTS):
            written = self._written.get(group_id, 0)
            try:
                config = await self.run_blocking(self.registry.group_config, group_id)
            except RegistryError as e:
                log.error("could not read the config of group %r: %s", group_id, e)
                return
            if self._written.get(group_id, 0) == written:
                self.set_group(group_id, config)
                return
