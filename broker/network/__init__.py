"""Kafka-protocol network layer: listener, per-connection request loop, zero-copy sends.

What handlers are given and return (``RequestContext``, ``NO_RESPONSE``, ``CloseConnection``) and the
handler registry live in ``broker.api``, so handlers never import this package.
"""

from .socket_server import SocketServer

__all__ = ["SocketServer"]
