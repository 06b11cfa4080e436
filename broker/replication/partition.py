"""One topic-partition hosted by this broker: its log, its role (leader or follower), leader epoch, ISR,
follower states and high watermark.

The role comes from the partition state the controller writes to the registry
(``/brokers/topics/<t>/partitions/<p>/state``). As leader, the partition appends producer batches, tracks
every follower's log end offset and last caught-up time from its Fetch requests (Kafka's ``Replica``
state) and moves the high watermark to the smallest log end offset among the in-sync replicas (the
leader included); the high watermark never moves back while this broker leads. As follower, the
``ReplicaFetcher`` appends the leader's batches and sets the high watermark from fetch responses.

ISR rules (Kafka's): a follower is caught up when its fetch offset reaches the leader's log end offset,
or the leader's log end offset at its previous fetch (then it was caught up at that fetch's time); an
ISR follower not caught up for ``replica.lag.time.max.ms`` is out of sync (``out_of_sync_replicas``); a
follower outside the ISR whose log end offset reaches the high watermark and the start of the current
leader epoch may rejoin at its next Fetch (``is_catching_up``). The ISR itself is changed only by the replica
manager, which writes it to the registry first (``set_isr``).

``data_notifier`` fires whenever new data becomes visible (the high watermark moved, as leader or, from the
leader's fetch answers, as follower), waking consumer long polls and acks=all produces; ``append_notifier``
fires on every append as leader and when the high watermark moves, waking follower long polls: a follower
whose last answer carried an older high watermark is answered at once (``take_high_watermark_news``), so
followers, and the consumers that read from them (KIP-392), learn it within a round trip rather than at the
end of a ``replica.fetch.wait.max.ms`` long poll.

Concurrency: event-loop only (the log's own background thread does retention and flushing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spark_kafkalog.protocol import ErrorCode

from .notifier import Notifier

if TYPE_CHECKING:
    from broker.cluster.registry import PartitionState
    from broker.log import AppendInfo, PartitionLog

UNKNOWN_OFFSET = -1


@dataclass(frozen=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass
class ReplicaState:
    """What the leader knows of one follower (times in ms of the broker's clock)."""

    broker_id: int
    log_end_offset: int = UNKNOWN_OFFSET
    log_start_offset: int = UNKNOWN_OFFSET
    last_sent_high_watermark: int = UNKNOWN_OFFSET
    last_caught_up_ms: int = 0
    last_fetch_leader_leo: int = UNKNOWN_OFFSET
    last_fetch_ms: int = 0

    def update_fetch(self, fetch_offset: int, leader_leo: int, now_ms: int) -> None:
        """A Fetch from this follower at ``fetch_offset`` (its log end offset) while the leader is at ``leader_leo``."""
        if fetch_offset >= leader_leo:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now_ms)
        elif fetch_offset >= self.last_fetch_leader_leo >= 0:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.log_end_offset = fetch_offset
        self.last_fetch_leader_leo = leader_leo
        self.last_fetch_ms = now_ms


def high_watermark_for(
    isr: tuple[int, ...], leader_id: int, leader_leo: int, followers: dict[int, ReplicaState]
) -> int:
    """The smallest log end offset over the ISR (the leader's own is ``leader_leo``); an ISR follower the
    leader has not heard from yet counts as -1 (nothing committed through it)."""
    hw = leader_leo
    for r in isr:
        if r == leader_id:
            continue
        st = followers.get(r)
        hw = min(hw, st.log_end_offset if st is not None else UNKNOWN_OFFSET)
    return hw


