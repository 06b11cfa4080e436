"""Apache Kafka 4.4's Java consumer with the consumer group protocol (KIP-848, ``group.protocol=consumer``),
the same driver against kafkalog and against Apache Kafka 4.4 (the oracle): three members share a 6-partition
topic, every record produced once the group formed is read exactly once and committed, and when one member leaves the other two own every
partition again."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from spark_kafkalog.client import AdminClient, TopicPartition

from .conftest import new_topic
from .tools import compile_java, run_java

pytestmark = pytest.mark.compat

DRIVER = Path(__file__).parent / "java" / "ConsumerProtocolDriver.java"
PARTITIONS = 6
RECORDS = 60


def share_a_topic(bootstrap: str, assignor: str) -> None:
    topic = new_topic(bootstrap, PARTITIONS, prefix="kip848")
    group = f"kip848-{uuid.uuid4().hex[:8]}"
    out = run_java(
        compile_java(DRIVER.read_text()), "ConsumerProtocolDriver", "share", bootstrap, topic, group, "3",
        str(RECORDS), assignor, timeout_s=240,
    ).stdout  # fmt: skip
    lines = [line.split(" ") for line in out.splitlines()]
    assert not [f for f in lines if f[0] == "error"], out
    records = sorted((int(p), int(o), v) for _, _, p, o, v in (f for f in lines if f[0] == "record"))
    assert records == sorted((i % PARTITIONS, i // PARTITIONS, f"r{i}") for i in range(RECORDS)), out
    owned = {int(m): parts for _, m, parts in (f for f in lines if f[0] == "owned")}
    shares = [set(map(int, filter(None, owned[m].strip("[]").split(",")))) for m in range(3)]
    assert all(shares) and set().union(*shares) == set(range(PARTITIONS)) and sum(map(len, shares)) == PARTITIONS
    reowned = [f for f in lines if f[0] == "reowned"]
    assert len(reowned) == 2, out
    after = [set(map(int, filter(None, f[3].strip("[]").split(",")))) for f in reowned]
    assert set().union(*after) == set(range(PARTITIONS)) and sum(map(len, after)) == PARTITIONS
    epochs = [int(f[2]) for f in lines if f[0] == "epoch"]
    assert len(epochs) == 2 and all(e > 0 for e in epochs), out
    with AdminClient(bootstrap) as admin:
        committed = admin.list_group_offsets(group)
    assert {tp: o.offset for tp, o in committed.items()} == {
        TopicPartition(topic, p): RECORDS // PARTITIONS for p in range(PARTITIONS)
    }


@pytest.mark.parametrize("kafka", ["kafka-4.4"], indirect=True)
@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_java_consumer_protocol_on_kafka(kafka, assignor):
    share_a_topic(kafka.bootstrap_servers, assignor)


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_java_consumer_protocol_on_kafkalog(kafkalog, assignor):
    share_a_topic(kafkalog.bootstrap_servers, assignor)
