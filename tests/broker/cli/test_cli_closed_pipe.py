"""Every `kafkalog` subcommand run with its stdout a pipe whose reader is gone (``kafkalog ... | head``):
one ``kafkalog: ...`` line and a clean exit, never a traceback. The servers that need ZooKeeper (``zookeeper
start``, ``cluster up``) are in tests/integration/test_cli_closed_pipe.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest

from broker.cli import build_parser
from broker.cli.output import CLOSED_MESSAGE
from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from tests.broker.conftest import start_brokers
from tests.waiting import wait_until

CLI = [sys.executable, "-m", "broker.cli"]
INTEGRATION = {"zookeeper start", "cluster up"}  # tests/integration/test_cli_closed_pipe.py


def leaf_commands() -> set[str]:
    """``"topics create"``, ``"consume"``, ... : every command path the parser accepts."""
    import argparse

    def subparsers(parser):
        return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)

    leaves = set()
    for name, parser in subparsers(build_parser()).choices.items():
        nested = subparsers(parser)
        action = next((a for a in parser._actions if a.dest == "action" and a.choices), None)
        kafka_actions = parser.get_default("action_choices")  # word and --flag (broker.cli.actions)
        if nested is not None:
            leaves |= {f"{name} {sub}" for sub in nested.choices}
        elif kafka_actions is not None:
            leaves |= {f"{name} {choice}" for choice in kafka_actions[1]}
        elif action is not None:
            leaves |= {f"{name} {choice}" for choice in action.choices}
        else:
            leaves.add(name)
    return leaves


def into_closed_pipe(args: list[str], stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the CLI with stdout the write end of a pipe whose read end was closed before it started."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*CLI, *args], input=stdin, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=timeout
        )
    finally:
        os.close(write_end)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, group_initial_rebalance_delay_ms=0, offsets_topic_num_partitions=1)
    bs = b.bootstrap_servers
    topic, spare = f"pipe-{uuid.uuid4().hex[:6]}", f"spare-{uuid.uuid4().hex[:6]}"
    with AdminClient(bs) as admin:
        admin.create_topics([NewTopic(topic, 2, 1), NewTopic(spare, 1, 1)])
    with Producer(bs) as producer:
        for i in range(2000):
            producer.send(topic, f"value {i} ".encode() * 4, key=f"k{i}".encode())
        producer.flush()
    for group in ("pipe-g", "pipe-spare-g"):
        with Consumer(bs, group_id=group, enable_auto_commit=False) as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            consumer.commit({TopicPartition(topic, 0): 5})
    segment = os.path.join(b.config.log_dirs[0], f"{topic}-0", "00000000000000000000.log")
    tmp = tmp_path_factory.mktemp("pipe")
    (tmp / "move.json").write_text(f'{{"version":1,"topics":[{{"topic":"{topic}"}}]}}')
    yield {"bs": bs, "topic": topic, "spare": spare, "segment": segment, "tmp": tmp, "move": str(tmp / "move.json")}
    b.stop()


# command path -> (arguments, what happens): "closed" = it prints data, so it stops with the one line and
# exit 1; "ok" = nothing for stdout (exit 0); "fails" = its own one-line error (nothing to write either)
def cases(e: dict) -> dict[str, list[tuple[list[str], str]]]:
    bs, topic = ["--bootstrap-server", e["bs"]], e["topic"]
    tmp = e["tmp"]
    return {
        "broker start": [],  # a server: test_broker_start_keeps_serving_when_its_stdout_is_closed
        "cluster restart-broker": [(["cluster", "restart-broker", "--data-dir", str(tmp), "--broker", "1"], "fails")],
        "cluster stop": [(["cluster", "stop", "--data-dir", str(tmp)], "fails")],
        "topics create": [(["topics", "create", *bs, "--topic", f"new-{uuid.uuid4().hex[:6]}"], "closed")],
        "topics list": [(["topics", "list", *bs], "closed"), (["topics", "--list", *bs], "closed")],
        "topics describe": [
            (["topics", "describe", *bs], "closed"),
            (["topics", "describe", *bs, "--topic", topic], "closed"),
        ],
        "topics alter": [(["topics", "alter", *bs, "--topic", e["spare"], "--partitions", "2"], "closed")],
        "topics delete": [(["topics", "delete", *bs, "--topic", e["spare"]], "closed")],
        "produce": [
            (["produce", *bs, "--topic", topic], "ok"),
            (["produce", *bs, "--topic", topic, "--property", "parse.key=true", "--property", "key.separator=:"], "ok"),
        ],
        "consume": [(["consume", *bs, "--topic", topic, "--from-beginning", "--max-messages", "1000"], "closed")],
        "offsets": [(["offsets", *bs, "--topic", topic], "closed")],
        "dump-log": [(["dump-log", "--files", e["segment"], "--print-data-log"], "closed")],
        "groups list": [(["groups", "list", *bs], "closed")],
        "groups describe": [
            (["groups", "describe", *bs, "--group", "pipe-g"], "closed"),
            (["groups", "--describe", *bs, "--all-groups", "--members", "--verbose"], "closed"),
            (["groups", "--describe", *bs, "--group", "pipe-g", "--state"], "closed"),
        ],
        "groups reset-offsets": [
            (["groups", "reset-offsets", *bs, "--group", "pipe-g", "--topic", topic, "--to-earliest"], "closed")
        ],
        "groups delete": [(["groups", "delete", *bs, "--group", "pipe-spare-g"], "closed")],
        "partitions reassign": [
            (["partitions", "reassign", *bs, "--list"], "closed"),
            (
                [
                    "partitions",
                    "reassign",
                    *bs,
                    "--generate",
                    "--topics-to-move-json-file",
                    e["move"],
                    "--broker-list",
                    "0",
                ],
                "closed",
            ),
        ],
        "leader-election": [
            (["leader-election", *bs, "--election-type", "preferred", "--topic", topic, "--partition", "0"], "closed")
        ],
        "configs describe": [
            (["configs", "describe", *bs, "--broker", "0", "--all"], "closed"),
            (["configs", "--describe", *bs, "--entity-type", "topics", "--entity-name", topic, "--all"], "closed"),
        ],
        "configs alter": [
            (["configs", "alter", *bs, "--topic", topic, "--add-config", "retention.ms=86400000"], "closed")
        ],
        "status": [(["status", *bs], "closed"), (["status", *bs, "--watch", "0.2"], "closed")],
        # the broker has no authorizer: add prints before CreateAcls answers SECURITY_DISABLED, list and remove do not
        "acls add": [(["acls", "--add", *bs, "--allow-principal", "User:a", "--topic", topic], "closed")],
        "acls list": [(["acls", "--list", *bs], "fails")],
        "acls remove": [(["acls", "remove", *bs, "--force", "--topic", topic], "fails")],
        "transactions list": [(["transactions", "list", *bs], "closed")],
        "transactions describe": [(["transactions", "describe", *bs, "--transactional-id", "none-such"], "fails")],
    }


def test_the_table_covers_every_subcommand(env):
    assert set(cases(env)) | INTEGRATION == leaf_commands()


def assert_one_line(r: subprocess.CompletedProcess, outcome: str, args: list[str]) -> None:
    what = f"{' '.join(args)}: exit {r.returncode}\n{r.stderr}"
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, what
    closed = [line for line in r.stderr.splitlines() if CLOSED_MESSAGE in line]
    if outcome == "closed":
        assert r.returncode == 1 and closed == [f"kafkalog: {CLOSED_MESSAGE}"], what
        assert r.stderr.splitlines()[-1] == closed[0], what
    elif outcome == "ok":
        assert r.returncode == 0 and not closed, what
    else:
        assert r.returncode == 1 and not closed, what
        assert len([line for line in r.stderr.splitlines() if line.startswith("kafkalog:")]) == 1, what


@pytest.mark.parametrize("command", sorted(leaf_commands() - INTEGRATION - {"broker start"}))
def test_a_subcommand_into_a_closed_pipe_says_so_in_one_line(env, command):
    for args, outcome in cases(env)[command]:
        r = into_closed_pipe(args, stdin="k:a\nk:b\n")
        assert_one_line(r, outcome, args)


@pytest.mark.parametrize("args", [["--help"], ["topics", "--help"], ["--version"]])
def test_help_and_version_into_a_closed_pipe_have_no_traceback(args):
    r = into_closed_pipe(args)  # argparse drops what it cannot write (its choice: exit 0); at most our one line
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert r.stderr in ("", f"kafkalog: {CLOSED_MESSAGE}\n") and r.returncode in (0, 1), (r.returncode, r.stderr)


def test_broker_start_keeps_serving_when_its_stdout_is_closed(tmp_path):
    config = tmp_path / "server.properties"
    config.write_text(
        f"broker.id=7\nlisteners=PLAINTEXT://127.0.0.1:0\nzookeeper.connect=memory:pipe\nlog.dirs={tmp_path / 'logs'}\n"
    )
    read_end, write_end = os.pipe()
    os.close(read_end)
    err = tmp_path / "stderr"
    with err.open("w") as err_file:
        proc = subprocess.Popen([*CLI, "broker", "start", "--config", str(config)], stdout=write_end, stderr=err_file)
    os.close(write_end)
    try:
        wait_until(lambda: "stdout was closed" in err.read_text() or proc.poll() is not None, timeout_s=60)
        assert proc.poll() is None, err.read_text()  # still serving
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0, err.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.read_text()
    assert "Traceback" not in text and "Exception ignored" not in text, text
    warnings = [line for line in text.splitlines() if line.startswith("kafkalog:")]
    assert len(warnings) == 1 and warnings[0].startswith("kafkalog: warning: stdout was closed (broken pipe)"), text
    assert "kafkalog broker 7 serving on PLAINTEXT://127.0.0.1:" in warnings[0], text
