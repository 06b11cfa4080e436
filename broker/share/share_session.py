"""Share sessions (KIP-932): the partitions a share consumer fetches from this broker, keyed by (group id, member id).

A ShareFetch names its session with ``share_session_epoch`` (Kafka's ``ShareRequestMetadata`` rules):

- ``0`` opens a session: any session of the same key is replaced; the request's partitions are the session's.
  A ShareFetch at epoch 0 may carry no acknowledgements (INVALID_REQUEST); a full cache
  (``group.share.max.share.sessions``) answers SHARE_SESSION_LIMIT_REACHED. The next expected epoch is 1.
- ``-1`` closes the session (the caller releases the member's acquired records): SHARE_SESSION_NOT_FOUND
  without one; nothing is fetched.
- any other epoch must equal the session's expected one (INVALID_SHARE_SESSION_EPOCH; SHARE_SESSION_NOT_FOUND
  without a session); the request's partitions are added, ``forgotten_topics_data`` removed, and the whole
  session is fetched. The expected epoch then increments (``Integer.MAX_VALUE`` wraps to 1).

ShareAcknowledge (``acknowledge_epoch``) follows the same rules except that epoch 0 is
INVALID_SHARE_SESSION_EPOCH and -1 keeps the expected epoch (the caller closes the session after
acknowledging). A session remembers the connection that opened it: when that connection goes, the caller
removes it (``remove_connection``) and releases the member's records, as Kafka 4.1 does.

Partitions are ``(topic id, partition)`` pairs, in the order they were added. Errors are raised as
``ShareSessionError`` carrying the Kafka error code. Event-loop only (no locks).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "ShareFetchContext",
    "ShareSession",
    "ShareSessionCache",
    "ShareSessionError",
    "next_epoch",
]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_MAX_EPOCH = 0x7FFFFFFF

SharePartitionId = tuple[uuid.UUID, int]
"""(topic id, partition)."""


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (Kafka's ``ShareRequestMetadata.nextEpoch``): 0 and -1 lead to 1, the
    largest int32 wraps to 1."""
    if epoch < 0 or epoch == _MAX_EPOCH:
        return 1
    return epoch + 1


class ShareSessionError(Exception):
    """A session rule was broken; ``code`` is the error the whole request answers."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    epoch: int
    """The epoch the next request must carry."""
    connection_id: int | None = None
    partitions: dict[SharePartitionId, None] = field(default_factory=dict)


@dataclass(frozen=True)
class ShareFetchContext:
    """What a ShareFetch reads: ``partitions`` (the session's, after the request's changes; none when final)."""

    kind: Literal["initial", "subsequent", "final"]
    partitions: tuple[SharePartitionId, ...]


class ShareSessionCache:
    """At most ``max_sessions`` share sessions (``group.share.max.share.sessions``)."""

    def __init__(self, max_sessions: int) -> None:
        if max_sessions < 0:
            raise ValueError(f"max_sessions must be >= 0, not {max_sessions}")
        self.max_sessions = max_sessions
        self._sessions: dict[tuple[str, str], ShareSession] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self._sessions.get((group_id, member_id))

    def sessions(self) -> list[ShareSession]:
        return list(self._sessions.values())

    def new_fetch_context(
        self,
        group_id: str,
        member_id: str,
        epoch: int,
        fetch: Iterable[SharePartitionId],
        forget: Iterable[SharePartitionId] = (),
        *,
        has_acknowledgements: bool = False,
        connection_id: int | None = None,
    ) -> ShareFetchContext:
        """Apply a ShareFetch's session rules (module docstring); raises ``ShareSessionError``."""
        key = (group_id, member_id)
        if epoch == FINAL_EPOCH:
            if key not in self._sessions:
                raise ShareSessionError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"no share session for member {member_id}")
            return ShareFetchContext("final", ())
        if epoch == INITIAL_EPOCH:
            if has_acknowledgements:
                raise ShareSessionError(
                    ErrorCode.INVALID_REQUEST, "a ShareFetch opening a share session (epoch 0) carries acknowledgements"
                )
            self._sessions.pop(key, None)
            if len(self._sessions) >= self.max_sessions:
                raise ShareSessionError(
                    ErrorCode.SHARE_SESSION_LIMIT_REACHED,
                    f"the broker holds group.share.max.share.sessions={self.max_sessions} share sessions",
                )
            session = ShareSession(group_id, member_id, next_epoch(INITIAL_EPOCH), connection_id)
            session.partitions = dict.fromkeys(fetch)
            self._sessions[key] = session
            return ShareFetchContext("initial", tuple(session.partitions))
        session = self._expect(key, epoch)
        for tp in fetch:
            session.partitions.setdefault(tp, None)
        for tp in forget:
            session.partitions.pop(tp, None)
        session.epoch = next_epoch(session.epoch)
        if connection_id is not None:
            session.connection_id = connection_id
        return ShareFetchContext("subsequent", tuple(session.partitions))

    def acknowledge_epoch(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """Apply a ShareAcknowledge's session rules (module docstring); raises ``ShareSessionError``."""
        if epoch == INITIAL_EPOCH:
            raise ShareSessionError(
                ErrorCode.INVALID_SHARE_SESSION_EPOCH, "a ShareAcknowledge cannot open a share session (epoch 0)"
            )
        key = (group_id, member_id)
        if epoch == FINAL_EPOCH:
            session = self._sessions.get(key)
            if session is None:
                raise ShareSessionError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"no share session for member {member_id}")
            return session
        session = self._expect(key, epoch)
        session.epoch = next_epoch(session.epoch)
        return session

    def remove(self, group_id: str, member_id: str) -> ShareSession | None:
        return self._sessions.pop((group_id, member_id), None)

    def remove_connection(self, connection_id: int) -> list[ShareSession]:
        """Remove and return the sessions last used over ``connection_id`` (its client disconnected)."""
        gone = [s for s in self._sessions.values() if s.connection_id == connection_id]
        for s in gone:
            del self._sessions[(s.group_id, s.member_id)]
        return gone

    def _expect(self, key: tuple[str, str], epoch: int) -> ShareSession:
        session = self._sessions.get(key)
        if session is None:
            raise ShareSessionError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"no share session for member {key[1]}")
        if session.epoch != epoch:
            raise ShareSessionError(
                ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                f"share session epoch {epoch} is not the expected {session.epoch}",
            )
        return session
