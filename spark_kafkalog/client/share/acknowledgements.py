"""``AcknowledgementTracker``: what a share consumer owes the broker for the records it acquired, as pure state.

Records come in through ShareFetch acquired; the tracker follows each acquired offset a poll hands out until it is
acknowledged and the acknowledgement taken for sending (``take``)::

    tracker.add_gaps(tp, offsets)           # acquired offsets without a record (compaction, control batches): GAP
    tracker.delivered(tp, offsets)          # a poll returned these records: in flight
    tracker.acknowledge(tp, offset, type)   # explicit mode only (ACCEPT, RELEASE, REJECT)
    tracker.settle_for_poll()               # before a poll fetches: implicit ACCEPTs every in-flight record,
                                            # explicit refuses while one is unacknowledged
    tracker.settle_for_commit()             # commit_sync/commit_async: implicit ACCEPTs them too
    batches = tracker.take()                # {tp: [AcknowledgementBatch]} to send (ShareFetch or ShareAcknowledge)

Modes (Kafka's ``share.acknowledgement.mode``): ``implicit`` acknowledges every record of the previous poll as
ACCEPT at the next poll, commit or close; ``explicit`` sends only what ``acknowledge`` marked, and a poll while a
delivered record is unacknowledged raises (as Kafka's "All records must be acknowledged in explicit acknowledgement
mode"). A record may be acknowledged again, changing its type, until the acknowledgement is taken for sending.

Wire form (``encode_batches``): Kafka's AcknowledgementBatch (first offset, last offset, acknowledge types) with
one type per run: offsets are sorted, and each maximal run of consecutive offsets with one type is one batch whose
``acknowledge_types`` is that single type. Types: 0 GAP, 1 ACCEPT, 2 RELEASE, 3 REJECT (4 RENEW is not sent).

Not thread-safe: the polling thread owns it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import TopicPartition

__all__ = ["GAP", "AcknowledgeType", "AcknowledgementBatch", "AcknowledgementTracker", "encode_batches"]

GAP = 0  # an acquired offset with no record to deliver (the broker archives it)


class AcknowledgeType(enum.IntEnum):
    """How a share consumer acknowledges a record (Kafka's ``AcknowledgeType``)."""

    ACCEPT = 1  # processed: never delivered again
    RELEASE = 2  # not processed: delivered again (to any member), with the next delivery count
    REJECT = 3  # unprocessable: never delivered again (archived)


@dataclass(frozen=True)
class AcknowledgementBatch:
    """One AcknowledgementBatch of ShareFetch/ShareAcknowledge: ``[first_offset, last_offset]`` and its types."""

    first_offset: int
    last_offset: int
    acknowledge_types: tuple[int, ...]


def encode_batches(acks: Mapping[int, int]) -> list[AcknowledgementBatch]:
    """``{offset: type}`` as batches, one per run of consecutive offsets of one type, in offset order."""
    out: list[AcknowledgementBatch] = []
    first = last = kind = None
    for offset in sorted(acks):
        t = acks[offset]
        if first is not None and last is not None and offset == last + 1 and t == kind:
            last = offset
            continue
        if first is not None and last is not None and kind is not None:
            out.append(AcknowledgementBatch(first, last, (kind,)))
        first = last = offset
        kind = t
    if first is not None and last is not None and kind is not None:
        out.append(AcknowledgementBatch(first, last, (kind,)))
    return out


def _ack_type(value: object) -> AcknowledgeType:
    try:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(value)
        return AcknowledgeType(value)
    except ValueError:
        raise KafkaClientError(
            f"acknowledge type {value!r} is not one of ACCEPT (1), RELEASE (2) or REJECT (3)", retriable=False
        ) from None


class AcknowledgementTracker:
    """Acknowledgements of one share consumer; ``explicit`` selects the mode (see the module docstring)."""

    def __init__(self, *, explicit: bool) -> None:
        self.explicit = explicit
        self._in_flight: dict[TopicPartition, dict[int, int | None]] = {}  # delivered: offset -> type or None
        self._pending: dict[TopicPartition, dict[int, int]] = {}  # to send: offset -> type

    # records in --------------------------------------------------------------------------------------
    def add_gaps(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        """Acquired ``offsets`` of ``tp`` with no record to deliver: acknowledged as GAP with the next send."""
        pending = self._pending.setdefault(tp, {})
        for offset in offsets:
            pending[offset] = GAP

    def delivered(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        """A poll returned the records of ``tp`` at ``offsets``: they are in flight until acknowledged."""
        in_flight = self._in_flight.setdefault(tp, {})
        for offset in offsets:
            in_flight[offset] = None

    # acknowledging ---------------------------------------------------------------------------------
    def acknowledge(self, tp: TopicPartition, offset: int, ack_type: object = AcknowledgeType.ACCEPT) -> None:
        """Mark the delivered record of ``tp`` at ``offset`` (explicit mode); raises when the mode is implicit, the
        type is unknown, or the record is not in flight (not delivered, or its acknowledgement was sent)."""
        kind = _ack_type(ack_type)
        if not self.explicit:
            raise KafkaClientError(
                "acknowledge() needs acknowledgement_mode='explicit' (share.acknowledgement.mode): this consumer "
                "acknowledges every delivered record as ACCEPT at its next poll or commit (implicit)",
                retriable=False,
            )
        in_flight = self._in_flight.get(tp)
        if in_flight is None or offset not in in_flight:
            raise KafkaClientError(
                f"record {tp} at offset {offset} cannot be acknowledged: it was not delivered by a poll of this "
                "consumer, or its acknowledgement was sent already",
                retriable=False,
                topic=tp.topic,
                partition=tp.partition,
            )
        in_flight[offset] = int(kind)

    def unacknowledged(self) -> dict[TopicPartition, list[int]]:
        """Delivered records without an acknowledgement yet, by partition (offsets sorted)."""
        out = {}
        for tp, in_flight in self._in_flight.items():
            offsets = sorted(o for o, t in in_flight.items() if t is None)
            if offsets:
                out[tp] = offsets
        return out

    def settle_for_poll(self) -> None:
        """Before a poll: implicit mode ACCEPTs every in-flight record; explicit mode raises while one is
        unacknowledged (naming them), else moves the acknowledged ones to the pending acknowledgements."""
        if self.explicit:
            missing = self.unacknowledged()
            if missing:
                shown = ", ".join(f"{tp}@{_offsets_text(offs)}" for tp, offs in sorted(missing.items()))
                raise KafkaClientError(
                    "all records must be acknowledged in explicit acknowledgement mode before the next poll; "
                    f"unacknowledged: {shown}",
                    retriable=False,
                )
        self._settle(AcknowledgeType.ACCEPT if not self.explicit else None)

    def settle_for_commit(self) -> None:
        """For commit_sync/commit_async: implicit mode ACCEPTs every in-flight record, explicit mode takes the
        acknowledged ones (unacknowledged records stay in flight)."""
        self._settle(AcknowledgeType.ACCEPT if not self.explicit else None)

    def settle_for_close(self) -> None:
        """Closing: implicit mode ACCEPTs every in-flight record; explicit mode sends what was acknowledged and
        RELEASEs the rest, so other members get them at once."""
        self._settle(AcknowledgeType.ACCEPT if not self.explicit else AcknowledgeType.RELEASE)

    def _settle(self, default: AcknowledgeType | None) -> None:
        for tp in list(self._in_flight):
            in_flight = self._in_flight[tp]
            pending = self._pending.setdefault(tp, {})
            for offset, t in list(in_flight.items()):
                kind = t if t is not None else (int(default) if default is not None else None)
                if kind is None:
                    continue
                pending[offset] = kind
                del in_flight[offset]
            if not in_flight:
                del self._in_flight[tp]

    def release(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        """Give acquired records back without delivering them (buffered records of a partition no longer
        assigned, or of a closing consumer): RELEASE with the next send."""
        pending = self._pending.setdefault(tp, {})
        for offset in offsets:
            pending[offset] = int(AcknowledgeType.RELEASE)

    def reject(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        """Acquired records that cannot be delivered (corrupt data): REJECT with the next send."""
        pending = self._pending.setdefault(tp, {})
        for offset in offsets:
            pending[offset] = int(AcknowledgeType.REJECT)

    def forget(self, tp: TopicPartition) -> None:
        """Drop everything about ``tp`` (its acquisition ended: the share session was lost)."""
        self._in_flight.pop(tp, None)
        self._pending.pop(tp, None)

    # records out -----------------------------------------------------------------------------------
    def has_pending(self, tps: Iterable[TopicPartition] | None = None) -> bool:
        keys = self._pending if tps is None else [tp for tp in tps if tp in self._pending]
        return any(self._pending[tp] for tp in keys)

    def pending_partitions(self) -> list[TopicPartition]:
        return sorted(tp for tp, acks in self._pending.items() if acks)

    def take(self, tps: Iterable[TopicPartition] | None = None) -> dict[TopicPartition, list[AcknowledgementBatch]]:
        """The pending acknowledgements (of ``tps``, default all) as batches; they are removed from the tracker."""
        keys = list(self._pending) if tps is None else [tp for tp in tps if tp in self._pending]
        out = {}
        for tp in keys:
            acks = self._pending.pop(tp)
            if acks:
                out[tp] = encode_batches(acks)
        return out


def _offsets_text(offsets: list[int]) -> str:
    runs = encode_batches(dict.fromkeys(offsets, 0))
    text = ",".join(
        str(b.first_offset) if b.first_offset == b.last_offset else f"{b.first_offset}-{b.last_offset}" for b in runs
    )
    return text
