"""``kafkalog status`` on a real 3-broker cluster: brokers, controller, under-replicated and offline partitions
and a group's lag, then a broker SIGKILLed (its partitions of ``__consumer_offsets`` count as under-replicated
too); and its pure rendering."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from broker.cli.status import ClusterStatus, GroupHealth, TopicHealth, _ranges, render
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic, Producer, TopicPartition
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


def status(bootstrap: str, *extra: str) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "broker.cli", "status", "--bootstrap-server", bootstrap, *extra],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_status_shows_brokers_topics_lag_and_what_a_dead_broker_leaves_short(zookeeper, tmp_path):
    with EmbeddedCluster(
        3, data_dir=tmp_path, zookeeper_connect=f"{zookeeper.connect_string}/status-{uuid.uuid4().hex[:8]}"
    ) as cluster:
        with AdminClient(cluster.bootstrap_servers) as admin:
            admin.create_topics([NewTopic("replicated", 3, 3), NewTopic("single", 3, 1)])
        with Producer(cluster.bootstrap_servers) as p:
            for i in range(30):
                p.send("replicated", b"v%d" % i, partition=i % 3)
            p.flush()
        with AdminClient(cluster.bootstrap_servers) as admin:
            admin.alter_group_offsets("lagging", {TopicPartition("replicated", p): 4 for p in range(3)})
        healthy = status(cluster.bootstrap_servers)
        controller = next(line for line in healthy.splitlines() if line.startswith("cluster "))
        assert "brokers: 3" in controller
        for b in cluster.broker_ids:
            assert f"broker {b}" in healthy
        assert "under-replicated partitions: 0   offline partitions: 0" in healthy
        assert "replicated" in healthy and "rf 3" in healthy and "rf 1" in healthy
        assert "__consumer_offsets" not in healthy  # internal topics only with --include-internal
        assert "__consumer_offsets" in status(cluster.bootstrap_servers, "--include-internal")
        lag_line = next(line for line in healthy.splitlines() if line.strip().startswith("lagging"))
        assert lag_line.split()[-1] == "18"  # 3 partitions x (10 - 4)

        with AdminClient(cluster.bootstrap_servers) as admin:
            single = admin.describe_topics(["single"])["single"]
        victim = next(p.leader for p in single.partitions if p.leader != cluster.broker_ids[0])
        lost = sorted(p.partition for p in single.partitions if p.leader == victim)
        cluster.kill_broker(victim)
        survivor = f"127.0.0.1:{cluster.ports[cluster.broker_ids[0]]}"

        last = [""]

        def degraded() -> str | None:
            text = last[0] = status(survivor)
            short = f"offline partitions: {len(lost)}" in text and "under-replicated 0-2" in text
            return text if short else None

        try:
            text = wait_until(degraded, 40, "status to show the dead broker's partitions")
        except AssertionError as e:
            raise AssertionError(f"{e}; last status:\n{last[0]}") from None
        single_line = next(line for line in text.splitlines() if line.strip().startswith("single "))
        assert f"offline {_ranges(lost)}" in single_line
        replicated_line = next(line for line in text.splitlines() if line.strip().startswith("replicated "))
        assert "under-replicated 0-2" in replicated_line


def test_status_of_an_address_where_nothing_listens_is_one_line(tmp_path):
    from broker.processes import free_port

    r = subprocess.run(
        [sys.executable, "-m", "broker.cli", "status", "--bootstrap-server", f"127.0.0.1:{free_port()}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1
    assert r.stderr.startswith("kafkalog: ") and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("values", "expected"), [([0], "0"), ([0, 1, 2], "0-2"), ([0, 1, 2, 5], "0-2,5"), ([1, 3, 4, 7, 8, 9], "1,3-4,7-9")]
)
def test_ranges(values, expected):
    assert _ranges(values) == expected


def test_render_lists_trouble_per_topic():
    s = ClusterStatus(
        "cid",
        2,
        {1: "h:1", 2: "h:2"},
        {1: 3, 2: 0},
        [
            TopicHealth("a", 4, 2, False, under_replicated=[0, 1], offline=[3]),
            TopicHealth("b", 1, 1, False),
            TopicHealth("__consumer_offsets", 50, 3, True, offline=[7]),
        ],
        [GroupHealth("g", "Stable", 12), GroupHealth("h", "Empty", None)],
    )
    text = render(s)
    assert "controller: broker 2" in text and "broker 2    h:2" in text and "(controller)" in text
    assert "under-replicated partitions: 2   offline partitions: 2" in text
    assert "offline 3, under-replicated 0-1" in text
    assert "__consumer_offsets               offline 1, under-replicated 0" in text  # internal trouble still shown
    assert "lag 12" in text and "lag -" in text
