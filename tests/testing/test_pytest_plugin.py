"""The kafkalog pytest plugin used as a user would: test modules run by ``pytester`` in a fresh pytest process.

Each run writes a user's test module (confluent-kafka, kafka-python, aiokafka and kafkalog's own client talking
to ``bootstrap_servers``), runs it with the plugin loaded from its ``pytest11`` entry point, and checks the
outcome: records delivered once through injected retriable errors, a group rebalancing after a coordinator
error and after a member leaves, a producer failing over when a cluster broker goes down or a leader moves,
scopes and settings applied, and nothing left running afterwards (ports closed, child processes gone).
"""

from __future__ import annotations

import json
import re
import socket
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

_TIMEOUT_S = 150


@pytest.fixture(scope="module", autouse=True)
def _modules_outlive_each_run():
    """Import here what the users' modules use: an in-process run unloads the modules it imported when it
    ends, and a second copy of the broker and client modules loaded by the next run would share the process
    with threads still running the first copy's code (a client of one copy then waits on the other's state)."""
    import aiokafka  # noqa: F401
    import confluent_kafka  # noqa: F401
    import kafka  # noqa: F401

    import broker.embedded_cluster  # noqa: F401
    import broker.server  # noqa: F401
    import broker.testing.isolation  # noqa: F401
    import broker.testing.records  # noqa: F401
    import broker.testing.resources  # noqa: F401
    import spark_kafkalog.client  # noqa: F401
    import spark_kafkalog.client.aio  # noqa: F401
    import spark_kafkalog.client.aio.consumer  # noqa: F401
    import spark_kafkalog.client.aio.producer  # noqa: F401


def run(
    pytester: pytest.Pytester, source: str, *args: str, ini: str | None = None, subprocess: bool = False
) -> pytest.RunResult:
    """Write ``source`` as the user's test module and run pytest on it: in this process by default, so that
    what the plugin leaves running after the run would still be here to be found; ``subprocess`` for a clean
    interpreter."""
    pytester.makepyfile(test_user=textwrap.dedent(source))
    if ini is not None:
        pytester.makeini(textwrap.dedent(ini))
    options = ("-p", "no:cacheprovider", "--strict-markers", "-q", "-rA", *args)
    if subprocess:
        return pytester.runpytest_subprocess(*options, timeout=_TIMEOUT_S)
    return pytester.runpytest_inprocess(*options)


def assert_all_gone(report: Path) -> None:
    """Every address the user's run recorded refuses connections and every child process it recorded is gone."""
    seen = json.loads(report.read_text())
    assert seen["addresses"], "the user's run recorded no broker address"
    for address in seen["addresses"]:
        host, _, port = address.rpartition(":")
        with pytest.raises(OSError), socket.create_connection((host, int(port)), timeout=1):
            pass
    for pid in seen["pids"]:
        assert not _alive(pid), f"process {pid} outlived the test session"


def _alive(pid: int) -> bool:
    try:
        import psutil
    except ImportError:
        stat = Path(f"/proc/{pid}/stat")
        return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# -- every client through bootstrap_servers, with its retry path --------------------------------------
