"""Helpers shared by the group handlers: the coordinator of a request, and the client host as Kafka shows it."""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import ErrorCode


def coordinator(ctx):
    """The broker's group coordinator; ``GroupError(COORDINATOR_NOT_AVAILABLE)`` when it has none."""
    gc = ctx.services.group_coordinator
    if gc is None:
        raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE, "this broker runs no group coordinator")
    return gc


def client_host(ctx) -> str:
    """``/<address>`` of the client, as Kafka reports member hosts."""
    host = ctx.peer.rsplit(":", 1)[0] if ctx.peer.count(":") == 1 or ctx.peer.startswith("[") else ctx.peer
    return "/" + host.strip("[]")


def client_id(ctx) -> str:
    return ctx.header.client_id or ""
