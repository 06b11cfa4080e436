"""Apache Kafka 4.4's Java AdminClient (a javac-compiled driver) against a kafkalog broker: topics, configs,
offsets, DeleteRecords and consumer groups, each result compared with what kafkalog's own clients wrote."""

from __future__ import annotations

import base64
import threading
import uuid
from pathlib import Path

import pytest

from spark_kafkalog.client import AdminClient, Consumer, Producer, TopicPartition
from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
from tests.waiting import wait_until

from .tools import compile_java, run_java

pytestmark = pytest.mark.compat

T0 = 1_700_000_000_000
DRIVER = Path(__file__).parent / "java" / "AdminDriver.java"


def lines(stdout: str, kind: str) -> list[list[str]]:
    """The driver's lines starting with ``kind``, split into fields (the kind dropped)."""
    return [line.split(" ")[1:] for line in stdout.splitlines() if line.split(" ", 1)[0] == kind]


def java_uuid(hyphenated: str) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes without padding."""
    return base64.urlsafe_b64encode(uuid.UUID(hyphenated).bytes).decode().rstrip("=")


def test_java_admin_client_creates_describes_lists_offsets_deletes_records_and_describes_groups(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    classes = compile_java(DRIVER.read_text())
    topic = f"java-admin-{uuid.uuid4().hex[:8]}"

    created = run_java(classes, "AdminDriver", "create", bootstrap, topic, "3", "retention.ms=98765").stdout
    assert lines(created, "created") == [[topic]]
    with AdminClient(bootstrap) as admin:
        ours = admin.describe_topics([topic])[topic]
        assert admin.describe_configs(topic, keys=["retention.ms"]) == {"retention.ms": "98765"}
    assert lines(created, "topic") == [[topic, java_uuid(ours.topic_id), "internal=false"]]
    assert lines(created, "partition") == [[str(p), "leader=0", "replicas=0", "isr=0"] for p in range(3)]

    # record i: partition i % 3, timestamp T0 + i s; 4 records per partition
    with Producer(bootstrap) as producer:
        sent = [
            producer.send(topic, b"v%d" % i, key=b"k%d" % i, partition=i % 3, timestamp_ms=T0 + i * 1000)
            for i in range(12)
        ]
        producer.flush(30)
        assert [(m.partition, m.offset) for m in (f.result(30) for f in sent)] == [(i % 3, i // 3) for i in range(12)]

    group = f"java-admin-g-{uuid.uuid4().hex[:8]}"
    consumer = Consumer(bootstrap, group_id=group, client_id="py-member", auto_offset_reset="earliest")
    seen: list = []
    stop = threading.Event()

    def member() -> None:
        consumer.subscribe([topic])
        committed = False
        while not stop.is_set():
            seen.extend(consumer.poll(200))
            if len(seen) >= 12 and not committed:
                consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(p + 1, f"meta-{p}") for p in range(3)})
                committed = True

    thread = threading.Thread(target=member, daemon=True)
    thread.start()
    try:
        with AdminClient(bootstrap) as admin:
            wait_until(lambda: len(admin.list_group_offsets(group)) == 3, 60, "the member's commits")
            wait_until(lambda: admin.describe_groups([group])[group].state == "Stable", 30, "a stable group")
        # records at T0+4s and later: record 4 (p1 offset 1), record 5 (p2 offset 1), record 6 (p0 offset 2)
        inspected = run_java(classes, "AdminDriver", "inspect", bootstrap, topic, "3", str(T0 + 4000), group, "2")
        out = inspected.stdout
    finally:
        stop.set()
        thread.join(30)
        consumer.close()

    assert lines(out, "topic") == [[topic, java_uuid(ours.topic_id), "internal=false"]]
    assert lines(out, "config") == [
        ["retention.ms", "98765", "DYNAMIC_TOPIC_CONFIG", "default=false"],
        ["cleanup.policy", "delete", "DEFAULT_CONFIG", "default=true"],
        ["max.message.bytes", "1048588", "DEFAULT_CONFIG", "default=true"],
    ]
    offsets = {(label, int(p)): (int(o), int(ts)) for label, p, o, ts in lines(out, "offsets")}
    assert offsets == {
        **{("earliest", p): (0, -1) for p in range(3)},
        **{("latest", p): (4, -1) for p in range(3)},
        ("time", 0): (2, T0 + 6000),
        ("time", 1): (1, T0 + 4000),
        ("time", 2): (1, T0 + 5000),
        # the last record of each partition: records 9, 10, 11
        **{("max", p): (3, T0 + (9 + p) * 1000) for p in range(3)},
        ("earliest-after-delete", 0): (2, -1),
        ("earliest-after-delete", 1): (0, -1),
        ("earliest-after-delete", 2): (0, -1),
    }
    assert lines(out, "deleted") == [["0", "low_watermark=2"]]
    assert lines(out, "listed") == [[group, "simple=false", "state=Stable"]]
    assert lines(out, "group") == [
        [group, "state=Stable", "type=Classic", "assignor=range", "coordinator=0", "members=1"]
    ]
    assert lines(out, "member") == [["py-member", "[0,", "1,", "2]"]]
    assert lines(out, "committed") == [[str(p), str(p + 1), f"meta-{p}"] for p in range(3)]
    assert sorted(r.value for r in seen) == sorted(b"v%d" % i for i in range(12))
