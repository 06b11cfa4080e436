"""Loading a share partition on its leader: the group's settings, the persisted state, the start offset.

``group_settings`` takes the group's ``ShareGroupConfig`` (``group_configs.share_config(group)``: record lock
duration, delivery count limit, ``share.auto.offset.reset``, ``share.isolation.level``) or, without one, the
broker defaults (``group.share.record.lock.duration.ms``, ``group.share.delivery.count.limit``, latest,
read_uncommitted).

``load_share_partition`` reads the state with ``persister.read(group, topic id, partition, leader epoch)``; a
start offset of -1 (initialized, none chosen yet) is resolved by ``share.auto.offset.reset`` (``latest``: the
high watermark, ``earliest``: the log start offset, ``by_duration:<ISO-8601 duration>``: the first offset
whose timestamp is at or after now minus the duration, else the high watermark) and written back before the
share partition is used. That ``share.auto.offset.reset`` is read from the registry, the source of truth
(``group_configs.read_share_config(group)``: one registry read per start offset resolved), not only from the
cache the settings come from, which may not have seen an alter answered moments ago on another broker; the
cached value is used when that read fails. Persister errors map as Kafka's ``SharePartition.maybeInitialize``:
NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS -> COORDINATOR_NOT_AVAILABLE; FENCED_LEADER_EPOCH ->
NOT_LEADER_OR_FOLLOWER; others as they are.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import uuid
from collections.abc import Callable
from typing import Any, NamedTuple

from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "GroupSettings",
    "current_auto_offset_reset",
    "group_settings",
    "load_share_partition",
    "parse_iso_duration_ms",
    "resolve_start_offset",
]

log = logging.getLogger("kafkalog.share")

_DURATION = re.compile(
    r"^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$",
    re.IGNORECASE,
)
_MAPPED = {
    ErrorCode.NOT_COORDINATOR: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.FENCED_LEADER_EPOCH: ErrorCode.NOT_LEADER_OR_FOLLOWER,
}


class GroupSettings(NamedTuple):
    record_lock_duration_ms: int
    delivery_count_limit: int
    auto_offset_reset: str
    isolation_level: str

    @property
    def read_committed(self) -> bool:
        return self.isolation_level == "read_committed"


def group_settings(config: Any, group_configs: Any, group_id: str) -> GroupSettings:
    """The share settings of ``group_id`` (module docstring)."""
    found = None
    if group_configs is not None:
        found = group_configs.share_config(group_id)
    if found is None:
        return GroupSettings(
            config["group.share.record.lock.duration.ms"],
            config["group.share.delivery.count.limit"],
            "latest",
            "read_uncommitted",
        )
    return GroupSettings(
        int(found.record_lock_duration_ms),
        int(found.delivery_count_limit),
        str(found.auto_offset_reset),
        str(found.isolation_level),
    )


async def current_auto_offset_reset(group_configs: Any, group_id: str, cached: str) -> str:
    """The group's ``share.auto.offset.reset`` as the registry holds it (``group_configs.read_share_config``);
    ``cached`` without group configs or when reading fails."""
    read = getattr(group_configs, "read_share_config", None)
    if read is None:
        return cached
    try:
        return str((await read(group_id)).auto_offset_reset)
    except Exception:  # noqa: BLE001 - the cached value answers; never raised into a handler
        log.exception("reading the share.auto.offset.reset of group %r failed; using the cached %s", group_id, cached)
        return cached


def parse_iso_duration_ms(text: str) -> int:
    """Milliseconds of an ISO-8601 duration as Java's ``Duration.parse`` reads it (``PnDTnHnMn.nS``)."""
    m = _DURATION.match(text.strip())
    if m is None or not any(m.group(i) for i in range(2, 6)):
        raise ValueError(f"not an ISO-8601 duration: {text!r}")
    sign = -1 if m.group(1) == "-" else 1
    days, hours, minutes, seconds = (int(m.group(i) or 0) for i in range(2, 6))
    frac = (m.group(6) or "").ljust(3, "0")[:3]
    ms = ((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000
    ms += (-1 if m.group(5) and m.group(5).startswith("-") else 1) * int(frac or 0)
    return sign * ms


def resolve_start_offset(plog: Any, auto_offset_reset: str, now_ms: int) -> int:
    """The start offset a new share partition takes (module docstring)."""
    reset = auto_offset_reset.strip().lower()
    if reset == "earliest":
        return plog.log_start_offset
    if reset.startswith("by_duration:"):
        since = now_ms - parse_iso_duration_ms(auto_offset_reset.split(":", 1)[1])
        found = plog.offset_for_timestamp(since)
        return plog.high_watermark if found is None else min(found[0], plog.high_watermark)
    return plog.high_watermark


async def load_share_partition(
    persister: Any,
    group_id: str,
    topic_id: uuid.UUID,
    partition: int,
    part: Any,
    settings: GroupSettings,
    config: Any,
    *,
    clock: Callable[[], float],
    wall_ms: Callable[[], int],
    factory: Callable[..., Any] | None = None,
    group_configs: Any = None,
) -> tuple[Any, ErrorCode, str | None]:
    """``(SharePartition, NONE, None)`` or ``(None, error, message)`` (module docstring); ``group_configs``
    (``broker.config_admin.group_configs.GroupConfigs``) reads ``share.auto.offset.reset`` when the start offset
    is unresolved, else ``settings``' is used."""
    if persister is None:
        return None, ErrorCode.COORDINATOR_NOT_AVAILABLE, "the share persister is not running"
    try:
        code, msg, state = await persister.read(group_id, topic_id, partition, part.leader_epoch)
    except Exception as e:  # noqa: BLE001 - answered as an error, never raised into a handler
        return None, ErrorCode.UNKNOWN_SERVER_ERROR, f"reading the share state failed: {e}"
    if code != ErrorCode.NONE or state is None:
        code = ErrorCode(code) if code != ErrorCode.NONE else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return None, _MAPPED.get(code, code), msg or "the share-partition state could not be read"
    resolved = state.start_offset < 0
    if resolved:
        reset = await current_auto_offset_reset(group_configs, group_id, settings.auto_offset_reset)
        try:
            start = resolve_start_offset(part.log, reset, wall_ms())
        except ValueError as e:
            return None, ErrorCode.INVALID_CONFIG, str(e)
        state = dataclasses.replace(state, start_offset=start, state_batches=())
    if factory is None:
        from .share_partition import SharePartition

        factory = SharePartition
    sp = factory(
        group_id,
        topic_id,
        partition,
        state,
        lock_duration_ms=settings.record_lock_duration_ms,
        delivery_count_limit=settings.delivery_count_limit,
        max_in_flight_records=config["group.share.partition.max.record.locks"],
        clock=clock,
    )
    sp.advance_log_start(part.log.log_start_offset)
    if resolved:
        st = sp.persisted_state()
        try:
            code, msg = await persister.write(
                group_id, topic_id, partition, st.state_epoch, part.leader_epoch, st.start_offset, st.state_batches
            )
        except Exception as e:  # noqa: BLE001
            return None, ErrorCode.UNKNOWN_SERVER_ERROR, f"writing the share state failed: {e}"
        if code != ErrorCode.NONE:
            code = ErrorCode(code)
            return None, _MAPPED.get(code, code), msg
    return sp, ErrorCode.NONE, None
