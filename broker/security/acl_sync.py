"""Keeps a broker's ``AclAuthorizer`` cache in line with the ACLs stored in the cluster registry.

As Kafka's ``AclAuthorizer`` does with ZooKeeper: every ACL is loaded at start-up (``ready`` is set once that
load succeeded; the broker registers only then, so it never answers with an empty cache while ACLs exist);
afterwards each change notification (``/kafka-acl-changes``, ``/kafka-acl-extended-changes``, written by
CreateAcls/DeleteAcls on any broker or by Kafka's tools) makes only the resources it names be re-read. Every
ACL is read again after a ZooKeeper session re-establishment, when notifications may have been missed (purged
before they were read, or undecodable), and after a failed read (retried every ``RETRY_S`` seconds).

Requests never wait for the registry: the authorizer decides from its cache alone.

Concurrency: event-loop only. Registry callbacks (on the registry's dispatcher thread) only post a wake-up to
the loop; one task reads the registry (in ``run_blocking``'s threads) and updates the authorizer, one round at a
time, so several quick notifications coalesce into one round.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from ..cluster.registry import ClusterRegistry, Subscription
from .authorizer import AclAuthorizer

__all__ = ["AclSync"]

log = logging.getLogger("kafkalog.security.acls")

RETRY_S = 1.0
"""Delay before a failed round is tried again (as a full reload)."""


class AclSync:
    """Dependencies: the registry holding the ACLs, the authorizer whose cache it fills (``replace_all``,
    ``update_resource``) and ``run_blocking`` for registry reads. ``start()`` on the broker's loop, then await
    ``ready``; ``stop()`` ends it."""

    def __init__(
        self,
        registry: ClusterRegistry,
        authorizer: AclAuthorizer,
        run_blocking: Callable[..., Awaitable[Any]],
    ) -> None:
        self.registry = registry
        self.authorizer = authorizer
        self.run_blocking = run_blocking
        self.ready = asyncio.Event()
        """Set once every ACL has been loaded."""
        self._positions = {False: -1, True: -1}  # newest notification applied, per directory (extended?)
        self._reload_all = True
        self._wake = asyncio.Event()
        self._subs: list[Subscription] = []
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retry: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._run(), name="acl-sync")
        self._wake.set()  # the first load
        self._subs = [
            self.registry.on_acl_changes(self._post(reload_all=False)),
            self.registry.on_session_reestablished(self._post(reload_all=True)),
        ]

    async def stop(self) -> None:
        for sub in self._subs:
            sub.cancel()
        self._subs = []
        if self._retry is not None:
            self._retry.cancel()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def _post(self, *, reload_all: bool) -> Callable[[], None]:
        """A registry callback (any thread) that wakes the sync task on the loop."""
        loop = self._loop
        assert loop is not None, "registry callbacks are made once started"

        def callback() -> None:
            try:
                loop.call_soon_threadsafe(self._signal, reload_all)
            except RuntimeError:  # the loop is closed: the broker is gone
                pass

        return callback

    def _signal(self, reload_all: bool) -> None:
        if reload_all:
            log.info("ZooKeeper session re-established: reloading every ACL")
            self._reload_all = True
        self._wake.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._sync()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # RegistryError, a malformed node...: read everything again shortly
                log.error("could not read the ACLs from the registry (%s); reloading in %.1f s", e, RETRY_S)
                self._reload_all = True
                assert self._loop is not None
                self._retry = self._loop.call_later(RETRY_S, self._wake.set)

    async def _sync(self) -> None:
        """One round: every ACL when a reload is due, else the resources named by new notifications."""
        reg, run = self.registry, self.run_blocking
        # Each read is applied under the authorizer's write lock (``write_resource``, ``refresh_all``): this
        # broker's own CreateAcls/DeleteAcls cannot land between a read and its application and be undone.
        if not self._reload_all:
            for extended in (False, True):
                position, patterns = await run(reg.acl_changes_since, self._positions[extended], extended)
                if patterns is None and position < 0:
                    continue  # the directory has never held a notice (a purge keeps the newest): nothing missed
                if patterns is None:
                    log.info("ACL change notifications may have been missed: reloading every ACL")
                    self._reload_all = True
                    break
                for pattern in dict.fromkeys(patterns):
                    entries = await run(self.authorizer.write_resource, pattern, partial(reg.resource_acls, pattern))
                    log.debug("ACLs of %s now %d entries", pattern, len(entries))
                self._positions[extended] = position
            else:
                return
        # the positions first: a change made while everything is read is read again in the next round
        positions = {extended: (await run(reg.acl_changes_since, -1, extended))[0] for extended in (False, True)}
        acls = await run(self.authorizer.refresh_all, reg.all_acls)
        self._positions, self._reload_all = positions, False
        log.info("loaded %d ACLs on %d resource patterns", sum(map(len, acls.values())), len(acls))
        self.ready.set()
