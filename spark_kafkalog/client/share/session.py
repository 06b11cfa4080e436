"""``ShareSession``: a share consumer's share session with one leader broker (KIP-932), as pure state.

A share session is keyed on the broker by (group, member id) and holds the partitions the member fetches from that
broker. Every ShareFetch and ShareAcknowledge to the broker carries ``ShareSessionEpoch``:

* ``0`` opens a session (the first ShareFetch, or the next after the session was lost): it lists every partition
  to fetch and may carry no acknowledgements (records acquired under a lost session were released by the broker);
* every answered request moves the epoch on: 1, 2, ... (``next_epoch``; after 2^31-1 it wraps to 1);
* ``-1`` closes the session (a ShareAcknowledge with the last acknowledgements); the broker releases the member's
  acquired records that were not acknowledged.

Later ShareFetches are incremental: ``Topics`` lists the partitions new to the session and those with
acknowledgements; ``ForgottenTopicsData`` the session's partitions no longer fetched (the assignment moved, the
leader moved). A partition to acknowledge but no longer fetched must not be listed in a ShareFetch (that would
fetch it again): its acknowledgements go in a ShareAcknowledge first (``acknowledge_epoch``).

Answers: NONE advances the epoch and applies the plan's additions and forgotten partitions; SHARE_SESSION_NOT_FOUND,
INVALID_SHARE_SESSION_EPOCH, any other top-level error and a lost connection reset the session (epoch 0 next, no
partitions), as Kafka's ``ShareSessionHandler`` does.

Not thread-safe: the polling thread owns the sessions.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from spark_kafkalog.client.share.acknowledgements import AcknowledgementBatch
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

__all__ = ["FINAL_EPOCH", "INITIAL_EPOCH", "SESSION_ERRORS", "ShareFetchPlan", "ShareSession", "next_epoch"]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_INT32_MAX = 2**31 - 1
SESSION_ERRORS = frozenset({ErrorCode.SHARE_SESSION_NOT_FOUND, ErrorCode.INVALID_SHARE_SESSION_EPOCH})
"""Top-level codes that mean the broker has no (such) session for this member: the next request opens one."""


def next_epoch(epoch: int) -> int:
    """The epoch after an answered request at ``epoch`` (0 -> 1, ..., 2^31-1 -> 1; -1 stays -1)."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch >= _INT32_MAX else epoch + 1


@dataclass(frozen=True)
class ShareFetchPlan:
    """What one ShareFetch of a session carries: the partitions listed in ``Topics`` (in order), their
    acknowledgements, and the partitions to forget."""

    epoch: int
    partitions: tuple[TopicPartition, ...]
    acknowledgements: Mapping[TopicPartition, Sequence[AcknowledgementBatch]] = field(default_factory=dict)
    forgotten: tuple[TopicPartition, ...] = ()


class ShareSession:
    """The share session with broker ``node_id``; see the module docstring."""

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.epoch = INITIAL_EPOCH
        self.partitions: set[TopicPartition] = set()  # what the broker's session holds, as far as answers tell
        self.closed = False

    @property
    def open(self) -> bool:
        """The broker holds a session of this member (a request at epoch 0 was answered)."""
        return self.epoch > 0

    def fetch_plan(
        self,
        wanted: Collection[TopicPartition],
        acknowledgements: Mapping[TopicPartition, Sequence[AcknowledgementBatch]] | None = None,
    ) -> ShareFetchPlan:
        """The next ShareFetch: fetch ``wanted`` (the partitions led by this broker that the member is assigned),
        piggy-backing ``acknowledgements`` (for partitions of ``wanted`` only; none while the session is not open)."""
        acks = dict(acknowledgements or {})
        stray = sorted(tp for tp in acks if tp not in wanted)
        if stray:
            raise ValueError(f"acknowledgements of partitions not fetched from broker {self.node_id}: {stray}")
        if self.closed:
            raise ValueError(f"the share session with broker {self.node_id} is closed")
        if not self.open:
            if acks:
                raise ValueError("a share session is opened (epoch 0) without acknowledgements")
            return ShareFetchPlan(INITIAL_EPOCH, tuple(sorted(wanted)))
        listed = {tp for tp in wanted if tp not in self.partitions} | set(acks)
        forgotten = tuple(sorted(tp for tp in self.partitions if tp not in wanted))
        return ShareFetchPlan(self.epoch, tuple(sorted(listed)), acks, forgotten)

    def on_fetch_answer(self, plan: ShareFetchPlan, error_code: int) -> None:
        """The ShareFetch of ``plan`` was answered with top-level ``error_code``."""
        if error_code != ErrorCode.NONE:
            self.reset()
            return
        if plan.epoch == INITIAL_EPOCH:
            self.partitions = set(plan.partitions)
        else:
            self.partitions.update(plan.partitions)
            self.partitions.difference_update(plan.forgotten)
        self.epoch = next_epoch(plan.epoch)

    def acknowledge_epoch(self) -> int | None:
        """The epoch of a ShareAcknowledge now; None while no session is open (acknowledgements then cannot be
        sent: the records they name were released with the lost session)."""
        return self.epoch if self.open and not self.closed else None

    def on_acknowledge_answer(self, epoch: int, error_code: int) -> None:
        """The ShareAcknowledge sent at ``epoch`` was answered with top-level ``error_code``."""
        if epoch == FINAL_EPOCH:
            self.closed = True
            self.epoch = INITIAL_EPOCH
            self.partitions.clear()
            return
        if error_code != ErrorCode.NONE:
            self.reset()
            return
        self.epoch = next_epoch(epoch)

    def close_epoch(self) -> int | None:
        """``FINAL_EPOCH`` when an open session is to be closed with a ShareAcknowledge, else None (nothing to
        close); either way the session is closed afterwards."""
        was_open = self.open and not self.closed
        self.closed = True
        return FINAL_EPOCH if was_open else None

    def reset(self) -> None:
        """The session is gone (an error, a lost connection): the next ShareFetch opens a new one."""
        self.epoch = INITIAL_EPOCH
        self.partitions.clear()
