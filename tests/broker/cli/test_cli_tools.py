"""The `kafkalog` tools as a Kafka user types them, run as processes against an in-process broker."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from spark_kafkalog.client import AdminClient, NewTopic, Producer
from tests.broker.conftest import start_brokers
from tests.waiting import wait_until

CLI = [sys.executable, "-m", "broker.cli"]


def run(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, group_initial_rebalance_delay_ms=0, offsets_topic_num_partitions=1)
    yield b.bootstrap_servers
    b.stop()


def new_topic(bootstrap: str, partitions: int = 1, **config: str) -> str:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, config)])
    return name


def produce(bootstrap: str, topic: str, values: list[bytes], **kwargs) -> None:
    with Producer(bootstrap, **kwargs) as producer:
        for v in values:
            producer.send(topic, v)
        producer.flush()


def test_a_group_consumer_that_reads_nothing_commits_its_position_so_the_next_run_sees_what_came_between(bootstrap):
    topic = new_topic(bootstrap, partitions=2)
    produce(bootstrap, topic, [b"before-first-run"])
    group = f"g-{uuid.uuid4().hex[:6]}"
    common = ("consume", "--bootstrap-server", bootstrap, "--topic", topic, "--group", group)
    first = run(*common, "--timeout-ms", "1500")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "" and "Processed a total of 0 messages" in first.stderr
    produce(bootstrap, topic, [b"between-1", b"between-2"])
    second = run(*common, "--max-messages", "2", "--timeout-ms", "5000")
    assert second.returncode == 0, second.stderr
    assert sorted(second.stdout.split()) == ["between-1", "between-2"]


def one_line_failure(*args: str, code: int) -> str:
    r = run(*args, timeout=30)
    assert r.returncode == code and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kafkalog: "), r.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--base-port", "70000"], "cluster up --base-port must be in 1-65533 (broker i listens on base-port + i - 1"),
        (["--brokers", "1", "--base-port", "65536"], "cluster up --base-port must be in 1-65535"),
        (["--base-port", "65534"], "not 65534"),
        (["--base-port", "-5"], "not -5"),
        (["--zookeeper-port", "70000"], "cluster up --zookeeper-port must be in 0-65535 (0: a free port), not 70000"),
        (
            ["--zookeeper-connect", "127.0.0.1:70000"],
            "zookeeper.connect (127.0.0.1:70000): port 70000 is not in 1-65535",
        ),
    ],
)
def test_cluster_up_with_a_port_out_of_range_names_the_range_in_one_line(tmp_path, args, expected):
    line = one_line_failure(
        "cluster", "up", "--data-dir", str(tmp_path / "c"), *args, code=1 if "connect" in args[0] else 2
    )
    assert expected in line
    assert not (tmp_path / "c").exists() or "connect" in args[0]  # refused before anything was created


def test_zookeeper_start_with_a_port_out_of_range_names_the_range(tmp_path):
    line = one_line_failure("zookeeper", "start", "--data-dir", str(tmp_path / "z"), "--port", "70000", code=2)
    assert line == "kafkalog: zookeeper start --port must be in 0-65535 (0: a free port), not 70000"


def test_a_recorded_port_out_of_range_names_the_file(tmp_path):
    data = tmp_path / "c"
    data.mkdir()
    (data / "ports.properties").write_text("broker.1.port=70000\n")
    line = one_line_failure("cluster", "up", "--brokers", "1", "--data-dir", str(data), code=1)
    assert "port 70000 recorded for broker.1 in" in line and "ports.properties is not in 1-65535" in line


def ok(*args: str, stdin: str | None = None) -> str:
    r = run(*args, stdin=stdin)
    assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.returncode, r.stderr)
    return r.stdout


def test_kafka_topics_spellings_create_list_describe_alter_delete_with_the_configs_column(bootstrap):
    bs = ("--bootstrap-server", bootstrap)
    name = f"kt-{uuid.uuid4().hex[:6]}"
    ok("topics", "--create", "--topic", name, "--partitions", "2", "--replication-factor", "1",
       "--config", "cleanup.policy=compact", "--config", "retention.ms=60000", *bs)  # fmt: skip
    assert name in ok("topics", "--list", *bs).split()
    head, *partitions = ok("topics", "--describe", "--topic", name, *bs).splitlines()
    assert head.startswith(f"Topic: {name}\tTopicId: ")
    assert head.endswith(
        "\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: cleanup.policy=compact,retention.ms=60000"
    )
    assert len(partitions) == 2
    plain = new_topic(bootstrap)
    assert ok("topics", "describe", "--topic", plain, *bs).splitlines()[0].endswith("\tConfigs: ")  # the old form
    ok("topics", "--alter", "--topic", name, "--partitions", "3", *bs)
    assert "PartitionCount: 3" in ok("topics", "--describe", "--topic", name, *bs)
    ok("topics", "--delete", "--topic", name, *bs)
    assert name not in ok("topics", "--list", *bs).split()


@pytest.mark.parametrize(
    "args, problem",
    [
        (["topics"], "topics needs an action: create | list | describe | delete | alter (or Kafka's --create"),
        (["topics", "--list", "--create"], "topics takes one action, not list and create"),
        (["topics", "lst"], "topics: unknown action 'lst'"),
        (["groups", "--describe"], "groups describe needs --group G (repeatable) or --all-groups"),
        (["groups", "--describe", "--group", "g", "--members", "--state"], "one view: --offsets, --members or --state"),
        (["groups", "--reset-offsets", "--group", "g", "--to-earliest"], "needs --topic (TOPIC or TOPIC:0,1,...) or --all-topics"),
        (["groups", "--reset-offsets", "--all-groups", "--all-topics", "--to-latest", "--dry-run", "--execute"],
         "takes one of --dry-run and --execute"),
        (["groups", "--list", "--state", "Stabel"], "unknown state 'Stabel'; known: Stable"),
        (["configs", "--describe", "--alter", "--topic", "t"], "configs takes one action, not describe and alter"),
        (["partitions", "reassign", "--generate", "--broker-list", "1,2"], "--generate needs --topics-to-move-json-file"),
        (["produce", "--topic", "t", "--property", "parse.kye=true"], "unknown --property 'parse.kye'"),
        (["produce", "--topic", "t", "--property", "headers.separator=:"],
         "headers.separator and headers.key.separator may not be equal"),
    ],
)  # fmt: skip
def test_kafka_spelling_mistakes_are_one_line_with_exit_code_2(args, problem):
    line = one_line_failure(*args, "--bootstrap-server", "127.0.0.1:1", code=2)
    assert problem in line, line


@pytest.mark.parametrize(
    "args",
    [
        ["topics", "--list", "--bogus"],
        ["topics", "--list", "--bogus", "3"],
        ["groups", "list", "--members-of", "x"],
        ["configs", "--describe", "--topic", "t", "--entity-kind", "topics"],
        ["cluster", "up", "--data-dir", "d", "--bogus"],
    ],
)
def test_an_unknown_flag_prints_the_subcommands_usage(args):
    r = run(*args, "--bootstrap-server", "127.0.0.1:1") if args[0] != "cluster" else run(*args)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    leaf = " ".join(args[:2]) if args[0] == "cluster" else args[0]
    assert r.stderr.startswith(f"usage: kafkalog {leaf} "), r.stderr
    assert f"kafkalog {leaf}: error: unrecognized arguments: " in r.stderr, r.stderr


def test_kafka_configs_spellings_describe_and_alter(bootstrap):
    topic = new_topic(bootstrap)
    entity = ("--entity-type", "topics", "--entity-name", topic, "--bootstrap-server", bootstrap)
    out = ok("configs", "--alter", *entity, "--add-config", "retention.ms=60000,max.message.bytes=2000")
    assert out == f"Completed updating config for topic {topic}.\n"
    described = ok("configs", "--describe", *entity)
    assert "  retention.ms=60000 sensitive=false" in described and "  max.message.bytes=2000 " in described
    ok("configs", "--alter", *entity, "--delete-config", "max.message.bytes")
    assert "max.message.bytes" not in ok("configs", "--describe", *entity)


def test_produce_reads_keys_and_headers_as_kafkas_console_producer_and_compresses_with_the_codec(bootstrap):
    from spark_kafkalog.client import Consumer, TopicPartition

    topic = new_topic(bootstrap)
    bs = ("--bootstrap-server", bootstrap, "--topic", topic)
    ok("produce", *bs, "--property", "parse.key=true", "--property", "key.separator=:", "--compression-codec",
       stdin="k1:v1\nk2:v:2\n")  # fmt: skip
    lines = "h1:a,h2:b\tk3\tv3\nNULL\tk4\tNULL\n"
    ok("produce", *bs, "--property", "parse.headers=true", "--property", "parse.key=true",
       "--property", "null.marker=NULL", "--compression-codec", "lz4", stdin=lines)  # fmt: skip
    r = run("produce", *bs, "--property", "parse.key=true", stdin="k5 v5\n")
    assert r.returncode == 1 and "kafkalog: stopped: no key separator ('\\t') found on line 1: 'k5 v5'" in r.stderr
    with Consumer(bootstrap) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek_to_beginning([TopicPartition(topic, 0)])
        got = []
        while len(got) < 4:
            got += consumer.poll(timeout_ms=1000)
    assert [(r.key, r.value, list(r.headers)) for r in got] == [
        (b"k1", b"v1", []),
        (b"k2", b"v:2", []),
        (b"k3", b"v3", [("h1", b"a"), ("h2", b"b")]),
        (b"k4", None, []),
    ]


def batch_codecs(log_dir: str, topic: str) -> list[int]:
    """The compression codec (attributes & 7) of every batch in partition 0's first segment."""
    import pathlib
    import struct

    data = (pathlib.Path(log_dir) / f"{topic}-0" / "00000000000000000000.log").read_bytes()
    codecs, pos = [], 0
    while pos + 61 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        codecs.append(struct.unpack_from(">h", data, pos + 21)[0] & 7)
        pos += 12 + length
    return codecs


