"""`kafkalog` mistakes answered in one line within seconds, without a traceback: bad configuration, a
ZooKeeper or bootstrap server where nothing listens, data and log dirs that are files, usage errors (exit
code 2), ports in use, restart-broker without a cluster."""

from __future__ import annotations

import socket

import pytest

from .cli_process import closed_port, fails_in_one_line, run

pytestmark = pytest.mark.integration


def test_bad_config_names_the_key(tmp_path):
    cfg = tmp_path / "server.properties"
    cfg.write_text("broker.id=1\nzookeeper.connect=localhost:1\nnum.partitions=zero\n")
    r = run("broker", "start", "--config", str(cfg))
    assert r.returncode == 1 and "num.partitions" in r.stderr and "expected int" in r.stderr
    r = run("broker", "start", "--config", str(cfg), "--override", "num.partitions=2", "--override", "broker.id=x")
    assert r.returncode == 1 and "broker.id" in r.stderr


def test_binary_bytes_in_server_properties_are_reported_in_one_line(tmp_path):
    cfg = tmp_path / "server.properties"
    cfg.write_bytes(b"broker.id=1\nzookeeper.connect=localhost:1\n\xff\xfe\x00junk=\x80\n")
    line = fails_in_one_line("broker", "start", "--config", str(cfg))
    assert f"{cfg} is not a UTF-8 text file (byte 0xff at offset" in line


def test_broker_start_where_no_zookeeper_listens_fails_within_seconds(tmp_path):
    zk = f"127.0.0.1:{closed_port()}"
    cfg = tmp_path / "server.properties"
    cfg.write_text(
        f"broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs={tmp_path / 'logs'}\nzookeeper.connect={zk}\n"
    )
    line = fails_in_one_line("broker", "start", "--config", str(cfg))
    assert f"cannot connect to ZooKeeper at {zk} (connection refused)" in line


def test_a_log_dir_that_is_a_file_says_so(tmp_path):
    file = tmp_path / "not-a-dir"
    file.write_text("x")
    cfg = tmp_path / "server.properties"
    cfg.write_text(f"broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs={file}\nzookeeper.connect=localhost:1\n")
    line = fails_in_one_line("broker", "start", "--config", str(cfg))
    assert f"log dir (log.dirs) {file} is a regular file, not a directory" in line


@pytest.mark.parametrize("command", ["cluster", "zookeeper"])
def test_a_data_dir_that_is_a_file_says_so(tmp_path, command):
    file = tmp_path / "not-a-dir"
    file.write_text("x")
    args = ("cluster", "up", "--brokers", "1") if command == "cluster" else ("zookeeper", "start", "--port", "0")
    line = fails_in_one_line(*args, "--data-dir", str(file))
    assert f"data dir {file} is a regular file, not a directory" in line
    assert file.read_text() == "x"


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("cluster", "up", "--brokers", "0", "--data-dir", "unused"), "cluster up needs --brokers 1 or more, not 0"),
        (
            ("consume", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--offset", "5"),
            "--offset needs --partition",
        ),
        (
            ("consume", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--partition", "0", "--offset", "soon"),
            "--offset must be earliest, latest or an offset of 0 or more, not 'soon'",
        ),
        (
            ("consume", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--format", "%t %x"),
            "--format: unknown token %x at position 3",
        ),
        (
            ("consume", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--property", "print.keys=true"),
            "unknown --property 'print.keys'",
        ),
        (
            ("consume", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--property", "print.key=yes"),
            "--property print.key must be true or false, not 'yes'",
        ),
        (
            ("consume", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--format", "%s", "--property", "a=b"),
            "--format and --property are alternatives",
        ),
        (
            ("consume", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--group", "g", "--partition", "0"),
            "cannot be combined with --partition or --offset",
        ),
        (("consume", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--max-messages", "0"), "--max-messages"),
        (("offsets", "--bootstrap-server", "127.0.0.1:1", "--time", "yesterday"), "offsets --time must be -1"),
        (("offsets", "--bootstrap-server", "127.0.0.1:1", "--partitions", "0"), "offsets --partitions needs --topic"),
        (
            ("offsets", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--partitions", "3-1"),
            "ids or ranges like 0,2-4, not '3-1'",
        ),
        (("topics", "alter", "--bootstrap-server", "127.0.0.1:1", "--topic", "t"), "topics alter needs --partitions"),
        (("topics", "alter", "--bootstrap-server", "127.0.0.1:1", "--partitions", "3"), "topics alter needs --topic"),
        (
            ("topics", "delete", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--if-not-exists"),
            "--if-not-exists applies to topics create only",
        ),
        (("dump-log", "--files", ","), "dump-log --files needs at least one file"),
        (("cluster", "restart-broker", "--data-dir", "unused", "--broker", "0"), "needs a broker id of 1 or more"),
    ],
    ids=[
        "no-brokers",
        "offset-without-partition",
        "offset-word",
        "format-token",
        "unknown-property",
        "property-not-boolean",
        "format-and-property",
        "group-with-partition",
        "max-messages-0",
        "offsets-time",
        "offsets-partitions-without-topic",
        "offsets-partition-range",
        "alter-without-partitions",
        "alter-without-topic",
        "if-not-exists-on-delete",
        "dump-log-no-files",
        "restart-broker-id",
    ],
)
def test_usage_mistakes_are_one_line_with_exit_code_2(args, problem):
    assert problem in fails_in_one_line(*args, code=2)


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("topics", "list"), None),
        (("produce", "--topic", "t"), "a line\n"),
        (("consume", "--topic", "t", "--from-beginning"), None),
        (("offsets", "--topic", "t"), None),
        (("topics", "alter", "--topic", "t", "--partitions", "4"), None),
    ],
    ids=["topics", "produce", "consume", "offsets", "topics-alter"],
)
def test_client_commands_against_a_dead_address_fail_within_seconds_naming_it(args, stdin):
    dead = f"127.0.0.1:{closed_port()}"
    line = fails_in_one_line(*args, "--bootstrap-server", dead, stdin=stdin)
    assert f"cannot connect to any bootstrap server: {dead} (connection refused)" in line


def test_cluster_up_refuses_a_recorded_port_that_another_process_holds(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        (tmp_path / "ports.properties").write_text(f"zookeeper.port={closed_port()}\nbroker.1.port={port}\n")
        line = fails_in_one_line("cluster", "up", "--brokers", "1", "--data-dir", str(tmp_path), code=1)
    assert f"port {port} recorded for broker.1 in {tmp_path / 'ports.properties'} is in use" in line


def test_restart_broker_without_a_running_cluster_says_so(tmp_path):
    line = fails_in_one_line("cluster", "restart-broker", "--data-dir", str(tmp_path), "--broker", "1", code=1)
    assert f"no kafkalog cluster up has run on {tmp_path}" in line