CLIENTS = """
    import asyncio
    import time

    import pytest

    RETRIABLE = ["NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER"]


    def values(n):
        return [b"v%d" % i for i in range(n)]


    def delivered_once(records, n):
        assert sorted(r.value for r in records) == sorted(values(n))


    def test_confluent_kafka(bootstrap_servers, kafkalog_topic, kafkalog_faults, kafkalog_records):
        from confluent_kafka import Consumer, Producer

        topic = kafkalog_topic(partitions=2)
        failing = kafkalog_faults.push_errors("Produce", RETRIABLE)
        producer = Producer({"bootstrap.servers": bootstrap_servers, "linger.ms": 5, "retry.backoff.ms": 20})
        for i, value in enumerate(values(10)):
            producer.produce(topic, value=value, key=b"k%d" % i)
        assert producer.flush(30) == 0
        assert failing.remaining == 0
        delivered_once(kafkalog_records(topic), 10)

        consumer = Consumer(
            {"bootstrap.servers": bootstrap_servers, "group.id": "confluent", "auto.offset.reset": "earliest"}
        )
        consumer.subscribe([topic])
        got, deadline = [], time.monotonic() + 30
        while len(got) < 10 and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                got.append(message.value())
        consumer.close()
        assert sorted(got) == sorted(values(10))


    def test_kafka_python(bootstrap_servers, kafkalog_topic, kafkalog_faults, kafkalog_records):
        from kafka import KafkaConsumer, KafkaProducer

        topic = kafkalog_topic(partitions=2)
        failing = kafkalog_faults.push_errors("Produce", RETRIABLE)
        producer = KafkaProducer(bootstrap_servers=bootstrap_servers, retries=5, retry_backoff_ms=20)
        futures = [producer.send(topic, value=v) for v in values(10)]
        producer.flush(30)
        for future in futures:
            future.get(timeout=30)
        producer.close()
        assert failing.remaining == 0
        delivered_once(kafkalog_records(topic), 10)

        consumer = KafkaConsumer(
            topic, bootstrap_servers=bootstrap_servers, group_id="kafka-python", auto_offset_reset="earliest",
            consumer_timeout_ms=15000,
        )
        got = []
        for message in consumer:
            got.append(message.value)
            if len(got) == 10:
                break
        consumer.close()
        assert sorted(got) == sorted(values(10))


    def test_aiokafka(bootstrap_servers, kafkalog_topic, kafkalog_faults, kafkalog_records):
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

        topic = kafkalog_topic(partitions=2)
        failing = kafkalog_faults.push_errors("Produce", RETRIABLE)

        async def main():
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, retry_backoff_ms=20)
            await producer.start()
            try:
                for v in values(10):
                    await producer.send_and_wait(topic, v)
            finally:
                await producer.stop()
            consumer = AIOKafkaConsumer(
                topic, bootstrap_servers=bootstrap_servers, group_id="aiokafka", auto_offset_reset="earliest"
            )
            await consumer.start()
            got = []
            try:
                while len(got) < 10:
                    message = await asyncio.wait_for(consumer.getone(), 30)
                    got.append(message.value)
            finally:
                await consumer.stop()
            return got

        got = asyncio.run(main())
        assert failing.remaining == 0
        delivered_once(kafkalog_records(topic), 10)
        assert sorted(got) == sorted(values(10))


    def test_kafkalog_client(bootstrap_servers, kafkalog_topic, kafkalog_faults, kafkalog_records):
        from spark_kafkalog.client import Consumer, Producer

        topic = kafkalog_topic(partitions=2)
        failing = kafkalog_faults.push_errors("Produce", RETRIABLE)
        with Producer(bootstrap_servers, retry_backoff_ms=20) as producer:
            futures = [producer.send(topic, v) for v in values(10)]
            producer.flush(30)
        assert [f.result().offset >= 0 for f in futures] == [True] * 10
        assert failing.remaining == 0
        delivered_once(kafkalog_records(topic), 10)

        with Consumer(bootstrap_servers, group_id="kafkalog", auto_offset_reset="earliest") as consumer:
            consumer.subscribe([topic])
            got, deadline = [], time.monotonic() + 30
            while len(got) < 10 and time.monotonic() < deadline:
                got.extend(r.value for r in consumer.poll(timeout_ms=200))
        assert sorted(got) == sorted(values(10))


    def test_kafkalog_asyncio_client(bootstrap_servers, kafkalog_topic, kafkalog_faults, kafkalog_records):
        from spark_kafkalog.client.aio import AIOConsumer, AIOProducer

        topic = kafkalog_topic(partitions=2)
        failing = kafkalog_faults.push_errors("Produce", RETRIABLE)

        async def main():
            async with AIOProducer(bootstrap_servers, retry_backoff_ms=20) as producer:
                for v in values(10):
                    await producer.send_and_wait(topic, v)
            consumer = AIOConsumer(topic, bootstrap_servers=bootstrap_servers, group_id="aio", auto_offset_reset="earliest")
            async with consumer:
                return [(await asyncio.wait_for(consumer.getone(), 30)).value for _ in range(10)]

        got = asyncio.run(main())
        assert failing.remaining == 0
        delivered_once(kafkalog_records(topic), 10)
        assert sorted(got) == sorted(values(10))
"""


