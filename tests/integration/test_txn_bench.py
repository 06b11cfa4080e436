"""Issue 17's transaction benchmark (``bench/txn_bench.py --quick``) as an opt-in smoke run:
``pytest -m slow``. Three broker processes on their own ZooKeeper; the figures are not judged (that is the
benchmark's JSON), only that every scenario measured something real and that read_committed read back every
transaction whole: no partial transaction, nothing extra, in order."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_the_transaction_benchmark_runs_and_reads_back_every_transaction_whole(tmp_path):
    from bench.txn_bench import PRODUCERS, QUICK_TXN_SIZES, main

    out = tmp_path / "txn.json"
    result = main(["--quick", "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    assert out.with_suffix(".png").stat().st_size > 0
    assert result["quick"] is True and result["rounds"] == 1
    assert set(result["load_average"]) == {"start", "after_produce", "after_consume", "end"}
    records = result["produce"]["confluent_kafka"]["records_per_run"]
    txn_modes = [f"txn_{n}" for n in QUICK_TXN_SIZES]

    for producer in PRODUCERS:
        modes = result["produce"][producer]["modes"]
        assert list(modes) == ["idempotent", *txn_modes], producer
        assert modes["idempotent"]["share_of_idempotent"] == 1.0
        for mode, size in zip(txn_modes, QUICK_TXN_SIZES):
            m = modes[mode]
            assert m["transaction_records"] == size and m["transactions_per_run"] == records // size, m
            assert m["median_records_per_s"] > 0 and m["median_commits_per_s"] > 0, m
            assert 0 < m["share_of_idempotent"] < 3, m
            for figure in ("commit_latency_ms", "begin_to_flushed_ms"):
                lat = m[figure]
                assert lat["count"] == records // size, (producer, mode, figure, lat)
                assert 0 < lat["p50"] <= lat["p99"] <= lat["max"], (producer, mode, figure, lat)

    for mode, size in zip(txn_modes, QUICK_TXN_SIZES):
        c = result["consume"][mode]
        assert c["topic_records"] == records and c["commit_markers"] == records // size, c
        assert all(v > 0 for v in c["median_records_per_s"].values()), c
        assert c["committed_over_uncommitted"] > 0, c

    for producer in PRODUCERS:
        for mode, size in zip(txn_modes, QUICK_TXN_SIZES):
            check = result["read_committed_check"][producer][mode]
            assert check == {
                "transactions": records // size,
                "complete_transactions": records // size,
                "partial_transactions": 0,
                "unexpected_records": 0,
                "out_of_order_records": 0,
            }, (producer, mode)