class Partition:
    def __init__(self, tp: TopicPartition, broker_id: int, log: PartitionLog) -> None:
        self.tp = tp
        self.broker_id = broker_id
        self.log = log
        self.leader_id = -1
        self.leader_epoch = -1
        self.leader_epoch_start_offset = 0
        self.isr: tuple[int, ...] = ()
        self.replicas: tuple[int, ...] = ()
        self.controller_epoch = 0
        self.zk_version = -1
        self.followers: dict[int, ReplicaState] = {}
        self.isr_update_pending = False
        self.data_notifier = Notifier()
        self.append_notifier = Notifier()

    def __repr__(self) -> str:
        return f"Partition({self.tp}, leader={self.leader_id}, epoch={self.leader_epoch}, isr={self.isr})"

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.broker_id

    @property
    def is_follower(self) -> bool:
        return self.leader_id >= 0 and self.leader_id != self.broker_id

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    def apply_state(self, state: PartitionState, replicas: tuple[int, ...], now_ms: int = 0) -> None:
        """Take the role the controller assigned; a new epoch as leader starts a new leader epoch in the log
        and fresh follower states (ISR followers count as caught up at ``now_ms``)."""
        self.replicas = tuple(replicas)
        self.isr = tuple(state.isr)
        self.controller_epoch = state.controller_epoch
        self.zk_version = state.zk_version
        was_leader = self.is_leader
        new_epoch = state.leader_epoch != self.leader_epoch
        self.leader_id = state.leader
        self.leader_epoch = state.leader_epoch
        if self.is_leader:
            if not was_leader or new_epoch:
                self.leader_epoch_start_offset = self.log.log_end_offset
                self.log.assign_leader_epoch(self.leader_epoch)
                self.followers = {
                    r: ReplicaState(r, last_caught_up_ms=now_ms if r in self.isr else 0)
                    for r in self.replicas
                    if r != self.broker_id
                }
            else:
                for r in self.replicas:
                    if r != self.broker_id and r not in self.followers:
                        self.followers[r] = ReplicaState(r)
            self.maybe_advance_high_watermark()
        else:
            self.followers = {}
            if was_leader:
                self.data_notifier.notify()  # waiters re-check and find NOT_LEADER_OR_FOLLOWER
                self.append_notifier.notify()

    def set_isr(self, isr: tuple[int, ...], zk_version: int) -> None:
        """The ISR this leader just wrote to the registry (node version ``zk_version``)."""
        self.isr = tuple(isr)
        self.zk_version = zk_version
        self.maybe_advance_high_watermark()
        self.data_notifier.notify()  # acks=all waiters re-check the ISR size

    def check_leader_epoch(self, current_leader_epoch: int) -> ErrorCode:
        """KIP-320 fencing: a client that knows a newer or older leader epoch than ours gets an error."""
        if current_leader_epoch < 0 or current_leader_epoch == self.leader_epoch:
            return ErrorCode.NONE
        if current_leader_epoch < self.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        return ErrorCode.UNKNOWN_LEADER_EPOCH

    def append_as_leader(self, records, *, required_acks: int) -> AppendInfo:
        """Append producer batches (v2, offsets unassigned). Raises ``LogAppendError`` with the error code:
        NOT_ENOUGH_REPLICAS for acks=all while the ISR is smaller than ``min.insync.replicas``."""
        from broker.log import LogAppendError

        min_insync_replicas = self.log.config.min_insync_replicas
        if required_acks == -1 and len(self.isr) < min_insync_replicas:
            raise LogAppendError(
                ErrorCode.NOT_ENOUGH_REPLICAS,
                f"{self.tp}: ISR {list(self.isr)} is smaller than min.insync.replicas={min_insync_replicas}",
            )
        info = self.log.append_as_leader(records, leader_epoch=self.leader_epoch)
        if not info.duplicate:
            self.append_notifier.notify()
            self.maybe_advance_high_watermark()
        return info

    def update_follower_fetch(
        self, replica_id: int, fetch_offset: int, now_ms: int, log_start_offset: int = -1
    ) -> bool:
        """Record a follower's Fetch (and its log start, v5+, which the preferred read replica choice checks);
        advances the high watermark. False when ``replica_id`` is no replica. A fetch offset beyond the log end
        (a diverged follower, answered OFFSET_OUT_OF_RANGE) is not recorded."""
        st = self.followers.get(replica_id)
        if st is None:
            return False
        if fetch_offset > self.log.log_end_offset:
            return True
        st.update_fetch(fetch_offset, self.log.log_end_offset, now_ms)
        st.log_start_offset = log_start_offset
        self.maybe_advance_high_watermark()
        return True

    def maybe_advance_high_watermark(self) -> None:
        """HW = min LEO over the ISR; it only moves forward (Kafka's ``maybeIncrementLeaderHW``)."""
        if not self.is_leader:
            return
        hw = high_watermark_for(self.isr, self.broker_id, self.log.log_end_offset, self.followers)
        if hw > self.log.high_watermark:
            self.log.high_watermark = hw
            self.data_notifier.notify()
            self.append_notifier.notify()  # followers learn the new high watermark now

    def take_high_watermark_news(self, replica_id: int, high_watermark: int) -> bool:
        """Is ``high_watermark`` (the one this answer to follower ``replica_id`` carries) newer than the last one
        it was sent? Records it as sent."""
        st = self.followers.get(replica_id)
        if st is None or high_watermark <= st.last_sent_high_watermark:
            return False
        st.last_sent_high_watermark = high_watermark
        return True

    def set_follower_high_watermark(self, high_watermark: int) -> None:
        """As follower: the high watermark the leader's fetch answer gave (capped at the log end by the caller);
        wakes consumer long polls when it moved forward."""
        moved = high_watermark > self.log.high_watermark
        self.log.high_watermark = high_watermark
        if moved:
            self.data_notifier.notify()

    def out_of_sync_replicas(self, now_ms: int, max_lag_ms: int) -> list[int]:
        """ISR followers not caught up within ``max_lag_ms``."""
        if not self.is_leader:
            return []
        out = []
        for r in self.isr:
            st = self.followers.get(r)
            if r != self.broker_id and (st is None or now_ms - st.last_caught_up_ms > max_lag_ms):
                out.append(r)
        return out

    def is_catching_up(self, replica_id: int) -> bool:
        """Is follower ``replica_id`` outside the ISR but at the high watermark and this leader epoch's
        start (judged from its latest Fetch)?"""
        st = self.followers.get(replica_id)
        return (
            self.is_leader
            and st is not None
            and replica_id not in self.isr
            and replica_id in self.replicas
            and st.log_end_offset >= self.log.high_watermark
            and st.log_end_offset >= self.leader_epoch_start_offset
        )
