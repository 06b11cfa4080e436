"""Kafka record formats: v2 record batches, v0/v1 message sets, codecs, checksums, the partitioner hash.

Modules: ``batch`` (v2 header, validation, in-place rewrites), ``batch_builder``, ``batch_reader``,
``legacy`` (v0/v1), ``convert`` (v0/v1 <-> v2), ``splitter`` (buffers of mixed entries),
``compression`` (+ ``snappy_framing``, ``kafka_lz4``), ``crc``, ``murmur2``. Every decode failure is a
``CorruptRecordError`` (a ``DecodeError``).
"""

from spark_kafkalog.records.batch import (
    BATCH_HEADER_SIZE,
    BatchHeader,
    parse_batch_header,
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
    validate_batch,
)
from spark_kafkalog.records.batch_builder import RecordBatchBuilder, build_control_batch
from spark_kafkalog.records.batch_reader import RecordBatch, decode_batch_records, iter_batch_records
from spark_kafkalog.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE, Compression, compress, decompress
from spark_kafkalog.records.convert import batch_to_legacy, legacy_to_batches, legacy_to_producer_batch
from spark_kafkalog.records.crc import crc32, crc32c
from spark_kafkalog.records.errors import (
    CorruptRecordError,
    DecompressedSizeLimitError,
    InvalidRecordError,
    InvalidTimestampError,
    UnsupportedCompressionError,
)
from spark_kafkalog.records.legacy import (
    LegacyMessage,
    LegacyMessageSetBuilder,
    decode_legacy_entry,
    iter_legacy_records,
)
from spark_kafkalog.records.murmur2 import default_partition, murmur2, to_positive
from spark_kafkalog.records.record import Record
from spark_kafkalog.records.splitter import BatchView, iter_batches, iter_records

__all__ = [
    "BATCH_HEADER_SIZE",
    "BatchHeader",
    "BatchView",
    "Compression",
    "CorruptRecordError",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "DecompressedSizeLimitError",
    "InvalidRecordError",
    "InvalidTimestampError",
    "LegacyMessage",
    "LegacyMessageSetBuilder",
    "Record",
    "RecordBatch",
    "RecordBatchBuilder",
    "UnsupportedCompressionError",
    "batch_to_legacy",
    "build_control_batch",
    "compress",
    "crc32",
    "crc32c",
    "decode_batch_records",
    "decode_legacy_entry",
    "decompress",
    "default_partition",
    "iter_batch_records",
    "iter_batches",
    "iter_legacy_records",
    "iter_records",
    "legacy_to_batches",
    "legacy_to_producer_batch",
    "murmur2",
    "parse_batch_header",
    "set_base_offset",
    "set_log_append_time",
    "set_partition_leader_epoch",
    "to_positive",
    "validate_batch",
]
