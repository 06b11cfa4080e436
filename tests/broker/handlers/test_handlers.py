"""Request handlers against an in-process broker on port 0, at exact API versions (raw protocol peer)."""

from __future__ import annotations

import struct
import threading
import time

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records import (
    Compression,
    LegacyMessageSetBuilder,
    iter_batches,
    iter_legacy_records,
)

from ...waiting import wait_until
from ..requests import batch, create, fetch, fetch_body, produce, produce_body, unique, values_in
from ..wire import Wire

K = ApiKey


@pytest.fixture()
def wire(broker):
    with Wire(broker.bootstrap_servers) as w:
        yield w


# -- ApiVersions ---------------------------------------------------------------------------------
@pytest.mark.parametrize("version", range(6))
def test_api_versions_lists_served_ranges(wire, broker, version):
    resp = wire.call(K.API_VERSIONS, version, client_software_name="t", client_software_version="1")
    assert resp.error_code == 0
    got = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert got[K.PRODUCE] == (0, 13) and got[K.FETCH] == (0, 18) and got[K.METADATA] == (0, 13)
    assert got == {k: (lo, hi) for k, lo, hi in broker.broker.handlers.version_ranges()}


def test_api_versions_too_new_gets_v0_error_body_and_connection_stays(wire):
    # size, api key, version 9, correlation id 77, null client id (a v9 body cannot be encoded by us)
    wire.send_raw(struct.pack(">ihhih", 10, K.API_VERSIONS, 9, 77, -1))
    size = struct.unpack(">i", wire._read(4))[0]
    payload = wire._read(size)
    cid, err = struct.unpack_from(">ih", payload)
    assert (cid, err) == (77, ErrorCode.UNSUPPORTED_VERSION)
    assert wire.call(K.METADATA, 1, topics=[]).brokers  # still serving this connection


# -- Metadata and topics -------------------------------------------------------------------------
def test_metadata_all_none_and_auto_create(wire, broker):
    name = unique()
    resp = wire.call(
        K.METADATA,
        12,
        topics=[API_BY_KEY[K.METADATA].Request.MetadataRequestTopic(name=name)],
        allow_auto_topic_creation=False,
    )
    assert resp.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    resp = wire.call(
        K.METADATA,
        12,
        topics=[API_BY_KEY[K.METADATA].Request.MetadataRequestTopic(name=name)],
        allow_auto_topic_creation=True,
    )
    t = resp.topics[0]
    assert t.error_code == 0 and t.name == name and t.topic_id.int != 0
    assert [(p.partition_index, p.leader_id) for p in t.partitions] == [(0, 0)]
    assert resp.cluster_id and resp.controller_id == 0
    assert [(b.node_id, b.port) for b in resp.brokers] == [(0, int(broker.bootstrap_servers.rsplit(":", 1)[1]))]
    assert name in [t.name for t in wire.call(K.METADATA, 1, topics=None).topics]
    assert name in [t.name for t in wire.call(K.METADATA, 0, topics=[]).topics]  # v0: empty = all
    assert wire.call(K.METADATA, 1, topics=[]).topics == []  # v1+: empty = none


