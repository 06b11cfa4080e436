"""Leader elections on three broker processes and a real ZooKeeper with ``kafkalog leader-election`` (Kafka's
kafka-leader-election flags and lines): a preferred election moves leadership back to the preferred replica
once it is in sync (then there is nothing to do), an unclean election brings an offline partition back on an
out-of-sync replica, a partition file, usage mistakes, AdminClient.elect_leaders' answers, and confluent-kafka's
elect_leaders."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import TypeVar

import pytest

from broker.cli.app import main
from broker.cluster.zk_registry import ZooKeeperRegistry
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic, TopicPartition
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

T = TypeVar("T")


@pytest.fixture(scope="module")
def env(zookeeper, tmp_path_factory):
    connect = f"{zookeeper.connect_string}/elect-{uuid.uuid4().hex[:8]}"
    cluster = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("elect"),
        zookeeper_connect=connect,
        broker_config={
            "auto.leader.rebalance.enable": "false",
            "replica.fetch.wait.max.ms": 100,
            "replica.fetch.backoff.ms": 200,
        },
    ).start()
    registry = ZooKeeperRegistry(connect)
    registry.start(10)
    yield cluster, registry
    registry.close()
    cluster.stop()


def new_topic(cluster, replicas: dict[int, list[int]]) -> str:
    name = f"el-{uuid.uuid4().hex[:8]}"
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, replica_assignment=replicas)])
    return name


def until_the_controller_sees_it_live(elect: Callable[[], T], not_live: Callable[[T], bool]) -> T:
    """Run ``elect`` until its answer is not ``not_live``. A restarted replica rejoins the ISR by fetching from
    the leader, which may happen before the controller's watch on ``/brokers/ids`` reports it live; until then
    the controller answers PREFERRED_LEADER_NOT_AVAILABLE ("is not live"), as Kafka's does."""
    answers: list[T] = []

    def settled() -> bool:
        answers.append(elect())
        return not not_live(answers[-1])

    wait_until(settled, timeout_s=30, what="the controller to see the preferred replica live")
    return answers[-1]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["leader-election", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_preferred_election_moves_leadership_back_once_the_preferred_replica_is_in_sync(env, capsys, tmp_path):
    cluster, registry = env
    bootstrap = cluster.bootstrap_servers
    topic = new_topic(cluster, {0: [1, 2], 1: [2, 1]})
    wait_until(lambda: sorted(registry.partition_state(topic, 0).isr) == [1, 2], timeout_s=30, what="ISR [1, 2]")
    cluster.stop_broker(1)
    wait_until(lambda: registry.partition_state(topic, 0).leader == 2, timeout_s=30, what="broker 2 leads")
    cluster.start_broker(1)
    wait_until(lambda: 1 in registry.partition_state(topic, 0).isr, timeout_s=30, what="broker 1 back in the ISR")
    assert registry.partition_state(topic, 0).leader == 2  # auto.leader.rebalance.enable=false

    code, out, err = until_the_controller_sees_it_live(
        lambda: run(
            capsys,
            "--bootstrap-server",
            bootstrap,
            "--election-type",
            "preferred",
            "--topic",
            topic,
            "--partition",
            "0",
        ),
        lambda answer: "PREFERRED_LEADER_NOT_AVAILABLE" in answer[1] + answer[2],
    )
    assert (code, out) == (0, f"Successfully completed leader election (PREFERRED) for partitions {topic}-0\n"), err
    assert registry.partition_state(topic, 0).leader == 1

    plan = tmp_path / "election.json"
    plan.write_text(json.dumps({"partitions": [{"topic": topic, "partition": 0}, {"topic": topic, "partition": 1}]}))
    code, out, _ = run(
        capsys, "--bootstrap-server", bootstrap, "--election-type", "PREFERRED", "--path-to-json-file", str(plan)
    )
    assert (code, out) == (0, f"Valid replica already elected for partitions {topic}-0, {topic}-1\n")

    code, out, err = run(
        capsys, "--bootstrap-server", bootstrap, "--election-type", "preferred", "--topic", topic, "--partition", "9"
    )
    assert code == 1 and out.startswith(f"Error completing leader election (PREFERRED) for partition: {topic}-9: ")
    assert "UNKNOWN_TOPIC_OR_PARTITION" in out and "1 replica(s) could not be elected" in err

    with AdminClient(bootstrap) as admin:
        results = admin.elect_leaders("preferred", None)  # every partition: only those that needed one answer
        assert TopicPartition(topic, 0) not in results and TopicPartition(topic, 1) not in results


def test_unclean_election_brings_an_offline_partition_back_on_an_out_of_sync_replica(env, capsys):
    cluster, registry = env
    bootstrap = cluster.bootstrap_servers
    topic = new_topic(cluster, {0: [3, 2]})
    wait_until(lambda: sorted(registry.partition_state(topic, 0).isr) == [2, 3], timeout_s=30, what="ISR [2, 3]")
    cluster.stop_broker(2)
    wait_until(lambda: registry.partition_state(topic, 0).isr == (3,), timeout_s=30, what="ISR [3]")
    cluster.stop_broker(3)
    wait_until(lambda: registry.partition_state(topic, 0).leader == -1, timeout_s=30, what="the partition offline")
    cluster.start_broker(2)
    try:
        with AdminClient(bootstrap) as admin:
            error = admin.elect_leaders("preferred", [TopicPartition(topic, 0)])[TopicPartition(topic, 0)]
            assert error is not None and error.error_code == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
        args = ("--bootstrap-server", bootstrap, "--election-type", "unclean", "--topic", topic, "--partition", "0")
        code, out, err = run(capsys, *args)
        assert (code, out) == (0, f"Successfully completed leader election (UNCLEAN) for partitions {topic}-0\n"), err
        state = registry.partition_state(topic, 0)
        assert (state.leader, state.isr) == (2, (2,))
        code, out, _ = run(capsys, *args)
        assert (code, out) == (0, f"Valid replica already elected for partitions {topic}-0\n")
    finally:
        cluster.start_broker(3)


@pytest.mark.parametrize(
    "argv, problem",
    [
        (["--election-type", "preferred"], "one and only one of --topic, --all-topic-partitions, --path-to-json-file"),
        (["--election-type", "preferred", "--topic", "t"], "--topic needs --partition"),
        (
            ["--election-type", "preferred", "--all-topic-partitions", "--partition", "0"],
            "--partition is only allowed with --topic",
        ),
        (
            ["--election-type", "preferred", "--all-topic-partitions", "--topic", "t", "--partition", "0"],
            "(given: --topic, --all-topic-partitions)",
        ),
    ],
)
def test_usage_mistakes_are_refused_before_connecting(capsys, argv, problem):
    code, out, err = run(capsys, "--bootstrap-server", "127.0.0.1:1", *argv)
    assert code == 2 and out == "" and problem in err


def test_a_partition_file_with_a_duplicate_is_refused(capsys, tmp_path):
    plan = tmp_path / "dup.json"
    plan.write_text(json.dumps({"partitions": [{"topic": "a", "partition": 0}, {"topic": "a", "partition": 0}]}))
    code, _, err = run(
        capsys, "--bootstrap-server", "127.0.0.1:1", "--election-type", "preferred", "--path-to-json-file", str(plan)
    )
    assert code == 1 and "duplicate partitions: a-0" in err


def test_confluent_kafkas_elect_leaders_gets_kafkalogs_per_partition_answers(env):
    from confluent_kafka import ElectionType, KafkaError
    from confluent_kafka import TopicPartition as CkTopicPartition
    from confluent_kafka.admin import AdminClient as CkAdmin

    cluster, registry = env
    topic = new_topic(cluster, {0: [1, 2]})
    wait_until(lambda: sorted(registry.partition_state(topic, 0).isr) == [1, 2], timeout_s=30, what="ISR [1, 2]")
    cluster.stop_broker(1)
    wait_until(lambda: registry.partition_state(topic, 0).leader == 2, timeout_s=30, what="broker 2 leads")
    cluster.start_broker(1)
    wait_until(lambda: 1 in registry.partition_state(topic, 0).isr, timeout_s=30, what="broker 1 back in the ISR")
    admin = CkAdmin({"bootstrap.servers": cluster.bootstrap_servers})
    wanted = [CkTopicPartition(topic, 0), CkTopicPartition(topic, 3)]
    answers = until_the_controller_sees_it_live(
        lambda: {
            tp.partition: err for tp, err in admin.elect_leaders(ElectionType.PREFERRED, wanted).result(30).items()
        },
        lambda answer: answer[0] is not None and answer[0].code() == KafkaError.PREFERRED_LEADER_NOT_AVAILABLE,
    )
    assert answers[0] is None and registry.partition_state(topic, 0).leader == 1
    assert answers[3].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    again = admin.elect_leaders(ElectionType.PREFERRED, wanted[:1]).result(30)
    assert [err.code() for err in again.values()] == [KafkaError.ELECTION_NOT_NEEDED]
