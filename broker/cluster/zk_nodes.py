"""Values and errors of the ZooKeeper session layer (no kazoo here): node stats, transaction operations,
condition-named node errors and the ``zookeeper.connect`` string.

``broker.cluster.zk_session`` raises these errors in place of kazoo's; the znode layout
(``broker.cluster.zk_registry``) catches them and maps them to the registry's own conditions
(``TopicExistsError``, ``NoSuchTopicError``, ``StaleStateError`` ...). Every error here is a ``RegistryError``,
so one that escapes the layout still honours the ``ClusterRegistry`` contract. Immutable values: thread-safe.
"""

from __future__ import annotations

from typing import NamedTuple

from broker.cluster.registry import RegistryError, StaleStateError

__all__ = [
    "NodeStat",
    "CreateOp",
    "SetOp",
    "DeleteOp",
    "CheckOp",
    "Op",
    "NodeError",
    "NodeExistsError",
    "NoNodeError",
    "BadVersionError",
    "NotEmptyError",
    "parse_connect_string",
]


# -- errors --------------------------------------------------------------------------------------------


class NodeError(RegistryError):
    """A ZooKeeper operation failed because of the state of one node; ``path`` is relative to the chroot."""

    condition = "failed"

    def __init__(self, operation: str, path: str, full_path: str | None = None) -> None:
        self.operation = operation
        self.path = path
        super().__init__(f"ZooKeeper {operation} {full_path or path}: {self.condition}")


class NodeExistsError(NodeError):
    """A create found the node already there."""

    condition = "node already exists"


class NoNodeError(NodeError):
    """The node (or, for a create, its parent) does not exist."""

    condition = "no such node (or, for a create, no parent node)"


class BadVersionError(NodeError, StaleStateError):
    """A compare-and-set, compare-and-delete or check found another data version."""

    condition = "node version differs from the expected one (changed concurrently)"


class NotEmptyError(NodeError):
    """A delete found children under the node."""

    condition = "node has children"


# -- values --------------------------------------------------------------------------------------------


class NodeStat(NamedTuple):
    """What the layout needs of a node's stat: its data version, the session owning it (0: persistent) and its
    creation time (epoch ms, the server's clock; 0 when unknown)."""

    version: int
    ephemeral_owner: int
    created_ms: int = 0


class CreateOp(NamedTuple):
    """Transaction operation: create ``path`` (relative) holding ``data``."""

    path: str
    data: bytes
    ephemeral: bool = False
    sequential: bool = False


class SetOp(NamedTuple):
    """Transaction operation: replace the data of ``path``; ``version`` -1 means any version."""

    path: str
    data: bytes
    version: int = -1


class DeleteOp(NamedTuple):
    """Transaction operation: delete ``path``; ``version`` -1 means any version."""

    path: str
    version: int = -1


class CheckOp(NamedTuple):
    """Transaction operation: fail the transaction unless ``path`` exists at data ``version``."""

    path: str
    version: int


Op = CreateOp | SetOp | DeleteOp | CheckOp


def parse_connect_string(connect: str) -> tuple[str, str]:
    """Split ``host:port[,host:port...][/chroot]`` into (hosts, chroot); chroot is "" or "/a/b" (no trailing /)."""
    if not isinstance(connect, str) or not connect.strip():
        raise ValueError(f"zookeeper.connect is empty: {connect!r}")
    hosts, slash, chroot = connect.strip().partition("/")
    if not hosts:
        raise ValueError(f"zookeeper.connect has no host:port before the chroot: {connect!r}")
    for host in hosts.split(","):
        name, colon, port = host.strip().rpartition(":")
        if not colon or not name or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"zookeeper.connect: {host!r} is not host:port (in {connect!r})")
    chroot = ("/" + chroot).rstrip("/") if slash else ""
    if chroot and any(part in ("", ".", "..") for part in chroot.split("/")[1:]):
        raise ValueError(f"zookeeper.connect: invalid chroot {chroot!r} (in {connect!r})")
    return hosts, chroot
