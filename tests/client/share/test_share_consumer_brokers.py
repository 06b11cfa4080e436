"""kafkalog's ShareConsumer against two in-process brokers: a topic whose partitions have different leaders is read
through one share session per leader, every record exactly once by two members (implicit acknowledgement)."""

from __future__ import annotations

import threading

import pytest

from spark_kafkalog.client import AdminClient, NewTopic, Producer, ShareConsumer
from tests.broker.conftest import start_brokers
from tests.share_scenarios import share_group
from tests.waiting import stays_true, wait_until


@pytest.fixture(scope="module")
def brokers(tmp_path_factory):
    bs = start_brokers(
        2,
        tmp_path_factory,
        offsets_topic_num_partitions=2,
        offsets_topic_replication_factor=1,
        group_initial_rebalance_delay_ms=0,
        share_coordinator_state_topic_num_partitions=2,
        share_coordinator_state_topic_replication_factor=1,
        share_coordinator_state_topic_min_isr=1,
    )
    yield bs
    for b in bs:
        b.stop()


def test_two_members_read_partitions_of_two_leaders_exactly_once(brokers):
    bootstrap = brokers[0].bootstrap_servers
    topic = "two-leaders"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, replica_assignment={0: [0], 1: [1], 2: [0], 3: [1]})])
    group = share_group(bootstrap)
    with Producer(bootstrap) as producer:
        for i in range(40):
            producer.send(topic, b"v%d" % i, partition=i % 4)
        producer.flush()
    got: list[list] = [[], []]
    consumers = [ShareConsumer(bootstrap, group) for _ in range(2)]
    stop = threading.Event()

    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            while not stop.is_set():
                got[i].extend(consumers[i].poll(200))
        except BaseException as e:  # reported by the waits below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(2)]
    try:
        for c in consumers:
            c.subscribe([topic])
        for t in threads:
            t.start()
        total = lambda: len(got[0]) + len(got[1])  # noqa: E731
        wait_until(lambda: errors or total() >= 40, 30, "all 40 records")
        assert not errors, errors
        stays_true(lambda: total() == 40, 1.0, "no record twice")
    finally:
        stop.set()
        for t in threads:
            t.join(10)
        opened = [{n for n, s in c._fetcher.sessions.items() if s.open} for c in consumers]
        for c in consumers:
            c.close()
    records = got[0] + got[1]
    assert sorted((r.partition, r.value) for r in records) == sorted((i % 4, b"v%d" % i) for i in range(40))
    assert {r.delivery_count for r in records} == {1}
    assert set().union(*opened) == {0, 1}, f"share sessions with both leaders: {opened}"
