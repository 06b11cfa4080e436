"""Partition reassignment end to end on three in-process brokers sharing a ``memory:`` registry: [0, 1] ->
[1, 2] through the admin client while a producer sends with acks=all. No acknowledged record is lost, the
leader moves off the removed broker, which deletes its replica, and the new replica's log equals the other's."""

from __future__ import annotations

import threading

import pytest

from spark_kafkalog.client import AdminClient, AdminOperationError, KafkaClient, Producer, TopicPartition
from spark_kafkalog.client.admin.admin_reassignments import PartitionReassignment
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

from .cluster import Cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(
        3,
        tmp_path_factory,
        replica_lag_time_max_ms=5000,
        replica_fetch_wait_max_ms=100,
        replica_fetch_backoff_ms=100,
        controlled_shutdown_retry_backoff_ms=200,
    )
    yield c
    c.close()


class AckedProducer:
    """Sends numbered records with acks=all from a thread until stopped; ``acked`` holds (offset, value) of
    every acknowledged one, ``failed`` the errors of the others."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.acked: set[tuple[int, bytes]] = set()
        self.failed: list[BaseException] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._producer = Producer(bootstrap, acks="all", linger_ms=2, retries=1000, delivery_timeout_ms=60_000)
        self._thread = threading.Thread(target=self._run, args=(topic,), daemon=True)
        self._thread.start()

    def _run(self, topic: str) -> None:
        n = 0
        while not self._stop.is_set():
            for _ in range(20):
                value = b"v%06d" % n
                n += 1
                self._producer.send(topic, value, partition=0, on_delivery=self._delivered(value))
            self._producer.flush(60)
            self._stop.wait(0.01)

    def _delivered(self, value: bytes):
        def callback(md, exc) -> None:
            with self._lock:
                if exc is None:
                    self.acked.add((md.offset, value))
                else:
                    self.failed.append(exc)

        return callback

    def count(self) -> int:
        with self._lock:
            return len(self.acked)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(90)
        self._producer.close()


def read_all(bootstrap: str, topic: str) -> set[tuple[int, bytes]]:
    tp = TopicPartition(topic, 0)
    with KafkaClient(bootstrap) as client:
        end = client.list_offsets({tp: -1})[tp]
        return {
            (rec.offset, bytes(rec.value))
            for fb in client.fetch_batches(tp, 0, end)
            for rec in fb.batch.records()
            if rec.offset < end
        }


def test_reassigning_0_1_to_1_2_while_producing_acks_all_loses_no_acknowledged_record(cluster):
    c = cluster
    c.create_topic("mv", {0: (0, 1)})
    wait_until(lambda: c.state("mv") is not None and sorted(c.state("mv").isr) == [0, 1], what="ISR [0, 1]")
    assert c.state("mv").leader == 0
    bootstrap = c.brokers[1].bootstrap_servers
    producer = AckedProducer(bootstrap, "mv")
    try:
        wait_until(lambda: producer.count() >= 200, timeout_s=60, what="200 acknowledged records")
        with AdminClient(bootstrap) as admin:
            admin.alter_partition_reassignments({TopicPartition("mv", 0): [1, 2]})
            ongoing = admin.list_partition_reassignments()
            # listed until broker 2 is in sync (it may already be: then the reassignment is complete)
            assert ongoing in ({}, {TopicPartition("mv", 0): PartitionReassignment((1, 2, 0), (2,), (0,))})
            wait_until(
                lambda: not admin.list_partition_reassignments(), timeout_s=60, what="the reassignment to complete"
            )
        st = c.state("mv")
        assert (st.leader, sorted(st.isr)) == (1, [1, 2])
        assert st.leader_epoch >= 1
        at_completion = producer.count()
        wait_until(lambda: producer.count() >= at_completion + 200, timeout_s=60, what="200 more records")
    finally:
        producer.stop()
    assert not producer.failed, producer.failed[:3]

    # broker 0 dropped its replica and deleted the log directory
    assert c.partition(0, "mv") is None
    wait_until(lambda: not any(d.name.startswith("mv-0") for d in c.dirs[0].iterdir()), what="mv-0 deleted on broker 0")
    # every acknowledged record is there, at its offset; the two replicas hold the same bytes
    got = read_all(bootstrap, "mv")
    assert producer.acked <= got
    end = max(o for o, _ in got) + 1
    wait_until(lambda: c.offsets(1, "mv") == c.offsets(2, "mv") == (end, end), what="replicas 1 and 2 level")
    assert c.log_bytes(2, "mv") == c.log_bytes(1, "mv")


def test_refused_reassignments_raise_naming_each_partition(cluster):
    c = cluster
    c.create_topic("refused", {0: (0, 1)})
    wait_until(lambda: c.state("refused") is not None, what="partition state")
    with AdminClient(c.any().bootstrap_servers) as admin:
        with pytest.raises(AdminOperationError) as e:
            admin.alter_partition_reassignments(
                {
                    TopicPartition("refused", 0): [0, 7],
                    TopicPartition("refused", 3): [0, 1],
                }
            )
        errors = e.value.errors
        assert errors[TopicPartition("refused", 0)].error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
        assert "brokers [7] are not live" in str(errors[TopicPartition("refused", 0)])
        assert errors[TopicPartition("refused", 3)].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        with pytest.raises(AdminOperationError) as e:
            admin.alter_partition_reassignments({TopicPartition("refused", 0): None})
        assert e.value.error_code == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
