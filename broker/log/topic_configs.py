"""``TOPIC_CONFIG_KEYS``: every Kafka 3.9 topic-level config, one ``TopicConfigKey`` per name.

Each key names its ``server.properties`` synonym (the broker default), the ``LogConfig`` field it fills, its
type, meaning and allowed values (``at_least``/``at_most``, ``choices``, ``excluded``, ``pattern``), and for
values Kafka takes but kafkalog does not, ``unsupported``. ``broker.log.config`` parses, checks and describes
values by this table, in its order; ``docs/log-format.md`` lists it (checked by ``tests/broker/log/test_docs.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["TOPIC_CONFIG_KEYS", "TopicConfigKey"]


class TopicConfigKey(NamedTuple):
    """A topic-level config: its name, the ``server.properties`` key that sets its default (``""`` for the
    few topic-only configs, whose default is ``default``), the ``LogConfig`` field it fills, its type
    (``int``, ``long``, ``double``, ``list``, ``string``, ``boolean``), meaning and allowed values.
    ``unsupported(value)`` names why kafkalog refuses a value Kafka would take (None: accepted)."""

    name: str
    synonym: str
    field: str
    type: str
    doc: str
    at_least: float | None = None
    at_most: float | None = None
    choices: tuple[str, ...] | None = None
    default: Any = None
    excluded: tuple[Any, ...] = ()
    unsupported: Callable[[Any], str | None] | None = None
    pattern: str | None = None


_T = TopicConfigKey


def _only_false(reason: str) -> Callable[[Any], str | None]:
    return lambda value: reason if value else None


def _only_empty(reason: str) -> Callable[[Any], str | None]:
    return lambda value: reason if value else None


_NO_TIERED_STORAGE = "kafkalog has no tiered storage (remote log storage); only false is accepted"
_NO_THROTTLES = "kafkalog has no replication quotas (throttles); only an empty list is accepted"

TOPIC_CONFIG_KEYS: dict[str, TopicConfigKey] = {
    k.name: k
    for k in (
        _T(
            "cleanup.policy",
            "log.cleanup.policy",
            "cleanup_policy",
            "list",
            "`delete` (retention by time and size), `compact` (keep the latest record per key), or both.",
            choices=("delete", "compact"),
        ),
        _T(
            "delete.retention.ms",
            "log.cleaner.delete.retention.ms",
            "delete_retention_ms",
            "long",
            "How long tombstones stay in a compacted log after their segment was last written.",
            at_least=0,
        ),
        _T(
            "file.delete.delay.ms",
            "log.segment.delete.delay.ms",
            "file_delete_delay_ms",
            "long",
            "Delay between a segment leaving the log and its renamed `.deleted` files being removed.",
            at_least=0,
        ),
        _T(
            "flush.messages",
            "log.flush.interval.messages",
            "flush_interval_messages",
            "long",
            "fsync the log after this many messages (M in the design).",
            at_least=1,
        ),
        _T(
            "flush.ms",
            "log.flush.interval.ms",
            "flush_interval_ms",
            "long",
            "fsync data older than this (S in the design); checked by the flush scheduler.",
            at_least=0,
        ),
        _T(
            "index.interval.bytes",
            "log.index.interval.bytes",
            "index_interval_bytes",
            "int",
            "Bytes of batches between two offset index entries (0: an entry per batch).",
            at_least=0,
        ),
        _T(
            "max.message.bytes",
            "message.max.bytes",
            "max_message_bytes",
            "int",
            "Largest record batch accepted.",
            at_least=0,
        ),
        _T(
            "message.timestamp.type",
            "log.message.timestamp.type",
            "message_timestamp_type",
            "string",
            "`CreateTime` keeps the producer's timestamps; `LogAppendTime` stamps batches with the broker time.",
            choices=("CreateTime", "LogAppendTime"),
        ),
        _T(
            "min.cleanable.dirty.ratio",
            "log.cleaner.min.cleanable.ratio",
            "min_cleanable_dirty_ratio",
            "double",
            "Share of the cleanable log not yet compacted at which the cleaner compacts it.",
            at_least=0,
            at_most=1,
        ),
        _T(
            "min.compaction.lag.ms",
            "log.cleaner.min.compaction.lag.ms",
            "min_compaction_lag_ms",
            "long",
            "Segments whose newest record is younger than this are not compacted.",
            at_least=0,
        ),
        _T(
            "min.insync.replicas",
            "min.insync.replicas",
            "min_insync_replicas",
            "int",
            "Fewest in-sync replicas for an acks=all produce to succeed.",
            at_least=1,
        ),
        _T(
            "retention.bytes",
            "log.retention.bytes",
            "retention_bytes",
            "long",
            "Delete the oldest segments while the partition is larger than this (-1: no limit).",
            at_least=-1,
        ),
        _T(
            "retention.ms",
            "log.retention.ms",
            "retention_ms",
            "long",
            "Delete segments whose newest record is older than this (-1: keep forever).",
            at_least=-1,
        ),
        _T(
            "segment.bytes",
            "log.segment.bytes",
            "segment_bytes",
            "int",
            "Segment size at which a new segment is rolled.",
            at_least=14,
        ),
        _T(
            "segment.index.bytes",
            "log.index.size.max.bytes",
            "max_index_size",
            "int",
            "Largest offset index of a segment (8-byte entries); a full index rolls the segment.",
            at_least=4,
        ),
        _T(
            "segment.ms",
            "log.roll.ms",
            "segment_ms",
            "long",
            "Roll a segment once its first record is this old, even if it is not full.",
            at_least=1,
        ),
        _T(
            "unclean.leader.election.enable",
            "unclean.leader.election.enable",
            "unclean_leader_election_enable",
            "boolean",
            "Allow a replica outside the ISR to become leader (may lose data).",
        ),
        _T(
            "compression.type",
            "compression.type",
            "compression_type",
            "string",
            "`producer` stores what the producer sent, byte for byte; `uncompressed`, `gzip`, `snappy`, `lz4` or "
            "`zstd` make the leader recompress each batch sent with another codec.",
            choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        ),
        _T(
            "compression.gzip.level",
            "compression.gzip.level",
            "compression_gzip_level",
            "int",
            "gzip level of the recompression (1-9, or -1 for the default).",
            at_least=-1,
            at_most=9,
            excluded=(0,),
        ),
        _T(
            "compression.lz4.level",
            "compression.lz4.level",
            "compression_lz4_level",
            "int",
            "lz4 level of the recompression (1-17).",
            at_least=1,
            at_most=17,
        ),
        _T(
            "compression.zstd.level",
            "compression.zstd.level",
            "compression_zstd_level",
            "int",
            "zstd level of the recompression (-131072 to 22).",
            at_least=-131072,
            at_most=22,
        ),
        _T(
            "max.compaction.lag.ms",
            "log.cleaner.max.compaction.lag.ms",
            "max_compaction_lag_ms",
            "long",
            "A compacted log whose oldest uncompacted record is older than this is compacted even below "
            "`min.cleanable.dirty.ratio`.",
            at_least=1,
        ),
        _T(
            "message.timestamp.before.max.ms",
            "log.message.timestamp.before.max.ms",
            "message_timestamp_before_max_ms",
            "long",
            "With CreateTime, a record timestamped more than this before the broker time is INVALID_TIMESTAMP.",
            at_least=0,
        ),
        _T(
            "message.timestamp.after.max.ms",
            "log.message.timestamp.after.max.ms",
            "message_timestamp_after_max_ms",
            "long",
            "With CreateTime, a record timestamped more than this after the broker time is INVALID_TIMESTAMP.",
            at_least=0,
        ),
        _T(
            "message.timestamp.difference.max.ms",
            "log.message.timestamp.difference.max.ms",
            "message_timestamp_difference_max_ms",
            "long",
            "Deprecated (Kafka 3.6): a bound on both sides, applied with the two above (the smaller wins).",
            at_least=0,
        ),
        _T(
            "message.downconversion.enable",
            "log.message.downconversion.enable",
            "message_downconversion_enable",
            "boolean",
            "Down-convert for Fetch v0-3 consumers; when false they get UNSUPPORTED_VERSION.",
        ),
        _T(
            "message.format.version",
            "log.message.format.version",
            "message_format_version",
            "string",
            "Accepted and ignored, as in Kafka 3.x: batches are stored as v2.",
            pattern=r"\d+\.\d+(\.\d+)?(-IV\d+)?",
        ),
        _T(
            "preallocate",
            "log.preallocate",
            "preallocate",
            "boolean",
            "Preallocate segment files; only false.",
            unsupported=_only_false("kafkalog does not preallocate segment files; only false is accepted"),
        ),
        _T(
            "segment.jitter.ms",
            "log.roll.jitter.ms",
            "segment_jitter_ms",
            "long",
            "Each segment rolls up to this much (a random amount) before `segment.ms`.",
            at_least=0,
        ),
        _T(
            "local.retention.ms",
            "log.local.retention.ms",
            "local_retention_ms",
            "long",
            "Tiered storage's local retention (-2: retention.ms); no effect without tiered storage.",
            at_least=-2,
        ),
        _T(
            "local.retention.bytes",
            "log.local.retention.bytes",
            "local_retention_bytes",
            "long",
            "Tiered storage's local retention in bytes (-2: retention.bytes); no effect without tiered storage.",
            at_least=-2,
        ),
        _T(
            "remote.storage.enable",
            "",
            "remote_storage_enable",
            "boolean",
            "Tiered storage; only false.",
            default=False,
            unsupported=_only_false(_NO_TIERED_STORAGE),
        ),
        _T(
            "remote.log.copy.disable",
            "",
            "remote_log_copy_disable",
            "boolean",
            "Tiered storage; only false.",
            default=False,
            unsupported=_only_false(_NO_TIERED_STORAGE),
        ),
        _T(
            "remote.log.delete.on.disable",
            "",
            "remote_log_delete_on_disable",
            "boolean",
            "Tiered storage; only false.",
            default=False,
            unsupported=_only_false(_NO_TIERED_STORAGE),
        ),
        _T(
            "leader.replication.throttled.replicas",
            "",
            "leader_replication_throttled_replicas",
            "list",
            "Replicas throttled on the leader side; only empty.",
            default=(),
            unsupported=_only_empty(_NO_THROTTLES),
        ),
        _T(
            "follower.replication.throttled.replicas",
            "",
            "follower_replication_throttled_replicas",
            "list",
            "Replicas throttled on the follower side; only empty.",
            default=(),
            unsupported=_only_empty(_NO_THROTTLES),
        ),
    )
}
