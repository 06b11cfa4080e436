"""The stopping broker's side of controlled shutdown: ask the controller to move leadership away, retry.

``controlled_shutdown`` runs first in ``Broker.stop`` (``controlled.shutdown.enable``): it sends
ControlledShutdown v3 (``broker_epoch`` -1) to the current controller, or calls this broker's own controller
when it holds ``/controller``, and repeats after ``controlled.shutdown.retry.backoff.ms`` while the answer is
an error or lists partitions the broker still leads, at most ``controlled.shutdown.max.retries`` times. Then
the broker stops anyway (Kafka does the same): with replication factor 1, or with no other in-sync replica,
there is nowhere to move the leadership. Unlike Kafka it does not retry when no remaining partition has
another live replica (the last broker of a cluster stops at once: no retry could move anything).

Runs on the broker's event loop; one short-lived connection per attempt, bounded by ``timeout_s``.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import Any

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode, ProtocolError, decode_response, encode_request

log = logging.getLogger("kafkalog.controller")

_API = API_BY_KEY[ApiKey.CONTROLLED_SHUTDOWN]
_VERSION = 3
_SIZE = struct.Struct(">i")


async def request_shutdown(address: str, broker_id: int, timeout_s: float) -> tuple[int, list[tuple[str, int]]]:
    """Send ControlledShutdown v3 for ``broker_id`` to ``host:port``; returns (error code, remaining partitions)."""
    host, port = address.rsplit(":", 1)

    async def call() -> Any:
        reader, writer = await asyncio.open_connection(host.strip("[]"), int(port))
        try:
            request = _API.Request(broker_id=broker_id, broker_epoch=-1)
            writer.write(encode_request(_API.key, _VERSION, 1, request, client_id=f"broker-{broker_id}", framed=True))
            await writer.drain()
            (size,) = _SIZE.unpack(await reader.readexactly(_SIZE.size))
            _, response = decode_response(_API.key, _VERSION, await reader.readexactly(size))
            return response
        finally:
            writer.close()

    response = await asyncio.wait_for(call(), timeout_s)
    return response.error_code, [(r.topic_name, r.partition_index) for r in response.remaining_partitions]


async def controlled_shutdown(
    broker_id: int,
    metadata: Any,
    local_controller: Any,
    *,
    max_retries: int,
    backoff_s: float,
    timeout_s: float = 30.0,
) -> bool:
    """Move this broker's leaderships away before it stops; True when the controller reports none left.

    ``metadata``: the broker's ``MetadataCache`` (controller id, broker addresses); ``local_controller``:
    this broker's ``Controller``, used directly when it is the active one.
    """
    for attempt in range(1, max_retries + 1):
        cid = metadata.controller_id
        remaining: list[tuple[str, int]] = []
        try:
            if cid == broker_id and local_controller is not None and local_controller.is_active:
                got = await asyncio.wait_for(local_controller.controlled_shutdown(broker_id), timeout_s)
                error = ErrorCode.NOT_CONTROLLER if got is None else ErrorCode.NONE
                remaining = got or []
            elif cid is None or cid not in metadata.brokers:
                error = ErrorCode.NOT_CONTROLLER
            else:
                error, remaining = await request_shutdown(metadata.brokers[cid].address, broker_id, timeout_s)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ProtocolError) as e:
            log.warning("broker %d: controlled shutdown attempt %d failed: %r", broker_id, attempt, e)
            error = ErrorCode.UNKNOWN_SERVER_ERROR
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
            "broker %d: controlled shutdown attempt %d of %d: %s, %d partitions still led here",
            broker_id,
            attempt,
            max_retries,
            ErrorCode(error).name,
            len(remaining),
        )
        if attempt < max_retries:
            await asyncio.sleep(backoff_s)
    log.warning("broker %d: controlled shutdown incomplete; stopping anyway", broker_id)
    return False


def _other_replica_alive(metadata: Any, topic: str, partition: int, broker_id: int) -> bool:
    t = metadata.topics.get(topic)
    replicas = () if t is None else t.replicas.get(partition, ())
    return any(r != broker_id and r in metadata.brokers for r in replicas)
