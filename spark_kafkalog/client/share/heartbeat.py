"""``ShareHeartbeatThread``: the I/O around one ``ShareMembership`` - the share consumer's heartbeat thread.

Connections: FindCoordinator (key type GROUP) and ShareGroupHeartbeat (key 76, v1) go through a ``KafkaClient`` of
the thread's own, so heartbeats never queue behind a ShareFetch's long poll. The thread finds the coordinator and
sends every heartbeat (the join with epoch 0 included), at once while joining and then at the interval the
coordinator returns; ``changed`` is set after every answer (the polling thread waits on it for the join). ``leave``
stops the thread and sends the leave heartbeat (epoch -1) from the calling thread.

A broker without ShareGroupHeartbeat v1 (``NoCommonVersionError``) fails the member (``GroupMemberFatalError``
naming share groups); a FindCoordinator refused for good (authorization, a bad group id) fails it with that error;
lost connections and coordinator moves are retried after ``retry.backoff.ms``.

Thread safety: the member takes its own lock; ``start``/``leave``/``close`` are called from the polling thread.
"""

from __future__ import annotations

import logging
import threading
import time

from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.group_membership import coordinator_lookup_failed
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import KafkaClientError, NoCommonVersionError
from spark_kafkalog.client.share.membership import ShareHeartbeat, ShareMembership
from spark_kafkalog.client.share.requests import heartbeat_body
from spark_kafkalog.protocol import ApiKey, ErrorCode

__all__ = ["ShareHeartbeatThread"]

log = logging.getLogger("kafkalog.share_consumer")

_COORDINATOR_MOVED = (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE)


class ShareHeartbeatThread:
    """Heartbeats of ``member`` with the settings of ``config`` (see the module docstring)."""

    def __init__(self, config: ClientConfig, member: ShareMembership) -> None:
        self.config = config
        self.member = member
        self.net = KafkaClient(config)
        self._admin = GroupAdmin(self.net)
        self._stop = threading.Event()
        self._wake = threading.Event()  # something may be due now
        self.changed = threading.Event()  # a heartbeat was answered (or failed)
        self._thread: threading.Thread | None = None
        self._closed = False

    def start(self) -> None:
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(
                target=self._loop, name=f"kafkalog-share-heartbeat-{self.member.group_id}", daemon=True
            )
            self._thread.start()

    def wake(self) -> None:
        """A heartbeat may be due now (the subscription changed)."""
        self._wake.set()

    def _loop(self) -> None:
        try:
            self._run()
        except Exception as e:  # a bug: fail the member so that poll raises it rather than a silent stop
            log.exception("share group %s: the heartbeat thread failed", self.member.group_id)
            self.member.fail(KafkaClientError(f"the share consumer's heartbeat thread failed: {e!r}", retriable=False))
            self.changed.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            if self.member.wants_coordinator(now):
                self._find_coordinator()
                self.changed.set()
                continue
            request = self.member.heartbeat_request(now)
            if request is None:
                self._wake.wait(min(max(self.member.heartbeat_wait(now), 0.01), 1.0))
                self._wake.clear()
                continue
            self._send(request)
            self.changed.set()

    def _find_coordinator(self) -> None:
        group = self.member.group_id
        try:
            node = self._admin.coordinator(group)
        except KafkaClientError as e:
            log.debug("share group %s: FindCoordinator failed: %s", group, e)
            coordinator_lookup_failed(self.member, e, time.monotonic())  # refused for good: fails the member
            return
        self.member.on_find_coordinator(ErrorCode.NONE, node, time.monotonic())

    def _send(self, request: ShareHeartbeat) -> None:
        group = self.member.group_id
        node = self.member.coordinator
        try:
            if node is None:
                raise KafkaClientError(f"share group {group!r}: the coordinator is unknown", retriable=True)
            _, response = self.net.send_request(
                ApiKey.SHARE_GROUP_HEARTBEAT,
                heartbeat_body(request),
                node_id=node,
                min_version=1,
                timeout_ms=self.config.request_timeout_ms,
            )
        except NoCommonVersionError as e:
            self.member.on_unsupported(str(e))
            return
        except KafkaClientError as e:
            log.debug("share group %s: ShareGroupHeartbeat failed: %s", group, e)
            self._admin.forget_coordinator(group)
            self.member.on_heartbeat_failed(request, time.monotonic())
            return
        if response.error_code in _COORDINATOR_MOVED:
            self._admin.forget_coordinator(group)
        self.member.on_heartbeat(request, response, time.monotonic())

    def leave(self) -> None:
        """Stop heartbeating and send the leave heartbeat (epoch -1) when the member is in the group."""
        self._stop_thread()
        request = self.member.leave()
        if request is not None:
            self._send(request)

    def _stop_thread(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop_thread()
        self.net.close()
