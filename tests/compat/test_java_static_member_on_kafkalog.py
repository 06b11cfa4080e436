"""Apache Kafka 4.4's Java consumer as a static group member (``group.instance.id``, KIP-345) against kafkalog:
a restart within the session timeout takes its slot back without a rebalance."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from spark_kafkalog.client import AdminClient, Producer

from .conftest import new_topic
from .tools import compile_java, run_java

pytestmark = pytest.mark.compat

DRIVER = Path(__file__).parent / "java" / "StaticMemberDriver.java"


def test_java_static_member_restarts_into_its_slot_without_a_rebalance(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    classes = compile_java(DRIVER.read_text())
    group = f"static-{uuid.uuid4().hex[:8]}"

    def produce(start: int, stop: int) -> None:
        with Producer(bootstrap) as producer:
            for i in range(start, stop):
                producer.send(topic, b"r%d" % i, partition=i % 2)
            producer.flush(30)

    def run(n: int) -> tuple[list[str], list[tuple[int, int, str]]]:
        out = run_java(classes, "StaticMemberDriver", "consume", bootstrap, topic, group, "instance-1", str(n)).stdout
        lines = [line.split(" ") for line in out.splitlines()]
        (member,) = [fields[1:] for fields in lines if fields[0] == "member"]
        records = sorted((int(p), int(o), v) for kind, p, o, v in (f for f in lines if f[0] == "record"))
        return member, records

    produce(0, 10)
    (generation, member_id, owned), first = run(10)
    assert owned == "[0,1]"
    assert first == sorted((i % 2, i // 2, f"r{i}") for i in range(10))
    with AdminClient(bootstrap) as admin:
        described = admin.describe_groups([group])[group]
        # closed without LeaveGroup: still a member, under its instance id
        assert [(m.member_id, m.group_instance_id) for m in described.members] == [(member_id, "instance-1")]
        assert {tp.partition: o.offset for tp, o in admin.list_group_offsets(group).items()} == {0: 5, 1: 5}

    produce(10, 16)
    (generation_2, member_id_2, owned_2), second = run(6)
    # the same slot: a new member id, the same generation (no rebalance), the committed offsets resumed
    assert (generation_2, owned_2) == (generation, "[0,1]") and member_id_2 != member_id
    assert second == sorted((i % 2, i // 2, f"r{i}") for i in range(10, 16))
    with AdminClient(bootstrap) as admin:
        described = admin.describe_groups([group])[group]
        assert [(m.member_id, m.group_instance_id) for m in described.members] == [(member_id_2, "instance-1")]
