"""kafkalog's ``__share_group_state`` records are Kafka 4.4's bytes: ``java/ShareStateRecordsDriver.java``, compiled
against Kafka 4.4's share-coordinator jar, serializes ShareSnapshot/ShareUpdate records and a tombstone with
``ShareCoordinatorRecordSerde`` and prints the coordinator keys' partitions (``Utils.abs(hashCode) % 50``);
kafkalog encodes the same records to the same bytes, decodes Kafka's, and computes the same partitions. The same
bytes are golden in tests/broker/share/test_share_state_records.py."""

from __future__ import annotations

import hashlib
import subprocess
import uuid
from pathlib import Path

import pytest

from broker.cluster.registry import uuid_to_base64
from broker.cluster.zookeeper_server import find_java
from broker.share.record_codec import decode_record, encode_record
from broker.share.records import share_state_partition_for
from tests.broker.share.test_share_state_records import GOLDEN

from .peers import KAFKA_44, classpath, peers_dir

pytestmark = pytest.mark.compat

DRIVER = Path(__file__).parent / "java" / "ShareStateRecordsDriver.java"
TOPIC_ID = uuid.UUID("12345678-9abc-4def-8123-456789abcdef")


def _compiled() -> Path:
    """The driver compiled against Kafka 4.4's broker jars (the share coordinator is not in the clients' peer)."""
    source = DRIVER.read_text()
    cp = classpath(KAFKA_44)
    out = peers_dir() / "java" / f"ShareStateRecordsDriver-{hashlib.sha256(source.encode()).hexdigest()[:16]}"
    if not (out / ".complete").is_file():
        out.mkdir(parents=True, exist_ok=True)
        javac = str(Path(find_java()).with_name("javac"))
        subprocess.run([javac, "-nowarn", "-cp", cp, "-d", str(out), str(DRIVER)], check=True, capture_output=True)
        (out / ".complete").write_text("ok\n")
    return out


def test_kafkas_share_state_records_are_kafkalogs():
    classes = _compiled()
    cp = f"{classes}:{classpath(KAFKA_44)}"
    proc = subprocess.run(
        [find_java(), "-cp", cp, "ShareStateRecordsDriver", "my-group", uuid_to_base64(TOPIC_ID), "4"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = [line.split(" ") for line in proc.stdout.splitlines()]
    kafka = {
        fields[0]: (fields[1], None if fields[2] == "null" else fields[2])
        for fields in lines
        if fields[0] != "partition"
    }
    assert set(kafka) == {name for name, *_ in GOLDEN}
    for name, record, _, _ in GOLDEN:
        key_hex, value_hex = kafka[name]
        key, value = encode_record(record)
        assert (key.hex(), None if value is None else value.hex()) == (key_hex, value_hex), name
        assert decode_record(bytes.fromhex(key_hex), None if value_hex is None else bytes.fromhex(value_hex)) == record
    partitions = [(fields[1], int(fields[2])) for fields in lines if fields[0] == "partition"]
    assert len(partitions) == 12
    for key, expected in partitions:
        assert share_state_partition_for(key, 50) == expected, key
