"""The stopping broker's side of controlled shutdown: ask the controller to move leadership away, retry.

``controlled_shutdown`` runs first in ``Broker.stop`` (``controlled.shutdown.enable``): it sends
ControlledShutdown v3 (``broker_epoch`` -1) to the current controller, or calls this broker's own controller
when it holds ``/controller``, and repeats after ``controlled.shutdown.retry.backoff.ms`` while the answer is
an error or lists partitions the broker still leads, at most ``controlled.shutdown.max.retries`` times. Then
the broker stops anyway (Kafka does the same): with replication factor 1, or with no other in-sync replica,
there is nowhere to move the leadership. Unlike Kafka it does not retry when no remaining partition has
another live replica (the last broker of a cluster stops at once: no retry could move anything), and it asks
nobody when it holds no replica at all (nothing to move, no ISR to leave).

When the controller answers NOT_CONTROLLER, closes the connection or cannot be reached (it is stopping
itself, or there is none), the next attempt waits for the controller to change (the broker's metadata follows
``/controller``) rather than the whole ``controlled.shutdown.retry.backoff.ms``: it starts as soon as another
live broker is the controller, else after the backoff. When the answer lists partitions still led here
(no other ISR member to take them yet), the next attempt starts as soon as the ISR of one of them gains another
live broker (a follower caught up), else after the backoff. Brokers that stop together are quickest with the
controller's broker last (``EmbeddedCluster.stop`` does that); then no attempt fails.

The request goes to the controller's endpoint for the inter-broker listener, secured as that listener
requires (``broker.security.inter_broker``). Runs on the broker's event loop; one short-lived connection per
attempt, bounded by ``timeout_s``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode, ProtocolError

log = logging.getLogger("kafkalog.controller")

_API = API_BY_KEY[ApiKey.CONTROLLED_SHUTDOWN]
_VERSION = 3
_POLL_S = 0.02  # how often a retry looks for a new controller in the broker's metadata


async def request_shutdown(
    address: str, broker_id: int, timeout_s: float, *, security: Any = None
) -> tuple[int, list[tuple[str, int]]]:
    """Send ControlledShutdown v3 for ``broker_id`` to ``host:port`` (the controller's inter-broker endpoint)
    over a connection secured by ``security`` (a ``ClientSecurity``; None: PLAINTEXT); returns (error code,
    remaining partitions). Connection failures raise ``OSError`` (``KafkaConnectionError`` is one)."""
    from spark_kafkalog.client.errors import KafkaClientError
    from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection

    host, port = address.rsplit(":", 1)
    kwargs = {} if security is None else {"security": security}

    async def call() -> Any:
        conn = await AsyncKafkaConnection.open(
            host.strip("[]"),
            int(port),
            client_id=f"broker-{broker_id}",
            connect_timeout=timeout_s,
            request_timeout=timeout_s,
            **kwargs,
        )
        try:
            request = _API.Request(broker_id=broker_id, broker_epoch=-1)
            return await conn.request(_API.key, request, version=_VERSION, timeout=timeout_s)
        finally:
            await conn.close()

    try:
        response = await asyncio.wait_for(call(), timeout_s)
    except KafkaClientError as e:
        raise OSError(str(e)) from None
    return response.error_code, [(r.topic_name, r.partition_index) for r in response.remaining_partitions]


async def controlled_shutdown(
    broker_id: int,
    metadata: Any,
    local_controller: Any,
    *,
    max_retries: int,
    backoff_s: float,
    timeout_s: float = 30.0,
    send: Callable[[str, int, float], Awaitable[tuple[int, list[tuple[str, int]]]]] | None = None,
    inter_broker: Any = None,
) -> bool:
    """Move this broker's leaderships away before it stops; True when the controller reports none left.

    ``metadata``: the broker's ``MetadataCache`` (controller id, broker addresses); ``local_controller``:
    this broker's ``Controller``, used directly when it is the active one; ``inter_broker``: the
    ``InterBrokerClient`` (listener and client security; None: the PLAINTEXT listener); ``send``: how a
    ControlledShutdown request reaches another broker's ``host:port`` (``request_shutdown`` with the
    inter-broker security; tests pass their own).
    """
    if inter_broker is None:
        from broker.security.inter_broker import InterBrokerClient

        inter_broker = InterBrokerClient("PLAINTEXT")
    send = send or functools.partial(request_shutdown, security=inter_broker.security)
    if not _holds_replicas(metadata, broker_id):
        log.info("broker %d: controlled shutdown done (it holds no replica)", broker_id)
        return True
    for attempt in range(1, max_retries + 1):
        cid = metadata.controller_id
        remaining: list[tuple[str, int]] = []
        unreachable: str | None = None  # why the controller gave no answer
        error: int
        try:
            if cid == broker_id and local_controller is not None and local_controller.is_active:
                got = await asyncio.wait_for(local_controller.controlled_shutdown(broker_id), timeout_s)
                error = ErrorCode.NOT_CONTROLLER if got is None else ErrorCode.NONE
                remaining = got or []
            elif cid is None or cid not in metadata.brokers:
                error = ErrorCode.NOT_CONTROLLER
                unreachable = "no controller is known"
            else:
                host, port = inter_broker.address(metadata.brokers[cid])
                address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
                error, remaining = await send(address, broker_id, timeout_s)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ProtocolError, KafkaClientError) as e:
            error = ErrorCode.NOT_CONTROLLER
            unreachable = f"controller {cid} gave no answer ({_reason(e)})"
        if error == ErrorCode.NONE and not remaining:
            log.info("broker %d: controlled shutdown done (controller %s)", broker_id, cid)
            return True
        if error == ErrorCode.NONE and not any(_other_replica_alive(metadata, t, p, broker_id) for t, p in remaining):
            log.info(
                "broker %d: controlled shutdown done; %d partitions stay led here (no other replica is alive)",
                broker_id,
                len(remaining),
            )
            return True
        log.info(
            "broker %d: controlled shutdown attempt %d of %d: %s",
            broker_id,
            attempt,
            max_retries,
            unreachable
            or (f"{len(remaining)} partitions still led here" if error == ErrorCode.NONE else ErrorCode(error).name),
        )
        if attempt < max_retries:
            if error == ErrorCode.NOT_CONTROLLER:
                await _controller_change(metadata, cid, broker_id, backoff_s)
            elif error == ErrorCode.NONE:
                await _isr_growth(metadata, remaining, broker_id, backoff_s)
            else:
                await asyncio.sleep(backoff_s)
    log.warning("broker %d: controlled shutdown incomplete; stopping anyway", broker_id)
    return False


async def _controller_change(metadata: Any, tried: int | None, broker_id: int, limit_s: float) -> None:
    """Wait until a live broker other than ``tried`` is the controller (this broker's own controller counts),
    at most ``limit_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while loop.time() < deadline:
        cid = metadata.controller_id
        if cid is not None and cid != tried and (cid == broker_id or cid in metadata.brokers):
            return
        await asyncio.sleep(min(_POLL_S, max(0.0, deadline - loop.time())))


async def _isr_growth(metadata: Any, remaining: list[tuple[str, int]], broker_id: int, limit_s: float) -> None:
    """Wait until the ISR of a partition in ``remaining`` changes to hold a live broker other than this one
    (someone could lead it now), at most ``limit_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s

    def isr(topic: str, p: int) -> tuple[int, ...]:
        state = metadata.partition_state(topic, p)
        return () if state is None else tuple(state.isr)

    before = {tp: isr(*tp) for tp in remaining}
    while loop.time() < deadline:
        for tp, was in before.items():
            now = isr(*tp)
            if now != was and any(b != broker_id and b in metadata.brokers for b in now):
                return
        await asyncio.sleep(min(_POLL_S, max(0.0, deadline - loop.time())))


def _reason(e: BaseException) -> str:
    if isinstance(e, asyncio.IncompleteReadError):
        return "connection closed"
    if isinstance(e, TimeoutError):
        return "timed out"
    return str(e) or type(e).__name__


def _holds_replicas(metadata: Any, broker_id: int) -> bool:
    return any(broker_id in replicas for t in list(metadata.topics.values()) for replicas in t.replicas.values())


def _other_replica_alive(metadata: Any, topic: str, partition: int, broker_id: int) -> bool:
    t = metadata.topics.get(topic)
    replicas = () if t is None else t.replicas.get(partition, ())
    return any(r != broker_id and r in metadata.brokers for r in replicas)