def test_produce_compression_codec_without_a_value_is_gzip(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory)
    try:
        topic = new_topic(b.bootstrap_servers)
        bs = ("--bootstrap-server", b.bootstrap_servers, "--topic", topic)
        ok("produce", *bs, "--compression-codec", stdin="a\n")
        ok("produce", *bs, "--compression-codec", "zstd", stdin="b\n")
        ok("produce", *bs, stdin="c\n")
        assert batch_codecs(b.config.log_dirs[0], topic) == [1, 4, 0]  # gzip, zstd, none
    finally:
        b.stop()


def test_kafka_consumer_groups_spellings(bootstrap):
    from spark_kafkalog.client import Consumer, TopicPartition

    topic = new_topic(bootstrap, partitions=2)
    produce(bootstrap, topic, [b"a", b"b", b"c"])
    idle, active = f"idle-{uuid.uuid4().hex[:6]}", f"active-{uuid.uuid4().hex[:6]}"
    with Consumer(bootstrap, group_id=idle, enable_auto_commit=False) as c:
        c.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        c.commit({TopicPartition(topic, 0): 1, TopicPartition(topic, 1): 1})
    bs = ("--bootstrap-server", bootstrap)
    with Consumer(bootstrap, group_id=active, client_id="member-cli", enable_auto_commit=False) as member:
        member.subscribe([topic])
        wait_until(lambda: member.poll(timeout_ms=100) is not None and len(member.assignment()) == 2, 30, "assigned")
        assert {idle, active} <= set(ok("groups", "--list", *bs).split())
        states = ok("groups", "--list", "--state", *bs).splitlines()
        assert states[0].split() == ["GROUP", "STATE"]
        assert [idle, "Empty"] in [row.split() for row in states] and [active, "Stable"] in [r.split() for r in states]
        assert [row.split()[0] for row in ok("groups", "--list", "--state", "stable", *bs).splitlines()[1:]] == [active]
        members = ok("groups", "--describe", "--group", active, "--members", "--verbose", *bs).splitlines()
        assert members[0].split() == [
            "GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
            "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT",
        ]  # fmt: skip
        row = members[1].split()
        assert row[0] == active and row[4] == "member-cli" and row[5] == "2"
        assert row[6:] == ["-", f"{topic}:0,1", "-", "-"]  # a classic group has no epochs nor target
        state = ok("groups", "--describe", "--group", active, "--state", *bs).splitlines()
        assert state[0].split() == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
        assert state[1].split()[0] == active and state[1].split()[-2:] == ["Stable", "1"]
        verbose = ok("groups", "--describe", "--group", active, "--state", "--verbose", *bs).splitlines()
        assert verbose[0].split()[-3:] == ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]
        every = ok("groups", "--describe", "--all-groups", *bs)
        assert f"{idle}  " in every and f"{active}  " in every
    dry = ok("groups", "--reset-offsets", "--group", idle, "--all-topics", "--to-earliest", "--dry-run", *bs)
    assert [line.split() for line in dry.splitlines()] == [
        ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"],
        [idle, topic, "0", "0"],
        [idle, topic, "1", "0"],
    ]  # no "(dry run ...)" note once --dry-run is explicit
    ok("groups", "--reset-offsets", "--group", idle, "--all-topics", "--to-earliest", "--execute", *bs)
    lag = ok("groups", "--describe", "--group", idle, *bs)
    assert all(line.split()[3] == "0" for line in lag.splitlines()[1:] if line.startswith(idle))
    assert ok("groups", "--delete", "--group", idle, *bs) == f"deleted group {idle}\n"
    assert idle not in ok("groups", "--list", *bs).split()


