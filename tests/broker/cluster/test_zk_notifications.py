"""``notifications_since``, the loop shared by ``config_changes_since`` and ``acl_changes_since``, over a fake
session (pure: no ZooKeeper): positions, purged notifications, undecodable ones and a missing directory."""

from __future__ import annotations

import pytest

from broker.cluster.zk_nodes import NoNodeError
from broker.cluster.zk_notifications import notifications_since

DIR = "/changes"


class FakeSession:
    """``children`` and ``get_if_exists`` over a dict child -> data; ``vanish`` children disappear when read."""

    def __init__(self, nodes: dict[str, bytes] | None, vanish: frozenset[str] = frozenset()) -> None:
        self.nodes, self.vanish, self.read = nodes, vanish, []

    def children(self, path: str) -> list[str]:
        assert path == DIR
        if self.nodes is None:
            raise NoNodeError("get_children", path)
        return list(self.nodes)[::-1]  # ZooKeeper gives no order

    def get_if_exists(self, path: str):
        self.read.append(path)
        child = path.rsplit("/", 1)[1]
        return None if child in self.vanish else (self.nodes[child], object())


def sequence(child: str) -> int | None:
    digits = child.removeprefix("n_")
    return int(digits) if child.startswith("n_") and digits.isdigit() else None


def decode(data: bytes, what: str) -> str:
    if data == b"bad":
        raise ValueError(f"{what}: bad")
    return data.decode()


NODES = {"n_0000000003": b"a", "n_0000000005": b"b", "n_0000000009": b"c", "other": b"x"}


@pytest.mark.parametrize(
    ("nodes", "after", "vanish", "expected"),
    [
        (NODES, 3, frozenset(), (9, ["b", "c"])),
        (NODES, 5, frozenset(), (9, ["c"])),
        (NODES, 4, frozenset(), (9, ["b", "c"])),  # numbers skip: 4 is still known complete
        (NODES, 9, frozenset(), (9, [])),
        (NODES, 12, frozenset(), (12, [])),  # the reader is ahead (the newest were purged): nothing to read
        (NODES, 2, frozenset(), (9, None)),  # 3 is the oldest left: notifications after 2 may have been purged
        (NODES, -1, frozenset(), (9, None)),  # no position yet: read everything
        ({}, 7, frozenset(), (7, [])),  # none left at all: complete
        ({}, -1, frozenset(), (-1, None)),
        (NODES, 3, frozenset({"n_0000000009"}), (9, None)),  # purged while being read
    ],
)
def test_positions(nodes, after, vanish, expected):
    zk = FakeSession(dict(nodes), vanish)
    assert notifications_since(zk, DIR, after, sequence=sequence, decode=decode, undecodable=lambda e: True) == expected


def test_only_notifications_above_the_position_are_read():
    zk = FakeSession(dict(NODES))
    notifications_since(zk, DIR, 5, sequence=sequence, decode=decode, undecodable=lambda e: True)
    assert zk.read == [f"{DIR}/n_0000000009"]


@pytest.mark.parametrize(("skip", "expected"), [(True, (9, ["a", "c"])), (False, (9, None))])
def test_an_undecodable_notification_is_skipped_or_gives_up_as_the_caller_says(skip, expected):
    errors: list[ValueError] = []

    def undecodable(exc: ValueError) -> bool:
        errors.append(exc)
        return skip

    zk = FakeSession({"n_0000000001": b"z", "n_0000000003": b"a", "n_0000000005": b"bad", "n_0000000009": b"c"})
    assert notifications_since(zk, DIR, 1, sequence=sequence, decode=decode, undecodable=undecodable) == expected
    assert [str(e) for e in errors] == [f"{DIR}/n_0000000005: bad"]


def test_a_missing_directory_is_empty_only_when_allowed():
    zk = FakeSession(None)
    got = notifications_since(zk, DIR, 4, sequence=sequence, decode=decode, undecodable=bool, missing_ok=True)
    assert got == (4, [])
    with pytest.raises(NoNodeError):
        notifications_since(zk, DIR, 4, sequence=sequence, decode=decode, undecodable=bool)
