"""ListOffsets requests and responses (pure): version floors per spec, body building, result parsing.

Version floors: a timestamp spec (>= 0) needs v1 (v0 answered with segment boundaries, not the
first offset at a timestamp); ``read_committed`` needs v2 (isolation level); ``MAX_TIMESTAMP`` (-3) needs
v7. v0 answers carry ``old_style_offsets`` (we ask for one offset); v1+ carry ``offset`` and ``timestamp``.
When no record has a timestamp >= the spec, Kafka answers offset -1 and timestamp -1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from spark_kafkalog.client.types import OffsetSpec, TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

__all__ = ["ListOffsetsResult", "list_offsets_request", "min_list_offsets_version", "parse_list_offsets", "check_spec"]

_LIST_OFFSETS = API_BY_KEY[int(ApiKey.LIST_OFFSETS)]


class ListOffsetsResult(NamedTuple):
    error_code: int
    offset: int
    timestamp: int
    leader_epoch: int


def check_spec(tp: TopicPartition, spec: Any) -> int:
    if isinstance(spec, bool) or not isinstance(spec, int) or spec < OffsetSpec.MAX_TIMESTAMP:
        raise ValueError(
            f"offset spec for {tp} must be -1 (latest), -2 (earliest), -3 (max timestamp) or a timestamp >= 0 "
            f"in milliseconds, got {spec!r}"
        )
    return spec


def min_list_offsets_version(specs: Iterable[int], isolation_level: int) -> int:
    """The lowest ListOffsets version able to answer every spec at ``isolation_level``."""
    floor = 2 if isolation_level else 0
    for spec in specs:
        if spec == OffsetSpec.MAX_TIMESTAMP:
            floor = max(floor, 7)
        elif spec >= 0:
            floor = max(floor, 1)
    return floor


def list_offsets_request(specs: Mapping[TopicPartition, tuple[int, int]], isolation_level: int) -> Any:
    """Body asking for ``{tp: (spec, current leader epoch)}``."""
    R = _LIST_OFFSETS.Request
    by_topic: dict[str, list[Any]] = {}
    for tp, (spec, epoch) in specs.items():
        by_topic.setdefault(tp.topic, []).append(
            R.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=tp.partition, current_leader_epoch=epoch, timestamp=spec, max_num_offsets=1
            )
        )
    return R(
        replica_id=-1,
        isolation_level=isolation_level,
        topics=[R.ListOffsetsTopic(name=name, partitions=parts) for name, parts in by_topic.items()],
    )


def parse_list_offsets(response: Any, version: int) -> dict[TopicPartition, ListOffsetsResult]:
    out = {}
    for topic in response.topics:
        for p in topic.partitions:
            if version == 0:
                offsets = p.old_style_offsets or []
                offset = offsets[0] if offsets else -1
                timestamp = -1
            else:
                offset, timestamp = p.offset, p.timestamp
            out[TopicPartition(topic.name, p.partition_index)] = ListOffsetsResult(
                p.error_code, offset, timestamp, p.leader_epoch
            )
    return out
