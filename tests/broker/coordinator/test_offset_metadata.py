"""Committed offset metadata, exactly, at the wire: every OffsetCommit version x every OffsetFetch version
(non-ASCII, empty, null, a NUL inside, the 4096-byte limit), through a restart (loaded back from
``__consumer_offsets``), and the C-string convention of confluent-kafka-python (known by its ApiVersions
software name), whose trailing NUL is removed on commit and added on fetch."""

from __future__ import annotations

import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

TOPIC = "orders"
VERSIONS = range(0, 10)  # OffsetCommit 0-9 and OffsetFetch 0-9 are served
METADATA = {
    "ascii": "m1",
    "non-ASCII": "é✓ métadonnées 日本語 🚀",
    "empty": "",
    "null": None,
    "a NUL inside": "before\x00after",
    "4096 bytes": "é" * 2048,  # offset.metadata.max.bytes, counted in UTF-8 bytes
}


def _start(log_dir, registry: str) -> EmbeddedBroker:
    b = EmbeddedBroker(
        0,
        zookeeper_connect=registry,
        log_dir=log_dir,
        offsets_topic_num_partitions=2,
        group_initial_rebalance_delay_ms=0,
    ).start()
    if TOPIC not in b.call(lambda: b.broker.metadata.topics):
        b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 2, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 2)), 10, "the topic's leaders")
    return b


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = _start(tmp_path_factory.mktemp("b0"), f"memory:metadata-{uuid.uuid4().hex[:8]}")
    yield b
    b.stop()


def _coordinated(broker, w, group: str) -> None:
    req = API_BY_KEY[ApiKey.FIND_COORDINATOR].Request(key=group, key_type=0)
    gc = broker.broker.group_coordinator
    wait_until(
        lambda: (
            w.call(ApiKey.FIND_COORDINATOR, 1, req).error_code == ErrorCode.NONE
            and broker.call(lambda: gc.coordinator_error(group)) == 0
        ),
        15,
        f"a loaded coordinator for {group}",
    )


def _introduce(w, name: str, version: str = "1.0") -> None:
    """ApiVersions v3 naming the client software of this connection (KIP-511)."""
    req = API_BY_KEY[ApiKey.API_VERSIONS].Request(client_software_name=name, client_software_version=version)
    assert w.call(ApiKey.API_VERSIONS, 3, req).error_code == ErrorCode.NONE


def _commit(w, group: str, version: int, metadata: dict[int, str | None]) -> dict[int, int]:
    R = API_BY_KEY[ApiKey.OFFSET_COMMIT].Request
    T = R.OffsetCommitRequestTopic
    parts = [
        T.OffsetCommitRequestPartition(partition_index=p, committed_offset=10 + p, committed_metadata=m)
        for p, m in metadata.items()
    ]
    body = R(group_id=group, generation_id_or_member_epoch=-1, member_id="", topics=[T(name=TOPIC, partitions=parts)])
    return {
        p.partition_index: p.error_code
        for t in w.call(ApiKey.OFFSET_COMMIT, version, body).topics
        for p in t.partitions
    }


def _fetch(w, group: str, version: int, partitions=(0, 1)) -> dict[int, tuple[int, str | None, int]]:
    """{partition: (offset, metadata, error code)} from OffsetFetch at ``version``."""
    R = API_BY_KEY[ApiKey.OFFSET_FETCH].Request
    if version >= 8:
        G = R.OffsetFetchRequestGroup
        body = R(
            groups=[
                G(group_id=group, topics=[G.OffsetFetchRequestTopics(name=TOPIC, partition_indexes=list(partitions))])
            ]
        )
        (answer,) = w.call(ApiKey.OFFSET_FETCH, version, body).groups
        assert answer.error_code == ErrorCode.NONE
        topics = answer.topics
    else:
        body = R(group_id=group, topics=[R.OffsetFetchRequestTopic(name=TOPIC, partition_indexes=list(partitions))])
        resp = w.call(ApiKey.OFFSET_FETCH, version, body)
        assert version < 2 or resp.error_code == ErrorCode.NONE
        topics = resp.topics
    return {p.partition_index: (p.committed_offset, p.metadata, p.error_code) for t in topics for p in t.partitions}


def _expected(commit_version: int, fetch_version: int, metadata: str | None) -> tuple[int, str, int]:
    """v0 is ZooKeeper's 0.8 storage (the offset only); v1+ is ``__consumer_offsets``; neither sees the other."""
    if commit_version == 0 and fetch_version == 0:
        return 10, "", ErrorCode.NONE
    if commit_version == 0:
        return -1, "", ErrorCode.NONE  # nothing committed in __consumer_offsets
    if fetch_version == 0:
        return -1, "", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # Kafka 0.8.2: no ZooKeeper node
    return 10, metadata or "", ErrorCode.NONE  # null metadata is stored as empty, as Kafka does