def test_metadata_rejects_invalid_names(wire):
    R = API_BY_KEY[K.METADATA].Request
    resp = wire.call(K.METADATA, 9, topics=[R.MetadataRequestTopic(name="bad/name")], allow_auto_topic_creation=True)
    assert resp.topics[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION


def test_create_topics_errors_and_configs(wire):
    name = unique()
    res = create(wire, name, 3, configs={"cleanup.policy": "compact"})
    assert res.error_code == 0 and res.num_partitions == 3 and res.replication_factor == 1
    assert {c.name: c.value for c in res.configs}["cleanup.policy"] == "compact"
    assert create(wire, name).error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    assert create(wire, unique(), rf=2).error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    bad = create(wire, unique(), configs={"retention.ms": "soon"})
    assert bad.error_code == ErrorCode.INVALID_CONFIG and "retention.ms" in bad.error_message
    probe = unique()
    assert create(wire, probe, validate_only=True).error_code == 0
    R = API_BY_KEY[K.METADATA].Request
    meta = wire.call(K.METADATA, 9, topics=[R.MetadataRequestTopic(name=probe)], allow_auto_topic_creation=False)
    assert meta.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_create_partitions_and_delete_topic(wire):
    name = unique()
    create(wire, name, 1)
    R = API_BY_KEY[K.CREATE_PARTITIONS].Request
    res = wire.call(
        K.CREATE_PARTITIONS,
        3,
        topics=[R.CreatePartitionsTopic(name=name, count=3, assignments=None)],
        timeout_ms=10000,
        validate_only=False,
    ).results[0]
    assert res.error_code == 0
    res = wire.call(
        K.CREATE_PARTITIONS,
        3,
        topics=[R.CreatePartitionsTopic(name=name, count=2, assignments=None)],
        timeout_ms=10000,
        validate_only=False,
    ).results[0]
    assert res.error_code == ErrorCode.INVALID_PARTITIONS
    M = API_BY_KEY[K.METADATA].Request
    meta = wire.call(K.METADATA, 9, topics=[M.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)
    assert len(meta.topics[0].partitions) == 3
    assert produce(wire, name, batch([b"x"]), partition=2).error_code == 0
    resp = wire.call(K.DELETE_TOPICS, 5, topic_names=[name], timeout_ms=10000)
    assert resp.responses[0].error_code == 0
    meta = wire.call(K.METADATA, 9, topics=[M.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)
    assert meta.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    resp = wire.call(K.DELETE_TOPICS, 5, topic_names=[name], timeout_ms=1000)
    assert resp.responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


# -- Produce and Fetch ---------------------------------------------------------------------------
def test_produce_fetch_round_trip_each_codec(wire):
    name = unique()
    create(wire, name)
    offset = 0
    for codec in Compression:
        values = [f"{codec.name}-{i}".encode() for i in range(50)]
        res = produce(wire, name, batch(values, codec=codec))
        assert (res.error_code, res.base_offset) == (0, offset)
        offset += 50
    part = fetch(wire, name, 0)
    assert part.error_code == 0 and part.high_watermark == offset
    got = values_in(part.records)
    assert len(got) == offset and got[:2] == [b"NONE-0", b"NONE-1"] and got[-1] == b"ZSTD-49"
    assert part.aborted_transactions is None and part.log_start_offset == 0


def test_produce_errors(wire):
    name = unique()
    create(wire, name)
    assert produce(wire, unique("missing"), batch([b"x"])).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert produce(wire, name, batch([b"x"]), partition=5).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    corrupt = bytearray(batch([b"hello"]))
    corrupt[-1] ^= 0xFF
    assert produce(wire, name, bytes(corrupt)).error_code == ErrorCode.CORRUPT_MESSAGE
    res = produce(wire, name, batch([b"x" * 2_000_000]))
    assert res.error_code == ErrorCode.MESSAGE_TOO_LARGE and res.error_message
    assert produce(wire, name, batch([b"x"]), acks=2).error_code == ErrorCode.INVALID_REQUIRED_ACKS
    legacy = LegacyMessageSetBuilder(1)
    legacy.append(0, None, b"old")
    assert produce(wire, name, legacy.build(), version=3).error_code == ErrorCode.INVALID_RECORD
    assert fetch(wire, name, 0).high_watermark == 0  # nothing of the rejected requests was stored


def test_acks_zero_sends_no_response(wire):
    name = unique()
    create(wire, name)
    wire.send(K.PRODUCE, 9, produce_body(name, 0, batch([b"a"]), acks=0))
    resp = wire.call(K.API_VERSIONS, 3, client_software_name="t", client_software_version="1")
    assert resp.error_code == 0  # the next response on the wire is the ApiVersions one
    assert values_in(fetch(wire, name, 0).records) == [b"a"]


def test_failed_acks_zero_produce_closes_the_connection(broker, wire):
    server = broker.broker.socket_server
    assert wire.call(K.API_VERSIONS, 3, client_software_name="t", client_software_version="1").error_code == 0
    newest = broker.call(lambda: max(server._connections, default=0))  # the fixture's connection included

    def opened_here() -> int:  # connections accepted after ``newest``: only this test's
        return broker.call(lambda: sum(1 for cid in server._connections if cid > newest))

    with Wire(broker.bootstrap_servers) as w:
        w.send(K.PRODUCE, 9, produce_body(unique("missing"), 0, batch([b"a"]), acks=0))
        assert w.closed_by_peer()
        # the broker side is gone too, not left waiting on a read
        wait_until(lambda: opened_here() == 0, 5, "the broker to close its side of the connection")
    assert wire.call(K.METADATA, 1, topics=[]).brokers  # other connections are unaffected


@pytest.mark.parametrize("produce_version,magic", [(0, 0), (2, 1)])
def test_old_message_sets_are_converted_and_down_converted(wire, produce_version, magic):
    name = unique()
    create(wire, name)
    b = LegacyMessageSetBuilder(magic, Compression.GZIP)
    for i in range(5):
        b.append(1_600_000_000_000 + i, f"k{i}".encode(), f"v{i}".encode())
    assert produce(wire, name, b.build(), version=produce_version).error_code == 0
    part = fetch(wire, name, 0, version=4)
    (v2,) = list(iter_batches(bytes(part.records)))
    assert v2.magic == 2 and [r.value for r in v2.records()] == [f"v{i}".encode() for i in range(5)]
    fetch_version = 0 if magic == 0 else 2
    old = fetch(wire, name, 0, version=fetch_version)
    recs = list(iter_legacy_records(bytes(old.records)))
    assert [(r.offset, r.key, r.value) for r in recs] == [(i, f"k{i}".encode(), f"v{i}".encode()) for i in range(5)]


def test_fetch_out_of_range_and_empty(wire):
    name = unique()
    create(wire, name)
    produce(wire, name, batch([b"a", b"b"]))
    assert fetch(wire, name, 3).error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    at_end = fetch(wire, name, 2)
    assert at_end.error_code == 0
    assert at_end.records is not None and len(at_end.records) == 0  # empty, never null: kafka-python needs bytes


def test_fetch_long_poll_wakes_on_produce_and_keeps_order(broker, wire):
    name = unique()
    create(wire, name)

    def later():
        time.sleep(0.3)
        with Wire(broker.bootstrap_servers) as w2:
            produce(w2, name, batch([b"late"]))

    t = threading.Thread(target=later)
    started = time.monotonic()
    t.start()
    cid1 = wire.send(K.FETCH, 12, fetch_body(name, 0, 0, max_wait_ms=5000, min_bytes=1))
    cid2 = wire.send(K.API_VERSIONS, 3, client_software_name="t", client_software_version="1")
    got1, resp = wire.receive(K.FETCH, 12)
    got2, _ = wire.receive(K.API_VERSIONS, 3)
    t.join()
    assert (got1, got2) == (cid1, cid2)  # in request order, behind the long poll
    assert values_in(resp.responses[0].partitions[0].records) == [b"late"]
    assert 0.25 < time.monotonic() - started < 4.5


def test_fetch_long_poll_times_out_empty(wire):
    name = unique()
    create(wire, name)
    started = time.monotonic()
    part = fetch(wire, name, 0, max_wait_ms=300)
    assert part.error_code == 0 and not part.records and time.monotonic() - started >= 0.28


def test_fetch_first_batch_exceeds_limits(wire):
    name = unique()
    create(wire, name)
    produce(wire, name, batch([b"x" * 5000]))
    produce(wire, name, batch([b"y" * 5000]))
    part = fetch(wire, name, 0, max_bytes=100)
    assert values_in(part.records) == [b"x" * 5000]


# -- ListOffsets, DeleteRecords, OffsetForLeaderEpoch --------------------------------------------
def test_list_offsets(wire):
    name = unique()
    create(wire, name)
    produce(wire, name, batch([b"a", b"b", b"c"], ts=1000))
    produce(wire, name, batch([b"d"], ts=500))
    R = API_BY_KEY[K.LIST_OFFSETS].Request

    def ask(ts, version=7):
        body = R(
            replica_id=-1,
            isolation_level=0,
            topics=[
                R.ListOffsetsTopic(
                    name=name,
                    partitions=[
                        R.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=ts, max_num_offsets=10)
                    ],
                )
            ],
        )
        return wire.call(K.LIST_OFFSETS, version, body).topics[0].partitions[0]

    assert ask(-2).offset == 0 and ask(-1).offset == 4
    assert (ask(1001).offset, ask(1001).timestamp) == (1, 1001)
    assert ask(400).offset == 0
    assert (ask(5000).offset, ask(5000).timestamp) == (-1, -1)
    assert (ask(-3).offset, ask(-3).timestamp) == (2, 1002)
    assert ask(-1, version=0).old_style_offsets[0] == 4


def test_delete_records(wire):
    name = unique()
    create(wire, name)
    produce(wire, name, batch([b"a", b"b", b"c"]))
    R = API_BY_KEY[K.DELETE_RECORDS].Request
    body = R(
        topics=[
            R.DeleteRecordsTopic(
                name=name, partitions=[R.DeleteRecordsTopic.DeleteRecordsPartition(partition_index=0, offset=2)]
            )
        ],
        timeout_ms=5000,
    )
    res = wire.call(K.DELETE_RECORDS, 2, body).topics[0].partitions[0]
    assert (res.error_code, res.low_watermark) == (0, 2)
    assert fetch(wire, name, 0).error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    body.topics[0].partitions[0].offset = 10
    assert wire.call(K.DELETE_RECORDS, 2, body).topics[0].partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_offset_for_leader_epoch(wire):
    name = unique()
    create(wire, name)
    produce(wire, name, batch([b"a", b"b"]))
    R = API_BY_KEY[K.OFFSET_FOR_LEADER_EPOCH].Request
    body = R(
        replica_id=-1,
        topics=[
            R.OffsetForLeaderTopic(
                topic=name,
                partitions=[
                    R.OffsetForLeaderTopic.OffsetForLeaderPartition(
                        partition=0, current_leader_epoch=-1, leader_epoch=0
                    )
                ],
            )
        ],
    )
    res = wire.call(K.OFFSET_FOR_LEADER_EPOCH, 4, body).topics[0].partitions[0]
    assert (res.error_code, res.leader_epoch, res.end_offset) == (0, 0, 2)
    body.topics[0].partitions[0].current_leader_epoch = 5
    res = wire.call(K.OFFSET_FOR_LEADER_EPOCH, 4, body).topics[0].partitions[0]
    assert res.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH


# -- idempotent producer -------------------------------------------------------------------------
def test_idempotent_produce_deduplicates_and_detects_gaps(wire):
    name = unique()
    create(wire, name)
    init = wire.call(K.INIT_PRODUCER_ID, 4, transactional_id=None, transaction_timeout_ms=60000)
    assert init.error_code == 0 and init.producer_id >= 0 and init.producer_epoch == 0
    pid = init.producer_id
    first = batch([b"a", b"b"], pid=pid, epoch=0, seq=0)
    r1 = produce(wire, name, first, acks=-1)
    r2 = produce(wire, name, batch([b"a", b"b"], pid=pid, epoch=0, seq=0), acks=-1)  # a retry
    assert (r1.error_code, r1.base_offset) == (0, 0) and (r2.error_code, r2.base_offset) == (0, 0)
    gap = produce(wire, name, batch([b"z"], pid=pid, epoch=0, seq=5), acks=-1)
    assert gap.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(wire, name, batch([b"c"], pid=pid, epoch=0, seq=2), acks=-1).base_offset == 2
    assert values_in(fetch(wire, name, 0).records) == [b"a", b"b", b"c"]
    bumped = wire.call(
        K.INIT_PRODUCER_ID, 4, transactional_id=None, transaction_timeout_ms=60000, producer_id=pid, producer_epoch=0
    )
    assert (bumped.producer_id, bumped.producer_epoch) == (pid, 1)
    other = wire.call(K.INIT_PRODUCER_ID, 1, transactional_id=None, transaction_timeout_ms=60000)
    assert other.producer_id != pid


# -- DescribeConfigs -----------------------------------------------------------------------------
def test_describe_configs_topic_and_broker(wire):
    name = unique()
    create(wire, name, configs={"retention.ms": "1000"})
    R = API_BY_KEY[K.DESCRIBE_CONFIGS].Request
    body = R(
        resources=[
            R.DescribeConfigsResource(resource_type=2, resource_name=name, configuration_keys=None),
            R.DescribeConfigsResource(resource_type=4, resource_name="0", configuration_keys=["num.partitions"]),
        ],
        include_synonyms=True,
        include_documentation=True,
    )
    topic, brk = wire.call(K.DESCRIBE_CONFIGS, 4, body).results
    assert topic.error_code == 0 and brk.error_code == 0
    entries = {c.name: c for c in topic.configs}
    assert entries["retention.ms"].value == "1000" and entries["retention.ms"].config_source == 1
    assert entries["segment.bytes"].config_source == 5 and entries["segment.bytes"].value == str(1 << 30)
    assert entries["cleanup.policy"].value == "delete"
    assert [c.name for c in brk.configs] == ["num.partitions"] and brk.configs[0].value == "1"
    body = R(
        resources=[R.DescribeConfigsResource(resource_type=2, resource_name="nope-" + name, configuration_keys=None)]
    )
    assert wire.call(K.DESCRIBE_CONFIGS, 0, body).results[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


# -- misbehaving clients -------------------------------------------------------------------------
def test_garbage_closes_only_that_connection(broker, wire):
    with Wire(broker.bootstrap_servers) as bad:
        bad.send_raw(struct.pack(">i", 12) + b"\xff" * 12)
        assert bad.closed_by_peer()
    with Wire(broker.bootstrap_servers) as big:
        big.send_raw(struct.pack(">i", 200 * 1024 * 1024))
        assert big.closed_by_peer()
    with Wire(broker.bootstrap_servers) as neg:
        neg.send_raw(struct.pack(">i", -5))
        assert neg.closed_by_peer()
    assert wire.call(K.METADATA, 1, topics=[]).brokers  # everyone else keeps being served


# -- two brokers ---------------------------------------------------------------------------------
def test_non_leader_answers_not_leader(two_brokers):
    a, b = two_brokers
    with Wire(a.bootstrap_servers) as wa, Wire(b.bootstrap_servers) as wb:
        name = unique()
        assert create(wa, name, 4).error_code == 0
        meta = wa.call(
            K.METADATA,
            9,
            topics=[API_BY_KEY[K.METADATA].Request.MetadataRequestTopic(name=name)],
            allow_auto_topic_creation=False,
        )
        assert len(meta.brokers) == 2
        leaders = {p.partition_index: p.leader_id for p in meta.topics[0].partitions}
        assert set(leaders.values()) == {0, 1}
        for p, leader in leaders.items():
            right, wrong = (wa, wb) if leader == 0 else (wb, wa)
            assert produce(right, name, batch([b"v"]), partition=p).error_code == 0
            assert produce(wrong, name, batch([b"v"]), partition=p).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
            assert fetch(wrong, name, 0, partition=p).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