def test_a_users_module_produces_and_consumes_with_each_client_through_injected_produce_errors(pytester):
    result = run(pytester, CLIENTS)
    result.assert_outcomes(passed=5)


# -- rebalance paths: a coordinator error, a member leaving --------------------------------------------
REBALANCE = """
    import threading
    import time
    from contextlib import contextmanager

    from spark_kafkalog.client import Consumer, TopicPartition


    @contextmanager
    def polling(consumer):
        \"\"\"The consumer polls on a thread of its own (a member blocked in a rebalance must not stop the others).\"\"\"
        stop = threading.Event()

        def loop():
            while not stop.is_set():
                consumer.poll(timeout_ms=100)
            consumer.close()

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        try:
            yield consumer
        finally:
            stop.set()
            thread.join(30)


    def wait_until(condition, what, timeout=30):
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, what()
            time.sleep(0.05)


    def test_a_group_finds_its_coordinator_again_after_not_coordinator(
        bootstrap_servers, kafkalog_topic, kafkalog_produce, kafkalog_faults
    ):
        topic = kafkalog_topic(partitions=2)
        kafkalog_produce(topic, [b"a", b"b", b"c"])
        with kafkalog_faults.track_requests() as log:
            failing = kafkalog_faults.push_errors("JoinGroup", ["NOT_COORDINATOR"])
            with Consumer(bootstrap_servers, group_id="g-coordinator", auto_offset_reset="earliest") as consumer:
                consumer.subscribe([topic])
                got, deadline = [], time.monotonic() + 30
                while len(got) < 3 and time.monotonic() < deadline:
                    got.extend(r.value for r in consumer.poll(timeout_ms=100))
        assert sorted(got) == [b"a", b"b", b"c"]
        assert failing.remaining == 0
        assert log.count("JoinGroup") >= 2
        assert log.count("FindCoordinator") >= 2


    def test_a_member_leaving_hands_its_partitions_to_the_others(bootstrap_servers, kafkalog_topic):
        topic = kafkalog_topic(partitions=2)
        settings = dict(group_id="g-leave", heartbeat_interval_ms=100, auto_offset_reset="earliest")
        first, second = Consumer(bootstrap_servers, **settings), Consumer(bootstrap_servers, **settings)
        first.subscribe([topic])
        second.subscribe([topic])
        with polling(first):
            with polling(second):
                wait_until(
                    lambda: len(first.assignment()) == 1 and len(second.assignment()) == 1,
                    lambda: (first.assignment(), second.assignment()),
                )
            wait_until(lambda: len(first.assignment()) == 2, lambda: first.assignment())
            assert sorted(first.assignment()) == [TopicPartition(topic, 0), TopicPartition(topic, 1)]
"""


def test_group_members_rebalance_after_a_coordinator_error_and_after_a_member_leaves(pytester):
    result = run(pytester, REBALANCE)
    result.assert_outcomes(passed=2)


# -- scopes -------------------------------------------------------------------------------------------
SCOPES = """
    import json
    import pytest

    SEEN = []
    TOPICS = []


    def test_first(kafkalog_broker):
        SEEN.append(kafkalog_broker.bootstrap_servers)
        kafkalog_broker.faults.push_errors("Produce", ["NOT_LEADER_OR_FOLLOWER"] * 5)  # left for the plugin to undo
        kafkalog_broker.down()


    def test_second(kafkalog_broker, kafkalog_topic, kafkalog_produce, kafkalog_records):
        SEEN.append(kafkalog_broker.bootstrap_servers)
        assert kafkalog_broker.faults.active() == []
        assert not kafkalog_broker.is_down
        topic = kafkalog_topic(partitions=1)
        TOPICS.append(topic)
        kafkalog_produce(topic, [b"x"])
        assert [r.value for r in kafkalog_records(topic)] == [b"x"]


    def test_report(kafkalog_broker, kafkalog_resources):
        from spark_kafkalog.client import AdminClient

        with AdminClient(kafkalog_broker.bootstrap_servers) as admin:
            assert set(TOPICS).isdisjoint(admin.list_topics())  # deleted after test_second
        with open("seen.json", "w") as f:
            json.dump({"brokers": SEEN, "addresses": kafkalog_resources.addresses, "pids": kafkalog_resources.pids}, f)
"""


