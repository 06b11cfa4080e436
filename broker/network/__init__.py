"""Kafka-protocol network layer: listener, per-connection request loop, handler registry, zero-copy sends."""

from .handler_registry import NO_RESPONSE, CloseConnection, HandlerRegistry, NoResponse, RequestContext
from .socket_server import SocketServer

__all__ = ["NO_RESPONSE", "CloseConnection", "HandlerRegistry", "NoResponse", "RequestContext", "SocketServer"]
