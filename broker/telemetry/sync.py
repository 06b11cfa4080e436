"""``ClientMetricsSync``: keeps a broker's ``ClientTelemetry`` subscriptions equal to the ``CLIENT_METRICS``
entities in the registry (``/config/client-metrics/<name>``), as Kafka's brokers follow them.

At start (and after a ZooKeeper session re-establishment, or when notifications may have been missed) every
subscription is read; otherwise each ``client-metrics/<name>`` change notification under ``/config/changes``
re-reads that one subscription. Registry callbacks fire on the registry's thread and only post onto the
broker's event loop; one task applies them in order (event-loop only otherwise). ``ready`` is set after the
first full read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..cluster.client_metrics_entities import parse_client_metrics_entity_path
from ..cluster.registry import ClusterRegistry, RegistryError
from .store import ClientTelemetry

__all__ = ["ClientMetricsSync"]

log = logging.getLogger("kafkalog.telemetry")


class ClientMetricsSync:
    """Follows the registry's client metrics subscriptions into ``telemetry``; ``run_blocking`` runs the
    registry reads off the event loop."""

    def __init__(
        self, registry: ClusterRegistry, telemetry: ClientTelemetry, run_blocking: Callable[..., Awaitable[Any]]
    ) -> None:
        self.registry = registry
        self.telemetry = telemetry
        self.run_blocking = run_blocking
        self.ready = asyncio.Event()
        self._seq = -1
        self._events: asyncio.Queue[str] = asyncio.Queue()
        self._subs: list[Any] = []
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()

        def post(kind: str) -> Callable[..., None]:
            def callback(_value: Any = None) -> None:
                try:
                    loop.call_soon_threadsafe(self._events.put_nowait, kind)
                except RuntimeError:  # the loop is closed: the broker is gone
                    pass

            return callback

        self._events.put_nowait("all")
        self._task = loop.create_task(self._run(), name="client-metrics-sync")
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

    async def _run(self) -> None:
        while True:
            kind = await self._events.get()
            try:
                await (self._reload() if kind == "all" else self._changed())
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("applying client metrics subscriptions failed")

    async def _reload(self) -> None:
        try:
            seq, _ = await self.run_blocking(self.registry.config_changes_since, self._seq)
            configs = await self.run_blocking(self.registry.client_metrics_configs)
        except RegistryError as e:
            log.error("could not read the client metrics subscriptions: %s", e)
            return
        self._seq = max(self._seq, seq)
        self.telemetry.replace_subscriptions(configs)
        self.ready.set()

    async def _changed(self) -> None:
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
        names = [n for p in paths if (n := parse_client_metrics_entity_path(p)) is not None]
        for name in dict.fromkeys(names):
            try:
                config = await self.run_blocking(self.registry.client_metrics_config, name)
            except RegistryError as e:
                log.error("could not read client metrics subscription %r: %s", name, e)
                continue
            self.telemetry.set_subscription(name, config)