@pytest.mark.parametrize(
    ("args", "ini", "brokers"),
    [
        ((), None, 2),
        (("--kafkalog-broker-scope=session",), None, 1),
        ((), "[pytest]\nkafkalog_broker_scope = session\n", 1),
        (("--kafkalog-broker-scope=function",), "[pytest]\nkafkalog_broker_scope = session\n", 2),
    ],
    ids=["function-by-default", "session-by-option", "session-by-ini", "option-over-ini"],
)
def test_the_broker_scope_is_chosen_by_option_or_ini_and_faults_never_outlive_a_test(pytester, args, ini, brokers):
    result = run(pytester, SCOPES, *args, ini=ini)
    result.assert_outcomes(passed=3)
    seen = json.loads((pytester.path / "seen.json").read_text())
    assert len(set(seen["brokers"])) == brokers
    assert len(set(seen["addresses"])) == (1 if brokers == 1 else 3)  # per test: test_report's broker too
    assert_all_gone(pytester.path / "seen.json")


SESSION_FIXTURE = """
    import pytest


    @pytest.fixture(scope="session")
    def orders(kafkalog_broker):
        \"\"\"A user's session-scoped fixture on the session's broker: one topic with one record for every test.\"\"\"
        from broker.testing import TopicFactory, produce_records

        topics = TopicFactory(lambda: kafkalog_broker.bootstrap_servers)
        topic = topics(partitions=1)
        produce_records(kafkalog_broker.bootstrap_servers, topic, [b"order-1"])
        yield topic
        topics.cleanup()


    @pytest.mark.parametrize("attempt", [1, 2])
    def test_orders(orders, kafkalog_records, attempt):
        assert [r.value for r in kafkalog_records(orders)] == [b"order-1"]
"""


def test_a_users_session_fixture_can_use_a_session_scoped_broker(pytester):
    result = run(pytester, SESSION_FIXTURE, ini="[pytest]\nkafkalog_broker_scope = session\n")
    result.assert_outcomes(passed=2)


def test_a_users_session_fixture_cannot_use_a_function_scoped_broker(pytester):
    result = run(pytester, SESSION_FIXTURE)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*ScopeMismatch*kafkalog_broker*"])


LEFT_BEHIND = """
    import socket

    LISTENER = socket.socket()


    def test_something_outlives_the_session(kafkalog_broker, kafkalog_resources):
        LISTENER.bind(("127.0.0.1", 0))
        LISTENER.listen()
        kafkalog_resources.addresses.append("127.0.0.1:%d" % LISTENER.getsockname()[1])
"""


def test_a_port_still_open_after_the_session_fails_it_naming_the_port(pytester):
    result = run(pytester, LEFT_BEHIND)
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["kafkalog: left behind after the session: 127.0.0.1:* still accepts connections"])


# -- settings: ini, options, marker -------------------------------------------------------------------
SETTINGS = """
    import pytest

    from spark_kafkalog.client import AdminClient
    from spark_kafkalog.client.admin.admin_configs import BROKER, ConfigResource


    def broker_configs(bootstrap_servers, *keys):
        with AdminClient(bootstrap_servers) as admin:
            (entries,) = admin.describe_resource_configs([ConfigResource(BROKER, "0")], keys=keys).values()
        return {e.name: e.value for e in entries}


    def test_ini_and_options(bootstrap_servers):
        assert broker_configs(bootstrap_servers, "log.retention.ms", "num.partitions") == {
            "log.retention.ms": "4242000",
            "num.partitions": "6",
        }


    @pytest.mark.kafkalog(broker_config={"num.partitions": 9, "log_retention_ms": 5000})
    def test_marker(bootstrap_servers, kafkalog_topic):
        assert broker_configs(bootstrap_servers, "log.retention.ms", "num.partitions") == {
            "log.retention.ms": "5000",
            "num.partitions": "9",
        }
        with AdminClient(bootstrap_servers) as admin:
            topic = kafkalog_topic(partitions=-1)
            assert len(admin.describe_topics([topic])[topic].partitions) == 9
"""


