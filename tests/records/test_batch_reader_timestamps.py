"""The v2 reader computes record timestamps with Java's int64 arithmetic (base + delta wraps)."""

from spark_kafkalog.records import Compression, RecordBatchBuilder, iter_batch_records


def test_timestamps_spanning_the_whole_int64_range_read_back_exactly():
    b = RecordBatchBuilder(Compression.NONE)
    for ts in (-1, 2**63 - 1, 0):
        b.append(ts, None, b"v", [])
    assert [r.timestamp for r in iter_batch_records(b.build())] == [-1, 2**63 - 1, 0]
