"""Client quotas managed with Apache Kafka's own tools, on kafkalog as on Kafka: Kafka 4.4's kafka-configs alters
user, client-id and user/client-id quotas over AlterClientQuotas and describes them over DescribeClientQuotas,
kafkalog's ``kafkalog configs`` describes them in the same words, and Kafka 4.4's Java AdminClient
(``describeClientQuotas`` with exact / default / any-specified filters, strict or not, and refused filters and
alterations) gets from kafkalog what it gets from Apache Kafka 3.9.1 (ZooKeeper) and 4.4.0 (KRaft)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.waiting import wait_until

from .tools import compile_java, run_java, run_tool

pytestmark = pytest.mark.compat

DRIVER = Path(__file__).parent / "java" / "QuotaDriver.java"


def configs(bootstrap: str, *args: str) -> str:
    return run_tool("kafka-configs", "--bootstrap-server", bootstrap, *args).stdout


def scenario(bootstrap: str, user: str, client: str) -> dict[str, object]:
    """Alter three entities with kafka-configs, then describe them with kafka-configs and the Java AdminClient."""
    classes = compile_java(DRIVER.read_text())
    users, clients = (
        ("--entity-type", "users", "--entity-name", user),
        ("--entity-type", "clients", "--entity-name", client),
    )
    out: dict[str, object] = {
        "alter user": configs(bootstrap, "--alter", *users, "--add-config", "producer_byte_rate=1048576"),
        "alter client": configs(bootstrap, "--alter", *clients, "--add-config", "consumer_byte_rate=2048"),
        "alter both": configs(
            bootstrap, "--alter", *users, *clients, "--add-config", "request_percentage=25,consumer_byte_rate=512"
        ),
    }

    def describe(*argv: str) -> list[str]:
        return sorted(run_java(classes, "QuotaDriver", "describe", bootstrap, *argv).stdout.splitlines())

    # Kafka 4.4 (KRaft) answers from its metadata image, which follows the controller by a moment
    wait_until(lambda: len(describe("strict", f"user={user}", f"client-id={client}")) == 1, 30, "the quotas described")
    out["kafka-configs users"] = configs(bootstrap, "--describe", *users)
    out["kafka-configs clients"] = configs(bootstrap, "--describe", *clients)
    out["kafka-configs both"] = configs(bootstrap, "--describe", *users, *clients)
    out["kafka-configs user, any client"] = configs(bootstrap, "--describe", *users, "--entity-type", "clients")
    filters = {
        "exact user strict": ("strict", f"user={user}"),
        "exact user": ("loose", f"user={user}"),
        "exact client strict": ("strict", f"client-id={client}"),
        "exact client": ("loose", f"client-id={client}"),
        "user and any client": ("loose", f"user={user}", "client-id"),
        "user and default client": ("loose", f"user={user}", "client-id="),
        "both exact strict": ("strict", f"user={user}", f"client-id={client}"),
        "nobody": ("loose", f"user=nobody-{user}"),
        "custom type": ("loose", "group"),
        "ip with user": ("loose", "ip", f"user={user}"),
        "user twice": ("loose", f"user={user}", "user"),
    }
    for name, argv in filters.items():
        out[name] = describe(*argv)
    refused = {
        "unknown key": (f"user={user}", "nonsense=1"),
        "fractional byte rate": (f"user={user}", "producer_byte_rate=1.5"),
        "ip with user": (f"user={user},ip=1.2.3.4", "connection_creation_rate=1"),
        # the default user: only a removal, so that no quota holds the other tests of the session's brokers
        "default user": ("user=", "request_percentage="),
    }
    for name, argv in refused.items():
        line = run_java(classes, "QuotaDriver", "alter", bootstrap, *argv).stdout.strip()
        out[f"alter {name}"] = line.split(" ")[:2]  # the outcome and the exception's class
    return out


def remove_quotas(bootstrap: str, user: str, client: str) -> None:
    """Leave the session's brokers without the scenario's quotas (a configured quota changes how a broker reads
    pipelined requests)."""
    classes = compile_java(DRIVER.read_text())
    keys = [f"{k}=" for k in ("producer_byte_rate", "consumer_byte_rate", "request_percentage")]
    for entity in (f"user={user}", f"client-id={client}", f"user={user},client-id={client}"):
        run_java(classes, "QuotaDriver", "alter", bootstrap, entity, *keys)


def test_kafka_tools_manage_quotas_on_kafkalog_as_on_kafka(kafkalog, kafka):
    user, client = f"qu-{uuid.uuid4().hex[:6]}", f"qc-{uuid.uuid4().hex[:6]}"
    try:
        on_kafka = scenario(kafka.bootstrap_servers, user, client)
        on_kafkalog = scenario(kafkalog.bootstrap_servers, user, client)
        ours = subprocess.run(
            [sys.executable, "-m", "broker.cli", "configs", "--bootstrap-server", kafkalog.bootstrap_servers,
             "--describe", "--entity-type", "users", "--entity-name", user, "--entity-type", "clients",
             "--entity-name", client],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        for bootstrap in (kafka.bootstrap_servers, kafkalog.bootstrap_servers):
            remove_quotas(bootstrap, user, client)
    assert on_kafkalog == on_kafka, f"Apache Kafka {kafka.version} answered differently"
    # and what the tools answered is what a reader expects
    assert on_kafkalog["alter both"] == f"Completed updating config for user {user}.\n"
    assert on_kafkalog["kafka-configs users"] == (
        f"Quota configs for user-principal '{user}' are producer_byte_rate=1048576.0\n"
    )
    assert on_kafkalog["both exact strict"] == [
        f"entity client-id={client},user={user} values consumer_byte_rate=512.0,request_percentage=25.0"
    ]
    # kafkalog's own tool prints kafka-configs' line
    assert (ours.returncode, ours.stdout) == (0, on_kafka["kafka-configs both"]), ours.stderr
    assert (("client-id", client), ("user", user)) not in kafkalog.broker.registry.quota_configs()  # removed