def test_broker_settings_come_from_the_ini_then_the_options_then_a_tests_marker(pytester):
    ini = "[pytest]\nkafkalog_broker_config =\n    log.retention.ms=4242000\n    num.partitions=5\n"
    result = run(pytester, SETTINGS, "--kafkalog-broker-config", "num.partitions=6", ini=ini)
    result.assert_outcomes(passed=2)


def test_a_marker_on_a_test_sharing_a_session_broker_fails_its_setup_saying_why(pytester):
    result = run(pytester, SETTINGS, "--kafkalog-broker-scope=session")
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(["*needs a function-scoped kafkalog_broker, not session*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--kafkalog-broker-config", "num.partitions"),
            "*--kafkalog-broker-config: 'num.partitions' is not key=value*",
        ),
        (("--kafkalog-broker-scope=global",), "*'global' is not a pytest scope*"),
        (("--kafkalog-cluster-brokers=0",), "*a cluster needs at least one broker, not 0*"),
    ],
)
def test_a_bad_setting_stops_the_run_before_any_test_naming_it(pytester, args, message):
    result = run(pytester, "def test_nothing(): pass\n", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_loading_the_plugin_imports_neither_the_broker_nor_the_client(pytester):
    source = """
        import sys

        def test_nothing_heavy_loaded(request):
            assert request.config.pluginmanager.has_plugin("kafkalog")
            heavy = [m for m in sys.modules if m == "pyspark" or m.startswith(("broker.server", "broker.embedded_cluster", "spark_kafkalog.client", "pyspark."))]
            assert heavy == []
    """
    # nor warns that a module of the package was imported before pytest could rewrite it (the .pth hook's)
    result = run(pytester, source, "-W", "error::pytest.PytestAssertRewriteWarning", subprocess=True)
    result.assert_outcomes(passed=1)


# -- a cluster: failover under producers, faults undone between tests, settings, clean teardown ------
CLUSTER = """
    from spark_kafkalog.client import AdminClient, Producer
    from spark_kafkalog.client.admin.admin_configs import BROKER, ConfigResource


    def leader(bootstrap_servers, topic):
        with AdminClient(bootstrap_servers) as admin:
            return admin.describe_topics([topic])[topic].partitions[0].leader


    def running(cluster):
        return sorted(b for b, proc in cluster.processes.items() if proc.poll() is None)


    def test_a_producer_fails_over_when_the_leader_goes_down(
        kafkalog_cluster, bootstrap_servers, kafkalog_topic, kafkalog_records
    ):
        topic = kafkalog_topic(partitions=1)
        first = leader(bootstrap_servers, topic)
        with Producer(bootstrap_servers, acks="all", retry_backoff_ms=50) as producer:
            for i in range(20):
                producer.send(topic, b"a%d" % i)
            producer.flush(30)
            kafkalog_cluster.broker_down(first)
            futures = [producer.send(topic, b"b%d" % i) for i in range(20)]
            producer.flush(60)
        assert all(f.result().offset >= 20 for f in futures)
        assert leader(bootstrap_servers, topic) not in (first, -1)
        values = sorted(r.value for r in kafkalog_records(topic))
        assert values == sorted([b"a%d" % i for i in range(20)] + [b"b%d" % i for i in range(20)])


    def test_confluent_kafka_follows_a_moved_leader(kafkalog_cluster, bootstrap_servers, kafkalog_topic, kafkalog_records):
        from confluent_kafka import Producer as ConfluentProducer

        assert running(kafkalog_cluster) == kafkalog_cluster.broker_ids  # the previous test's broker is back
        topic = kafkalog_topic(partitions=1)
        first = leader(bootstrap_servers, topic)
        target = next(b for b in kafkalog_cluster.broker_ids if b != first)
        producer = ConfluentProducer({"bootstrap.servers": bootstrap_servers, "acks": "all", "enable.idempotence": True})
        for i in range(10):
            producer.produce(topic, b"a%d" % i)
        assert producer.flush(30) == 0
        kafkalog_cluster.move_leader(topic, 0, target)
        for i in range(10):
            producer.produce(topic, b"b%d" % i)
        assert producer.flush(30) == 0
        assert leader(bootstrap_servers, topic) == target
        assert len(kafkalog_records(topic)) == 20


    def test_kafka_python_retries_errors_pushed_on_a_cluster_broker(
        kafkalog_cluster, bootstrap_servers, kafkalog_topic, kafkalog_records
    ):
        from kafka import KafkaProducer

        topic = kafkalog_topic(partitions=1)
        faults = kafkalog_cluster.faults(leader(bootstrap_servers, topic))
        failing = faults.push_errors("Produce", ["NOT_ENOUGH_REPLICAS"] * 2, topic=topic, partition=0)
        producer = KafkaProducer(bootstrap_servers=bootstrap_servers, acks="all", retries=5, retry_backoff_ms=50)
        producer.send(topic, b"once").get(timeout=30)
        producer.close()
        assert failing.remaining == 0
        faults.set_rtt(5)  # left active on purpose: the plugin undoes it after the test
        assert [r.value for r in kafkalog_records(topic)] == [b"once"]


    def test_faults_are_undone_between_tests(kafkalog_cluster):
        assert {b: kafkalog_cluster.faults(b).active() for b in kafkalog_cluster.broker_ids} == {1: [], 2: [], 3: []}


    def test_settings_reach_every_cluster_broker(kafkalog_cluster, bootstrap_servers):
        resources = [ConfigResource(BROKER, str(b)) for b in kafkalog_cluster.broker_ids]
        keys = ["log.retention.ms", "default.replication.factor"]
        with AdminClient(bootstrap_servers) as admin:
            described = admin.describe_resource_configs(resources, keys=keys)
        assert {r.name: {e.name: e.value for e in entries} for r, entries in described.items()} == {
            str(b): {"log.retention.ms": "4242000", "default.replication.factor": "3"} for b in (1, 2, 3)
        }
"""


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def guide_examples() -> list[str]:
    """The test modules of docs/testing.md's "Examples with each client" section."""
    section = GUIDE.read_text().split("## Examples with each client", 1)[1].split("\n## ", 1)[0]
    examples = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(examples) >= 6, "docs/testing.md lost its examples"
    assert all(example.count("\ndef test_") == 1 for example in examples)
    return examples


REPORT = """
    import json


    def test_report(kafkalog_cluster, kafkalog_resources):
        \"\"\"Last of the run (by file name): what the plugin started, for the outer test to check afterwards.\"\"\"
        pids = kafkalog_resources.pids + [proc.pid for proc in kafkalog_cluster.processes.values()]
        pids.append(kafkalog_cluster.zookeeper.pid)
        with open("seen.json", "w") as f:
            json.dump({"addresses": kafkalog_resources.addresses, "pids": pids}, f)
"""


def test_a_session_cluster_fails_over_under_producers_and_leaves_nothing_behind(pytester):
    """One run shares the cluster: the cluster module, then the guide's examples (one of them on the cluster)."""
    examples = guide_examples()
    pytester.makepyfile(**{f"test_z_guide_{i}": example for i, example in enumerate(examples)})
    pytester.makepyfile(test_zz_report=textwrap.dedent(REPORT))
    result = run(pytester, CLUSTER, "--kafkalog-broker-config", "log.retention.ms=4242000")
    result.assert_outcomes(passed=6 + len(examples))
    result.stdout.fnmatch_lines(["PASSED test_zz_report.py::test_report"])
    assert "left behind" not in result.stdout.str()
    assert_all_gone(pytester.path / "seen.json")


ONE_BROKER_CLUSTER = """
    import pytest


    @pytest.mark.kafkalog(cluster_brokers=1, broker_config={"num.partitions": 4})
    def test_own_cluster(kafkalog_cluster, kafkalog_topic):
        assert kafkalog_cluster.broker_ids == [1]
        from spark_kafkalog.client import AdminClient

        topic = kafkalog_topic(partitions=-1, replication_factor=-1)
        with AdminClient(kafkalog_cluster.bootstrap_servers) as admin:
            (description,) = admin.describe_topics([topic]).values()
        assert [p.replicas for p in description.partitions] == [(1,)] * 4
"""


def test_a_marker_gives_a_test_a_cluster_of_its_own_when_the_cluster_is_function_scoped(pytester):
    result = run(pytester, ONE_BROKER_CLUSTER, "--kafkalog-cluster-scope=function")
    result.assert_outcomes(passed=1)
