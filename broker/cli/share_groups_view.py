"""``kafkalog groups describe`` of a share group (KIP-932), in Kafka 4.4 ``kafka-share-groups --describe``'s columns.

- offsets (the default): GROUP, TOPIC, PARTITION, START-OFFSET, LAG: the start offset (SPSO) of each share-partition
  the group has state for (``-`` when none is chosen yet) and the records from it to the end of the log not yet
  acknowledged (the lag the coordinator reports; else the log end offset minus the start offset);
- ``--members``: GROUP, CONSUMER-ID, HOST, CLIENT-ID, #PARTITIONS, ASSIGNMENT (``topic:0,1;other:2``);
  ``--verbose`` adds MEMBER-EPOCH after CLIENT-ID;
- ``--state``: GROUP, COORDINATOR (ID), STATE, #MEMBERS; ``--verbose`` adds GROUP-EPOCH and ASSIGNMENT-EPOCH
  before #MEMBERS.
"""

from __future__ import annotations

from typing import Any

__all__ = ["share_member_rows", "share_offset_rows", "share_state_rows"]


def share_offset_rows(admin: Any, group_id: str) -> list[tuple[str, ...]]:
    from spark_kafkalog.client import OffsetSpec

    offsets = admin.list_share_group_offsets(group_id)
    readable = [tp for tp, o in offsets.items() if o.error is None]
    ends = admin.client.list_offsets(dict.fromkeys(readable, OffsetSpec.LATEST)) if readable else {}
    rows: list[tuple[str, ...]] = [("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")]
    for tp, o in sorted(offsets.items()):
        if o.error is not None or o.start_offset < 0:
            start, lag = "-", "-"
        else:
            start = str(o.start_offset)
            lag = str(o.lag if o.lag is not None else max(0, ends[tp] - o.start_offset))
        rows.append((group_id, tp.topic, str(tp.partition), start, lag))
    if len(rows) == 1:
        print(f"Share group '{group_id}' has no offset information.")
        return []
    return rows


def _assignment_string(partitions: Any) -> str:
    """Kafka 4.x's form: ``topic:0,1;other:2`` (topics sorted), ``-`` for none (as ``groups``' views)."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ";".join(f"{t}:{','.join(map(str, sorted(ps)))}" for t, ps in sorted(by_topic.items())) or "-"


def share_member_rows(admin: Any, group_id: str, verbose: bool) -> list[tuple[str, ...]]:
    d = admin.describe_share_groups([group_id])[group_id]
    if not d.members:
        print(f"Share group '{group_id}' has no active members.")
        return []
    header: tuple[str, ...] = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID")
    header += ("MEMBER-EPOCH",) if verbose else ()
    rows: list[tuple[str, ...]] = [header + ("#PARTITIONS", "ASSIGNMENT")]
    for m in sorted(d.members, key=lambda m: m.member_id):
        row: tuple[str, ...] = (group_id, m.member_id, m.host, m.client_id)
        row += (str(m.member_epoch),) if verbose else ()
        rows.append(row + (str(len(m.assignment)), _assignment_string(m.assignment)))
    return rows


def share_state_rows(admin: Any, group_id: str, verbose: bool) -> list[tuple[str, ...]]:
    d = admin.describe_share_groups([group_id])[group_id]
    brokers = admin.describe_cluster()["brokers"]
    coordinator = f"{brokers[d.coordinator]} ({d.coordinator})" if d.coordinator in brokers else f"- ({d.coordinator})"
    header: tuple[str, ...] = ("GROUP", "COORDINATOR (ID)", "STATE")
    row: tuple[str, ...] = (group_id, coordinator, d.state)
    if verbose:
        header += ("GROUP-EPOCH", "ASSIGNMENT-EPOCH")
        row += (str(d.group_epoch), str(d.assignment_epoch))
    return [header + ("#MEMBERS",), row + (str(len(d.members)),)]
