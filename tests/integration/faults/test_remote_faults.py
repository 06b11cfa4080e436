"""``EmbeddedCluster.faults(id)``: the same fault injection on a broker process through its loopback control
channel - pushed errors a producer retries, a tracked request log, undo, clear, and refused arguments."""

from __future__ import annotations

import uuid

import pytest

from broker.embedded_cluster import EmbeddedCluster
from broker.faults import FaultControlError
from spark_kafkalog.client import AdminClient, KafkaClient, NewTopic, OffsetSpec, Producer, TopicPartition
from spark_kafkalog.protocol import ApiKey

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    c = EmbeddedCluster(
        1,
        data_dir=tmp_path_factory.mktemp("remote-faults"),
        zookeeper_connect=f"{zookeeper.connect_string}/faults-{uuid.uuid4().hex[:8]}",
    )
    c.start()
    yield c
    c.stop()


def test_remote_faults_push_errors_track_and_undo_on_a_broker_process(cluster):
    faults = cluster.faults(1)
    topic = f"remote-{uuid.uuid4().hex[:8]}"
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(topic, 1, 1, {})])
    with faults.track_requests() as log:
        with faults.push_errors("Produce", ["NOT_LEADER_OR_FOLLOWER", 6], rtt_ms=50) as injection:
            assert injection.remaining == 2 and [i.id for i in faults.active()] == [log.id, injection.id]
            with Producer(cluster.bootstrap_servers, retry_backoff_ms=10) as producer:
                assert producer.send(topic, b"v", partition=0).result(30).offset == 0
            assert injection.remaining == 0 and not injection.active
    assert log.count("Produce") == 3
    assert {r.client_id for r in log.requests if r.api == "Produce"} == {"kafkalog"}
    tp = TopicPartition(topic, 0)
    with KafkaClient(cluster.bootstrap_servers) as client:
        assert client.list_offsets({tp: OffsetSpec.LATEST})[tp] == 1
    with faults.set_api_version("Produce", 3, 7) as narrowed:
        assert "Produce offered at versions 3-7 only" in narrowed.description
        with KafkaClient(cluster.bootstrap_servers) as client:
            produce = client.any_connection().versions.broker_ranges[ApiKey.PRODUCE]
            assert (produce.lo, produce.hi) == (3, 7)
    faults.set_rtt(10)
    faults.push_errors("Fetch", ["OFFSET_OUT_OF_RANGE"], topic=topic, partition=0)
    assert len(faults.active()) == 2
    faults.clear()
    assert faults.active() == []
    with pytest.raises(FaultControlError, match="unknown Kafka error name"):
        faults.push_errors("Produce", ["NO_SUCH_ERROR"])
    assert faults.drop_connections(client_id="nobody") == 0


def test_injections_of_a_stopped_or_restarted_broker_process_end_with_it(cluster):
    faults = cluster.faults(1)
    before = faults.set_rtt(50)
    cluster.stop_broker(1)
    try:
        before.undo()  # the process is gone, and its injections with it: nothing to undo
        with pytest.raises(FaultControlError, match="unreachable"):
            faults.active()
    finally:
        cluster.start_broker(1)
    assert faults.active() == []
    made = [faults.set_rtt(10) for _ in range(before.id)]  # the new run counts ids from 1 again
    after = made[-1]
    assert after.id == before.id
    for other in made[:-1]:
        other.undo()
    assert not before.active and before.remaining is None
    before.undo()  # an earlier run's injection: not the new one
    assert after.active
    after.undo()
    assert faults.active() == []