@pytest.mark.parametrize("kind", METADATA)
@pytest.mark.parametrize("commit_version", VERSIONS)
def test_metadata_committed_at_any_version_is_fetched_exactly_at_every_version(broker, commit_version, kind):
    metadata = METADATA[kind]
    group = f"md-{uuid.uuid4().hex[:8]}"
    with Wire(broker.bootstrap_servers) as w:
        _coordinated(broker, w, group)
        assert _commit(w, group, commit_version, {0: metadata}) == {0: ErrorCode.NONE}
        got = {v: _fetch(w, group, v, (0,))[0] for v in VERSIONS}
    assert got == {v: _expected(commit_version, v, metadata) for v in VERSIONS}


def test_metadata_beyond_the_limit_is_refused_at_every_version(broker):
    group = f"md-{uuid.uuid4().hex[:8]}"
    with Wire(broker.bootstrap_servers) as w:
        _coordinated(broker, w, group)
        for v in VERSIONS:
            assert _commit(w, group, v, {0: "é" * 2048 + "x"}) == {0: ErrorCode.OFFSET_METADATA_TOO_LARGE}, v


def test_a_c_string_client_commits_and_fetches_the_string_it_means(broker):
    """confluent-kafka-python sends ``strlen + 1`` bytes and reads up to the first NUL of an unterminated copy."""
    group = f"md-{uuid.uuid4().hex[:8]}"
    with Wire(broker.bootstrap_servers) as confluent, Wire(broker.bootstrap_servers) as other:
        _introduce(confluent, "confluent-kafka-python", "2.16.1-rdkafka-2.16.0")
        _introduce(other, "kafka-python", "3.0.12")
        _coordinated(broker, confluent, group)
        for v in range(1, 10):
            assert _commit(confluent, group, v, {0: "m1\x00", 1: "\x00"}) == {0: 0, 1: 0}
            assert _fetch(other, group, v) == {0: (10, "m1", 0), 1: (11, "", 0)}
            assert _fetch(confluent, group, v) == {0: (10, "m1\x00", 0), 1: (11, "\x00", 0)}
            assert _commit(other, group, v, {0: "é✓", 1: None}) == {0: 0, 1: 0}
            assert _fetch(confluent, group, v) == {0: (10, "é✓\x00", 0), 1: (11, "\x00", 0)}
            assert _fetch(other, group, v) == {0: (10, "é✓", 0), 1: (11, "", 0)}


def test_other_clients_keep_every_byte_of_their_metadata_nul_included(broker):
    group = f"md-{uuid.uuid4().hex[:8]}"
    with Wire(broker.bootstrap_servers) as w:
        _introduce(w, "librdkafka", "2.16.0")  # C and Go clients pass exact sizes: nothing is changed for them
        _coordinated(broker, w, group)
        assert _commit(w, group, 9, {0: "m1\x00", 1: "\x00x\x00"}) == {0: 0, 1: 0}
        assert _fetch(w, group, 9) == {0: (10, "m1\x00", 0), 1: (11, "\x00x\x00", 0)}


def test_committed_metadata_survives_a_restart_exactly(tmp_path):
    registry = f"memory:metadata-restart-{uuid.uuid4().hex[:8]}"
    values = [m for m in METADATA.values()]
    groups = {(v, i): f"restart-{v}-{i}-{uuid.uuid4().hex[:6]}" for v in range(1, 10) for i in range(len(values))}
    b = _start(tmp_path, registry)
    try:
        with Wire(b.bootstrap_servers) as w, Wire(b.bootstrap_servers) as confluent:
            _introduce(confluent, "confluent-kafka-python")
            for (v, i), group in groups.items():
                _coordinated(b, w, group)
                assert _commit(w, group, v, {0: values[i]}) == {0: 0}
            c_group = f"restart-c-{uuid.uuid4().hex[:6]}"
            _coordinated(b, confluent, c_group)
            assert _commit(confluent, c_group, 9, {0: "c1\x00", 1: "é\x00"}) == {0: 0, 1: 0}
    finally:
        b.stop()

    b = _start(tmp_path, registry)  # the coordinator loads every offset back from __consumer_offsets
    try:
        with Wire(b.bootstrap_servers) as w:
            for (v, i), group in groups.items():
                _coordinated(b, w, group)
                got = {fv: _fetch(w, group, fv, (0,))[0] for fv in range(1, 10)}
                assert got == dict.fromkeys(range(1, 10), (10, values[i] or "", 0)), (v, values[i])
            _coordinated(b, w, c_group)
            assert _fetch(w, c_group, 9) == {0: (10, "c1", 0), 1: (11, "é", 0)}
    finally:
        b.stop()
