"""docs/protocol.md is the table generated from the declarations, and lists every API we promise."""

from __future__ import annotations

from pathlib import Path

from spark_kafkalog.protocol.coverage import render

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

PROMISED = (
    "ApiVersions Metadata Produce Fetch ListOffsets FindCoordinator JoinGroup SyncGroup Heartbeat LeaveGroup "
    "OffsetCommit OffsetFetch InitProducerId OffsetForLeaderEpoch CreateTopics DeleteTopics DescribeGroups "
    "ListGroups DeleteGroups DescribeConfigs CreatePartitions DeleteRecords SaslHandshake SaslAuthenticate"
).split()


def test_protocol_doc_is_up_to_date():
    assert DOC.read_text() == render(), "docs/protocol.md is stale: run `make docs`"


def test_protocol_doc_lists_every_promised_api():
    text = DOC.read_text()
    missing = [name for name in PROMISED if f"| {name} |" not in text]
    assert not missing, f"not declared: {missing}"
    for payload in ("ConsumerProtocolSubscription", "ConsumerProtocolAssignment"):
        assert f"| {payload} |" in text
