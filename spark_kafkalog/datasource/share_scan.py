"""The executor side of a share-group read: one topic-partition's acquired offsets, fetched into Arrow (no pyspark).

``read_share_range(options, share_range, client)`` fetches the spans of ``share_planning.read_spans``
with the batch read's ``scan.read_offset_range`` (plain Fetch: a task holds no share-group state and
acquires nothing; data loss handled as there) and keeps the rows whose offset the driver acquired
(``acquired_mask``): records of the same partition acquired by other members of the group are dropped.
Key/value formats (``options.formats``) are decoded after the filter, so only kept rows are decoded.
Rows are in the schema of the normal source (``kafka_schema(options.include_headers)``, or the decoded one).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pyarrow as pa

from spark_kafkalog.client import KafkaClient
from spark_kafkalog.datasource.options import SourceOptions
from spark_kafkalog.datasource.scan import read_offset_range
from spark_kafkalog.datasource.share_planning import DEFAULT_MAX_GAP, ShareRange, acquired_mask, read_spans

__all__ = ["read_share_range"]


def read_share_range(
    options: SourceOptions, share_range: ShareRange, client: KafkaClient, max_gap: int = DEFAULT_MAX_GAP
) -> Iterator[pa.RecordBatch]:
    """The records of ``share_range`` (see the module docstring)."""
    decoder = None
    if options.formats is not None:
        from spark_kafkalog.datasource.value_formats import FormatDecoder

        decoder = FormatDecoder(options.formats)
    raw = replace(options, formats=None)
    for span in read_spans(share_range, max_gap):
        for batch in read_offset_range(raw, span, client):
            mask = acquired_mask(batch.column("offset").to_numpy(zero_copy_only=False), share_range.ranges)
            kept = batch if mask.all() else batch.filter(pa.array(mask))
            if kept.num_rows:
                yield kept if decoder is None else decoder.decode(kept)
