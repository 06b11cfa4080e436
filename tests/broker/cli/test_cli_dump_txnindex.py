"""``kafkalog dump-log`` on a log with transactions written by kafkalog: markers and the ``.txnindex``."""

from __future__ import annotations

import io

from broker.cli.dump_log import dump_log, dump_txn_index
from broker.log import LogConfig, PartitionLog
from spark_kafkalog.records import RecordBatchBuilder

P, Q = 41, 42


def _txn(pid: int) -> bytearray:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=0, base_sequence=0, is_transactional=True)
    b.append(1000, None, b"v")
    return bytearray(b.build())


def _dump(fn, *args, **kwargs) -> list[str]:
    out = io.StringIO()
    fn(*args, out=out, **kwargs)
    return out.getvalue().splitlines()


def test_markers_and_the_aborted_transaction_index_are_dumped_as_kafka_does(tmp_path):
    plog = PartitionLog.open(tmp_path / "t-0", LogConfig(), recover=False)
    try:
        plog.append_as_leader(_txn(P), leader_epoch=0)  # 0
        plog.append_as_leader(_txn(Q), leader_epoch=0)  # 1
        plog.append_control_marker(P, 0, False, 6, 0)  # 2: ABORT
        plog.append_control_marker(Q, 0, True, 6, 0)  # 3: COMMIT
    finally:
        plog.close()
    log_lines = _dump(dump_log, tmp_path / "t-0" / f"{0:020d}.log", deep=True, data=False)
    markers = [line for line in log_lines if "endTxnMarker" in line]
    assert [m.split("| offset: ")[1].split()[0] for m in markers] == ["2", "3"]
    assert markers[0].endswith("endTxnMarker: ABORT coordinatorEpoch: 6")
    assert markers[1].endswith("endTxnMarker: COMMIT coordinatorEpoch: 6")
    path = tmp_path / "t-0" / f"{0:020d}.txnindex"
    assert _dump(dump_txn_index, path)[1:] == [
        f"version: 0 producerId: {P} firstOffset: 0 lastOffset: 2 lastStableOffset: 1"
    ]
    path.write_bytes(path.read_bytes() + b"\x00\x01")
    assert _dump(dump_txn_index, path)[-1] == "2 trailing bytes are not a whole 34-byte entry"
