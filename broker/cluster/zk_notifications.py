"""Reading ZooKeeper change notifications since a position: one loop for ``/config/changes`` and the ACL ones.

A change notification is a persistent sequential node, ``<directory>/<prefix><10-digit sequence number>``
(``/config/changes/config_change_0000000007``, ``/kafka-acl-changes/acl_changes_0000000012``), whose data names
what changed. A reader remembers the highest sequence number it has handled and asks for the ones above it.
Notifications are purged and ZooKeeper's sequence counter also counts deletions, so numbers skip: a position is
known complete only while a notification numbered at or below it is still there, or none is left at all.

Thread-safe (a pure function over a thread-safe ``ZooKeeperSession``). No kazoo name appears here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from broker.cluster.zk_nodes import NoNodeError

if TYPE_CHECKING:
    from broker.cluster.zk_session import ZooKeeperSession

__all__ = ["notifications_since"]

T = TypeVar("T")


def notifications_since(
    zk: ZooKeeperSession,
    directory: str,
    after: int,
    *,
    sequence: Callable[[str], int | None],
    decode: Callable[[bytes, str], T],
    undecodable: Callable[[ValueError], bool],
    missing_ok: bool = False,
) -> tuple[int, list[T] | None]:
    """The notifications under ``directory`` numbered above ``after``: ``(highest sequence number seen, what
    ``decode`` makes of each, in sequence order)``; the highest is ``after`` when there is none.

    ``sequence(child)`` is a child's sequence number (None: not a notification, ignored); ``decode(data, what)``
    decodes one (``what``: its path, for messages), raising ValueError when it cannot; ``undecodable(exc)`` is
    called with that error (log it) and answers whether to skip the notification (True) or give up (False).
    The list is None when ``after`` is negative, when notifications after it may have been purged (also while
    being read), or when ``undecodable`` gave up: the reader then re-reads everything it follows.
    ``missing_ok``: a missing ``directory`` counts as empty (else ``NoNodeError``).
    """
    try:
        children = zk.children(directory)
    except NoNodeError:
        if not missing_ok:
            raise
        children = []
    numbered = sorted((seq, child) for child in children if (seq := sequence(child)) is not None)
    highest = max(after, numbered[-1][0]) if numbered else after
    if after < 0 or (numbered and numbered[0][0] > after):
        return highest, None
    decoded: list[T] = []
    for seq, child in numbered:
        if seq <= after:
            continue
        node = zk.get_if_exists(f"{directory}/{child}")
        if node is None:  # purged while being read: something may be missed
            return highest, None
        try:
            decoded.append(decode(node[0], f"{directory}/{child}"))
        except ValueError as exc:
            if not undecodable(exc):
                return highest, None
    return highest, decoded