def test_reassign_generate_prints_the_current_and_a_proposed_assignment(tmp_path_factory, tmp_path):
    import json

    brokers = start_brokers(3, tmp_path_factory)
    try:
        bs = brokers[0].bootstrap_servers
        with AdminClient(bs) as admin:
            admin.create_topics([NewTopic("move-me", 4, 2)])
        plan = tmp_path / "topics.json"
        plan.write_text('{"version":1,"topics":[{"topic":"move-me"}]}')
        out = ok("partitions", "reassign", "--generate", "--topics-to-move-json-file", str(plan),
                 "--broker-list", "1,2", "--bootstrap-server", bs).splitlines()  # fmt: skip
        assert out[0] == "Current partition replica assignment" and out[2] == ""
        assert out[3] == "Proposed partition reassignment configuration" and len(out) == 5
        current, proposed = json.loads(out[1]), json.loads(out[4])
        assert [p["partition"] for p in current["partitions"]] == [0, 1, 2, 3]
        assert all(len(p["replicas"]) == 2 for p in current["partitions"])
        assert [p["partition"] for p in proposed["partitions"]] == [0, 1, 2, 3]
        assert all(sorted(p["replicas"]) == [1, 2] for p in proposed["partitions"])
        assert {p["replicas"][0] for p in proposed["partitions"]} == {1, 2}  # leaders spread over both
        assert proposed["version"] == 1 and proposed["partitions"][0]["log_dirs"] == ["any", "any"]
        too_few = run("partitions", "reassign", "--generate", "--topics-to-move-json-file", str(plan),
                      "--broker-list", "2", "--bootstrap-server", bs)  # fmt: skip
        assert too_few.returncode == 1
        assert "topic move-me has replication factor 2, more than the 1 brokers of --broker-list" in too_few.stderr
        unknown = run("partitions", "reassign", "--generate", "--topics-to-move-json-file", str(plan),
                      "--broker-list", "1,9", "--bootstrap-server", bs)  # fmt: skip
        assert unknown.returncode == 1 and "broker 9, which is not in the cluster (brokers: 0,1,2)" in unknown.stderr
    finally:
        for b in brokers:
            b.stop()
