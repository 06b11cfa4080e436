"""``kafkalog dump-log`` on segment files built here: compressed, idempotent, transactional and control batches
(markers as Kafka's segments and kafkalog's own hold them; ``.txnindex`` dumps: test_cli_dump_txnindex)."""

from __future__ import annotations

import io

from broker.cli.dump_log import dump_index, dump_log
from spark_kafkalog.records.batch import set_log_append_time
from spark_kafkalog.records.batch_builder import RecordBatchBuilder, build_batch, build_control_batch
from spark_kafkalog.records.compression import Compression


def _segment(tmp_path):
    plain = build_batch([(1000, b"k", b"v0", [("h", b"1")]), (1001, None, b"v1", [])], base_offset=0)
    gz = build_batch(
        [(2000, b"a", b"x" * 50, []), (2001, b"b", None, [])],
        Compression.GZIP,
        base_offset=2,
        producer_id=7,
        producer_epoch=1,
        base_sequence=10,
        partition_leader_epoch=3,
    )
    txn = RecordBatchBuilder(base_offset=4, producer_id=9, producer_epoch=0, base_sequence=0, is_transactional=True)
    txn.append(3000, None, b"in-txn")
    marker = build_control_batch(
        "commit", producer_id=9, producer_epoch=0, coordinator_epoch=5, timestamp_ms=3001, base_offset=5
    )
    appended = bytearray(build_batch([(4000, None, b"late", [])], base_offset=6))
    set_log_append_time(appended, 0, 5000)  # as a broker with LogAppendTime does (the CRC is redone)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(plain) + bytes(gz) + txn.build() + marker + bytes(appended))
    return path


def _dump(fn, *args, **kwargs) -> list[str]:
    out = io.StringIO()
    fn(*args, out=out, **kwargs)
    return out.getvalue().splitlines()


def test_batches_show_kafkas_fields_per_batch(tmp_path):
    lines = _dump(dump_log, _segment(tmp_path), deep=False, data=False)
    assert lines[:2] == [f"Dumping {tmp_path / '00000000000000000000.log'}", "Log starting offset: 0"]
    batches = lines[2:]
    assert len(batches) == 5
    assert batches[0].startswith(
        "baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: -1 isTransactional: false isControl: false position: 0 CreateTime: 1001 size: "
    )
    assert batches[0].endswith(
        "magic: 2 compresscodec: none crc: " + batches[0].split("crc: ")[1].split()[0] + " isvalid: true"
    )
    assert "baseOffset: 2 lastOffset: 3 count: 2 baseSequence: 10 lastSequence: 11 producerId: 7 producerEpoch: 1 " \
        "partitionLeaderEpoch: 3 " in batches[1] and "compresscodec: gzip" in batches[1]  # fmt: skip
    assert "isTransactional: true isControl: false" in batches[2]
    assert "isTransactional: true isControl: true" in batches[3]
    assert "LogAppendTime: 5000" in batches[4]
    assert all(line.endswith("isvalid: true") for line in batches)


def test_deep_iteration_prints_records_and_end_transaction_markers(tmp_path):
    lines = _dump(dump_log, _segment(tmp_path), deep=True, data=True)
    records = [line for line in lines if line.startswith("| ")]
    assert (
        records[0]
        == "| offset: 0 CreateTime: 1000 keySize: 1 valueSize: 2 sequence: -1 headerKeys: [h] key: k payload: v0"
    )
    assert records[1] == "| offset: 1 CreateTime: 1001 keySize: -1 valueSize: 2 sequence: -1 headerKeys: [] payload: v1"
    assert records[2] == (
        "| offset: 2 CreateTime: 2000 keySize: 1 valueSize: 50 sequence: 10 headerKeys: [] key: a payload: " + "x" * 50
    )  # decompressed
    assert (
        records[3]
        == "| offset: 3 CreateTime: 2001 keySize: 1 valueSize: -1 sequence: 11 headerKeys: [] key: b payload: "
    )
    assert records[5].startswith("| offset: 5 CreateTime: 3001 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] ")
    assert records[5].endswith("endTxnMarker: COMMIT coordinatorEpoch: 5")
    assert records[6].startswith("| offset: 6 LogAppendTime: 5000 ")
    without_data = [
        line for line in _dump(dump_log, _segment(tmp_path), deep=True, data=False) if line.startswith("| ")
    ]
    assert len(without_data) == 7 and not any("payload" in line for line in without_data)


def test_max_bytes_stops_without_calling_the_cut_damage(tmp_path):
    path = _segment(tmp_path)
    first = _dump(dump_log, path, deep=False, data=False)[2]
    size = int(first.split(" size: ")[1].split()[0])
    lines = _dump(dump_log, path, deep=False, data=False, max_bytes=size + 10)
    assert len(lines) == 3 and not any("invalid bytes" in line for line in lines)


def test_index_without_its_segment_is_listed_unchecked_and_trailing_bytes_reported(tmp_path):
    index = tmp_path / "00000000000000000100.index"
    index.write_bytes(bytes.fromhex("00000002 00000000 00000005 00000100 0000").replace(b" ", b""))
    lines = _dump(dump_index, index)
    assert lines[1:3] == ["offset: 102 position: 0", "offset: 105 position: 256"]
    assert "(no 00000000000000000100.log next to it: entries not checked against the segment)" in lines
    assert "  2 trailing bytes are not a whole 8-byte entry" in lines
