"""Issue 13's replication benchmark (``bench/replication_bench.py --quick``) as an opt-in smoke run:
``pytest -m slow``. Three broker processes on their own ZooKeeper; the figures are not judged against the
goals here (that is the benchmark's JSON), only that every scenario ran and measured something real."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_the_replication_benchmark_runs_every_scenario(tmp_path):
    from bench.replication_bench import SESSION_MS, main

    out = tmp_path / "replication.json"
    result = main(["--quick", "--latency-rate", "500", "--out", str(out)])
    assert json.loads(out.read_text())["throughput"] == result["throughput"]
    assert out.with_suffix(".png").stat().st_size > 0

    for producer in ("spark_kafkalog", "confluent_kafka"):
        t = result["throughput"][producer]
        assert all(v > 0 for v in t["median_records_per_s"].values()), t
        assert 0 < t["ratio"] < 3, t

    for mode, lat in result["latency"].items():
        assert lat["seen"] == lat["sent"] > 0, (mode, lat)
        assert 0 < lat["p50_ms"] <= lat["p99_ms"] <= lat["max_ms"], (mode, lat)

    for kind in ("sigkill", "controlled_shutdown", "sigkill_follower"):
        reps = result["failover"][kind]["repetitions"]
        assert len(reps) == 1, kind
        for rep in reps:
            assert rep["delivery_errors"] == 0, (kind, rep)  # the idempotent producer retries through failover
            assert 0 < rep["unavailable_s"] <= rep["next_ack_s"], (kind, rep)
    # a killed leader is replaced only after ZooKeeper expires its session
    sigkill = result["failover"]["sigkill"]["repetitions"][0]
    assert sigkill["stopped_broker_role"] == "leader"
    assert sigkill["next_ack_s"] > SESSION_MS / 1000 / 3, sigkill
