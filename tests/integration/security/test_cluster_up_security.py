"""``kafkalog cluster up --security``: one command gives a 3-broker SASL_SSL cluster replicating over SCRAM, with
the client settings printed; clients without them, or with a wrong password, are refused; ACLs are on (a new user
sees nothing until granted; the brokers' own identity is a super user, so replication works)."""

from __future__ import annotations

import signal
import subprocess
import uuid

import pytest

from broker.config import parse_properties
from tests.integration.cli_process import CLI, read_line, run
from tests.integration.test_cli_start_stop import assert_stopped_cleanly

pytestmark = pytest.mark.integration


def free_base_port() -> int:
    """A port p with p, p + 1 and p + 2 free (brokers 1-3 of ``--base-port p``)."""
    from broker.cli.cluster import port_free
    from broker.processes import free_port

    for _ in range(50):
        port = free_port("127.0.0.1")
        if port < 65000 and all(port_free("127.0.0.1", port + i) for i in range(3)):
            return port
    raise AssertionError("no three consecutive free ports")


def test_cluster_up_security_serves_sasl_ssl_with_scram_and_replicates(tmp_path):
    data = tmp_path / "secure"
    proc = subprocess.Popen(
        [
            *CLI,
            "cluster",
            "up",
            "--data-dir",
            str(data),
            "--brokers",
            "3",
            "--security",
            "--zookeeper-port",
            "0",
            "--base-port",
            str(free_base_port()),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        bootstrap = read_line(proc, "bootstrap.servers=").split("=", 1)[1]
        security = data / "security"
        client_properties = security / "client.properties"
        settings = parse_properties(client_properties.read_text())
        assert settings["security.protocol"] == "SASL_SSL" and settings["sasl.mechanism"] == "SCRAM-SHA-512"
        password = (security / "admin.password").read_text().strip()
        for private in ("admin.password", "broker.pem", "ca-key.pem", "client.properties"):
            assert (security / private).stat().st_mode & 0o077 == 0, private

        topic = f"secure-{uuid.uuid4().hex[:8]}"
        created = run(
            "topics", "create", "--bootstrap-server", bootstrap, "--command-config", str(client_properties),
            "--topic", topic, "--partitions", "3", "--replication-factor", "3",
        )  # fmt: skip
        assert created.returncode == 0, created.stderr

        from spark_kafkalog.client import Consumer, Producer, TopicPartition

        with Producer(bootstrap, acks="all", **settings) as producer:
            for i in range(300):
                producer.send(topic, b"v%d" % i, partition=i % 3)
            producer.flush(60)
        consumer = Consumer(bootstrap, **settings)
        try:
            consumer.assign([TopicPartition(topic, p) for p in range(3)])
            consumer.seek_to_beginning()
            got: list[bytes] = []
            for _ in range(60):
                got += [r.value for r in consumer.poll(1000)]
                if len(got) >= 300:
                    break
        finally:
            consumer.close()
        assert sorted(got) == sorted(b"v%d" % i for i in range(300))

        described = run(
            "topics", "describe", "--bootstrap-server", bootstrap, "--command-config", str(client_properties),
            "--topic", topic,
        )  # fmt: skip
        assert described.returncode == 0 and described.stdout.count("Isr: ") == 3, described.stdout
        for line in described.stdout.splitlines():
            if "Isr: " in line:
                assert len(line.split("Isr: ")[1].split(",")) == 3, line  # replication over SASL_SSL works

        # a user added with kafkalog configs logs in on every broker at once, none restarted
        added = run(
            "configs", "--bootstrap-server", bootstrap, "--command-config", str(client_properties), "--alter",
            "--entity-type", "users", "--entity-name", "carol",
            "--add-config", "SCRAM-SHA-256=[iterations=8192,password=carol-secret]",
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        assert "carol-secret" not in added.stdout + added.stderr
        carol = {
            **{k: v for k, v in settings.items() if k.startswith("ssl.")},
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "carol",
            "sasl.password": "carol-secret",
        }
        from spark_kafkalog.client import AdminClient
        from tests.waiting import wait_until

        def topics_carol_sees(address: str) -> list[str] | None:
            """The topics carol lists on one broker; None when she cannot log in."""
            try:
                with AdminClient(address, **carol) as admin:
                    return admin.list_topics()
            except Exception:
                return None

        # ACLs are on: logged in, carol sees no topic until the admin lets her describe it (kafkalog acls)
        for address in bootstrap.split(","):
            wait_until(lambda: topics_carol_sees(address) == [], 15, f"carol logged in on {address}")  # noqa: B023
        granted = run(
            "acls", "--bootstrap-server", bootstrap, "--command-config", str(client_properties), "--add",
            "--allow-principal", "User:carol", "--operation", "Describe", "--topic", topic,
        )  # fmt: skip
        assert granted.returncode == 0, granted.stderr
        for address in bootstrap.split(","):
            wait_until(lambda: topics_carol_sees(address) == [topic], 15, f"carol seeing {topic} on {address}")  # noqa: B023

        plaintext = run("topics", "list", "--bootstrap-server", bootstrap)
        assert plaintext.returncode != 0
        wrong = tmp_path / "wrong.properties"
        wrong.write_text(client_properties.read_text().replace(password, "not-the-password"))
        refused = run("topics", "list", "--bootstrap-server", bootstrap, "--command-config", str(wrong))
        assert refused.returncode != 0 and "SCRAM-SHA-512" in refused.stderr, refused.stderr
        assert password not in refused.stderr and "not-the-password" not in refused.stderr
    finally:
        proc.send_signal(signal.SIGINT)
    err = assert_stopped_cleanly(proc, data, 3)
    assert "client.properties" in err and password not in err
