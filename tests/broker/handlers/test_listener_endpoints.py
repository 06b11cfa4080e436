"""Named listeners end to end on in-process brokers: the registration carries the listener names and protocols;
Metadata, DescribeCluster and FindCoordinator answer with the endpoints of the listener a request came in on;
a leader without that listener is LISTENER_NOT_FOUND (Metadata v6+)."""

import uuid
from typing import Any

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.protocol import ApiKey as K
from tests.broker.wire import Wire

PLAIN_MAP = "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Broker 0 listens on CLIENT and INTERNAL; broker 1 only on INTERNAL (the inter-broker listener of both)."""
    registry = f"memory:listeners-{uuid.uuid4().hex[:8]}"
    common: dict[str, Any] = {"listener_security_protocol_map": PLAIN_MAP, "inter_broker_listener_name": "INTERNAL"}
    b0 = EmbeddedBroker(
        0,
        zookeeper_connect=registry,
        log_dir=tmp_path_factory.mktemp("b0"),
        listeners="CLIENT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        **common,
    ).start()
    b1 = EmbeddedBroker(
        1,
        zookeeper_connect=registry,
        log_dir=tmp_path_factory.mktemp("b1"),
        listeners="INTERNAL://127.0.0.1:0",
        **common,
    ).start()
    yield b0, b1
    b1.stop()
    b0.stop()


def address(b: EmbeddedBroker, listener: str) -> str:
    assert b.broker is not None
    return f"127.0.0.1:{b.broker.bound_ports[listener]}"


def metadata(addr: str, version: int, topics=None):
    Req = API_BY_KEY[K.METADATA].Request
    body = Req(topics=[Req.MetadataRequestTopic(name=t) for t in topics] if topics is not None else [])
    if version >= 4:
        body.allow_auto_topic_creation = False
    with Wire(addr) as w:
        return w.call(K.METADATA, version, body)


def wait_for_brokers(addr: str, expected: set[int]) -> None:
    import time

    deadline = time.monotonic() + 10
    while {b.node_id for b in metadata(addr, 9).brokers} != expected:
        assert time.monotonic() < deadline, f"{addr} never listed brokers {expected}"
        time.sleep(0.02)


def test_registration_carries_listener_names_and_protocols(cluster):
    b0, b1 = cluster
    wait_for_brokers(address(b0, "INTERNAL"), {0, 1})
    assert b0.broker is not None
    info0, info1 = b0.broker.metadata.brokers[0], b0.broker.metadata.brokers[1]
    assert info0.listener_names == ("CLIENT", "INTERNAL")
    assert info0.listener_security_protocol_map == {"CLIENT": "PLAINTEXT", "INTERNAL": "PLAINTEXT"}
    assert info0.listener_endpoint("CLIENT") == ("127.0.0.1", b0.broker.bound_ports["CLIENT"])
    assert info1.listener_names == ("INTERNAL",) and info1.listener_endpoint("CLIENT") is None


@pytest.mark.parametrize("listener", ["CLIENT", "INTERNAL"])
def test_metadata_answers_with_the_endpoints_of_the_listener_asked(cluster, listener):
    b0, b1 = cluster
    wait_for_brokers(address(b0, "INTERNAL"), {0, 1})
    brokers = {b.node_id: (b.host, b.port) for b in metadata(address(b0, listener), 9).brokers}
    expected = {0: ("127.0.0.1", b0.broker.bound_ports[listener])}
    if listener == "INTERNAL":
        expected[1] = ("127.0.0.1", b1.broker.bound_ports["INTERNAL"])
    assert brokers == expected  # broker 1 has no CLIENT listener: left out


def test_describe_cluster_leaves_out_brokers_without_the_listener(cluster):
    b0, _ = cluster
    wait_for_brokers(address(b0, "INTERNAL"), {0, 1})
    with Wire(address(b0, "CLIENT")) as w:
        resp = w.call(K.DESCRIBE_CLUSTER, 0, include_cluster_authorized_operations=False)
    assert [(b.broker_id, b.port) for b in resp.brokers] == [(0, b0.broker.bound_ports["CLIENT"])]


def test_a_leader_without_the_listener_is_listener_not_found_from_v6(cluster):
    b0, b1 = cluster
    wait_for_brokers(address(b0, "INTERNAL"), {0, 1})
    topic = f"t-{uuid.uuid4().hex[:8]}"
    R = API_BY_KEY[K.CREATE_TOPICS].Request
    body = R(
        topics=[
            R.CreatableTopic(
                name=topic,
                num_partitions=-1,
                replication_factor=-1,
                assignments=[
                    R.CreatableTopic.CreatableReplicaAssignment(partition_index=0, broker_ids=[1]),
                    R.CreatableTopic.CreatableReplicaAssignment(partition_index=1, broker_ids=[0]),
                ],
                configs=[],
            )
        ],
        timeout_ms=10000,
        validate_only=False,
    )
    with Wire(address(b0, "INTERNAL")) as w:
        assert w.call(K.CREATE_TOPICS, 5, body).topics[0].error_code == ErrorCode.NONE
    import time

    deadline = time.monotonic() + 10
    while True:
        (t,) = metadata(address(b0, "INTERNAL"), 9, [topic]).topics
        if [p.leader_id for p in sorted(t.partitions, key=lambda p: p.partition_index)] == [1, 0]:
            break
        assert time.monotonic() < deadline, "leaders never elected"
        time.sleep(0.02)
    for version, code in (
        (9, ErrorCode.LISTENER_NOT_FOUND),
        (6, ErrorCode.LISTENER_NOT_FOUND),
        (5, ErrorCode.LEADER_NOT_AVAILABLE),
    ):
        (t,) = metadata(address(b0, "CLIENT"), version, [topic]).topics
        parts = {p.partition_index: p for p in t.partitions}
        assert (parts[0].error_code, parts[0].leader_id) == (code, -1), version
        assert (parts[1].error_code, parts[1].leader_id) == (ErrorCode.NONE, 0), version


def find_coordinator(addr: str, group: str):
    with Wire(addr) as w:
        return w.call(K.FIND_COORDINATOR, 2, key=group, key_type=0)


def test_find_coordinator_answers_with_the_listener_asked(cluster):
    b0, b1 = cluster
    wait_for_brokers(address(b0, "INTERNAL"), {0, 1})
    import time

    deadline = time.monotonic() + 20
    by_node: dict[int, str] = {}  # a group coordinated by each broker, as the INTERNAL listener says
    i = 0
    while len(by_node) < 2:
        assert time.monotonic() < deadline, f"coordinators found only on {sorted(by_node)}"
        group = f"g-{i}"
        resp = find_coordinator(address(b0, "INTERNAL"), group)
        if resp.error_code == ErrorCode.NONE:
            assert resp.port == (b0 if resp.node_id == 0 else b1).broker.bound_ports["INTERNAL"]
            by_node.setdefault(resp.node_id, group)
            i += 1
        else:
            time.sleep(0.05)  # __consumer_offsets leaders still being elected
    on_client = find_coordinator(address(b0, "CLIENT"), by_node[0])
    assert (on_client.error_code, on_client.node_id, on_client.port) == (
        ErrorCode.NONE,
        0,
        b0.broker.bound_ports["CLIENT"],
    )
    missing = find_coordinator(address(b0, "CLIENT"), by_node[1])
    assert (missing.error_code, missing.node_id) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)
    assert "no listener CLIENT" in missing.error_message
