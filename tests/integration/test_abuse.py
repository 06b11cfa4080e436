"""Issue 10's abuse rerun (``bench/abuse.py --quick``) as an opt-in soak: ``pytest -m slow``.

The broker is attacked (size prefixes, abandoned long polls, oversized CreateTopics, the longest topic
name, legacy-format fuzz, garbage checkpoints) and crashed (SIGKILL of one broker, then of the whole
cluster) while a confluent-kafka producer keeps producing with acks=all; every acknowledged record must
be read back and every phase must leave the healthy clients served.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_the_broker_survives_the_abuse_rerun(tmp_path):
    from bench.abuse import main

    result = main(["--quick", "--out", str(tmp_path / "abuse.json")])
    phases = result["phases"]
    failed = {name: p["failed"] for name, p in phases.items() if "failed" in p}
    assert not failed, failed
    assert phases["size_prefixes"]["rss_growth_mib"] < 100
    assert phases["size_prefixes"]["healthy_served"]
    assert phases["long_polls"]["released"]
    for n in ("100000", "22000"):
        assert phases["oversized_create"][n]["error"] in ("POLICY_VIOLATION", "INVALID_PARTITIONS")
    assert phases["oversized_create"]["all_registered"]
    assert phases["longest_topic_name"]["deleted"]
    assert phases["longest_topic_name"]["values_after_recreate"] == ["new"]
    assert phases["legacy_fuzz"]["brokers_alive"]
    for name in ("legacy_fuzz", "garbage_checkpoints", "sigkill_one_broker", "sigkill_whole_cluster"):
        assert all(v["served"] for v in phases[name]["healthy"].values()), name
    assert phases["sigkill_one_broker"]["restart_seconds"] < 30
    assert phases["sigkill_whole_cluster"]["restart_seconds"] < 60
    assert result["verification"]["acknowledged"] > 1000
    assert result["verification"]["lost"] == 0, result["verification"]
