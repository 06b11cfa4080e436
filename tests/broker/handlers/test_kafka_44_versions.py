"""The versions Kafka 4.4's clients send past Kafka 4.0's, served with Kafka 4.4's semantics for what they add:
Fetch v18 (a replica's tagged high watermark, accepted), Metadata v13 (top-level error code), DescribeGroups v6
(an unknown group is GROUP_ID_NOT_FOUND with a message), DeleteGroups v3 (a per-group error message, null as Kafka 4.4 answers),
DescribeCluster v2 (no fenced brokers), DescribeLogDirs v5 (not cordoned), InitProducerId v5."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.waiting import wait_until

from ..requests import batch, create, fetch_body, produce, unique, values_in
from ..wire import Wire

_LOADING = (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR)


def Req(key):
    return API_BY_KEY[key].Request


@pytest.fixture(scope="module")
def topic(broker):
    with Wire(broker.bootstrap_servers) as w:
        name = unique()
        create(w, name)
        produce(w, name, batch([b"a", b"b"]))
    return name


def find_coordinator(w, group: str) -> None:
    """Ask for ``group``'s coordinator until one is known (the first ask creates ``__consumer_offsets``)."""
    R = Req(ApiKey.FIND_COORDINATOR)
    wait_until(
        lambda: w.call(ApiKey.FIND_COORDINATOR, 1, R(key=group, key_type=0)).error_code == ErrorCode.NONE,
        15,
        f"a coordinator for {group}",
    )


def metadata(w, name, version):
    R = Req(ApiKey.METADATA)
    body = R(topics=[R.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)
    return w.call(ApiKey.METADATA, version, body)


@pytest.mark.parametrize("high_watermark", [2**63 - 1, -1, 0])
def test_fetch_v18_by_topic_id_reads_whatever_high_watermark_the_request_carries(broker, topic, high_watermark):
    with Wire(broker.bootstrap_servers) as w:
        tid = metadata(w, topic, 12).topics[0].topic_id
        body = fetch_body(topic, 0, 0)
        body.topics[0].topic_id = tid
        body.topics[0].partitions[0].high_watermark = high_watermark
        resp = w.call(ApiKey.FETCH, 18, body)
    p = resp.responses[0].partitions[0]
    assert (resp.responses[0].topic_id, p.error_code, p.high_watermark) == (tid, ErrorCode.NONE, 2)
    assert values_in(p.records) == [b"a", b"b"]


def test_metadata_v13_answers_topics_and_a_top_level_error_code_of_none(broker, topic):
    with Wire(broker.bootstrap_servers) as w:
        resp = metadata(w, topic, 13)
        missing = metadata(w, unique("missing"), 13)
    assert resp.error_code == ErrorCode.NONE
    assert [(t.name, t.error_code, len(t.partitions)) for t in resp.topics] == [(topic, ErrorCode.NONE, 1)]
    assert resp.topics[0].topic_id != uuid.UUID(int=0)
    assert (missing.error_code, missing.topics[0].error_code) == (ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


@pytest.mark.parametrize(
    "version, expected",
    [
        (5, (ErrorCode.NONE, None, "Dead")),
        (6, (ErrorCode.GROUP_ID_NOT_FOUND, "Group {g} not found.", "Dead")),
    ],
)
def test_describe_groups_of_an_unknown_group_is_group_id_not_found_from_v6(broker, version, expected):
    group = unique("g")
    R = Req(ApiKey.DESCRIBE_GROUPS)
    got = []
    with Wire(broker.bootstrap_servers) as w:
        find_coordinator(w, group)
        wait_until(
            lambda: (
                got.append(w.call(ApiKey.DESCRIBE_GROUPS, version, R(groups=[group])).groups[0])
                or got[-1].error_code not in _LOADING
            ),
            15,
            "the group coordinator loaded",
        )
    d = got[-1]
    code, message, state = expected
    message = message.format(g=group) if message else None
    assert (d.group_id, d.error_code, d.error_message, d.group_state) == (group, code, message, state)


def test_delete_groups_v3_answers_each_group_with_a_null_message_as_kafka_44(broker, topic):
    gone, kept = unique("gone"), unique("kept")
    C = Req(ApiKey.OFFSET_COMMIT)
    commit = C(
        group_id=kept,
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            C.OffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    C.OffsetCommitRequestTopic.OffsetCommitRequestPartition(partition_index=0, committed_offset=1)
                ],
            )
        ],
    )
    with Wire(broker.bootstrap_servers) as w:
        find_coordinator(w, kept)
        wait_until(
            lambda: w.call(ApiKey.OFFSET_COMMIT, 8, commit).topics[0].partitions[0].error_code == ErrorCode.NONE,
            15,
            "an offset committed",
        )
        # gone's __consumer_offsets partition, created with kept's, may still be getting its leader or loading:
        # a client retries NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS, and so does the test
        retriable = {ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
        wait_until(
            lambda: (
                w.call(ApiKey.DELETE_GROUPS, 3, Req(ApiKey.DELETE_GROUPS)(groups_names=[gone])).results[0].error_code
                not in retriable
            ),
            15,
            f"{gone}'s coordinator loaded",
        )
        resp = w.call(ApiKey.DELETE_GROUPS, 3, Req(ApiKey.DELETE_GROUPS)(groups_names=[gone, kept]))
    got = {r.group_id: (r.error_code, r.error_message) for r in resp.results}
    assert got == {gone: (ErrorCode.GROUP_ID_NOT_FOUND, None), kept: (ErrorCode.NONE, None)}


def test_describe_cluster_v2_lists_the_live_brokers_unfenced_with_or_without_fenced_ones(broker, topic):
    R = Req(ApiKey.DESCRIBE_CLUSTER)
    with Wire(broker.bootstrap_servers) as w:
        live = [b.node_id for b in metadata(w, topic, 12).brokers]
        answers = [
            w.call(
                ApiKey.DESCRIBE_CLUSTER,
                2,
                R(include_cluster_authorized_operations=False, endpoint_type=1, include_fenced_brokers=f),
            )
            for f in (False, True)
        ]
    for resp in answers:
        assert resp.error_code == ErrorCode.NONE
        assert [(b.broker_id, b.is_fenced) for b in resp.brokers] == [(b, False) for b in live]


def test_describe_log_dirs_v5_says_no_dir_is_cordoned(broker, topic):
    R = Req(ApiKey.DESCRIBE_LOG_DIRS)
    with Wire(broker.bootstrap_servers) as w:
        resp = w.call(ApiKey.DESCRIBE_LOG_DIRS, 5, R(topics=[R.DescribableLogDirTopic(topic=topic, partitions=[0])]))
    assert resp.error_code == ErrorCode.NONE
    assert [(d.is_cordoned, [t.name for t in d.topics]) for d in resp.results if d.topics] == [(False, [topic])]
    assert all(d.usable_bytes > 0 for d in resp.results)


def test_init_producer_id_v5_gives_an_idempotent_producer_an_id_and_bumps_its_epoch(broker):
    R = Req(ApiKey.INIT_PRODUCER_ID)
    with Wire(broker.bootstrap_servers) as w:
        first = w.call(ApiKey.INIT_PRODUCER_ID, 5, R(transactional_id=None, transaction_timeout_ms=60000))
        bumped = w.call(
            ApiKey.INIT_PRODUCER_ID,
            5,
            R(transactional_id=None, transaction_timeout_ms=60000, producer_id=first.producer_id, producer_epoch=0),
        )
    assert (first.error_code, first.producer_epoch) == (ErrorCode.NONE, 0) and first.producer_id >= 0
    assert (bumped.error_code, bumped.producer_id, bumped.producer_epoch) == (ErrorCode.NONE, first.producer_id, 1)


def produce_v13(w, topic_id, values):
    R = Req(ApiKey.PRODUCE)
    body = R(
        transactional_id=None,
        acks=1,
        timeout_ms=5000,
        topic_data=[
            R.TopicProduceData(
                topic_id=topic_id,
                partition_data=[R.TopicProduceData.PartitionProduceData(index=0, records=batch(values))],
            )
        ],
    )
    return w.call(ApiKey.PRODUCE, 13, body).responses[0]


def test_produce_v13_appends_to_the_topic_its_id_names_and_answers_with_the_id(broker):
    name = unique()
    with Wire(broker.bootstrap_servers) as w:
        create(w, name)
        tid = metadata(w, name, 12).topics[0].topic_id
        first, second = produce_v13(w, tid, [b"x", b"y"]), produce_v13(w, tid, [b"z"])
        body = fetch_body(name, 0, 0)
        read = w.call(ApiKey.FETCH, 12, body).responses[0].partitions[0]
    assert [(r.topic_id, r.partition_responses[0].error_code) for r in (first, second)] == [(tid, 0), (tid, 0)]
    assert [r.partition_responses[0].base_offset for r in (first, second)] == [0, 2]
    assert values_in(read.records) == [b"x", b"y", b"z"]


@pytest.mark.parametrize("topic_id", [uuid.uuid4(), uuid.UUID(int=0)])
def test_produce_v13_to_an_unknown_topic_id_is_unknown_topic_id(broker, topic_id):
    with Wire(broker.bootstrap_servers) as w:
        resp = produce_v13(w, topic_id, [b"x"])
    p = resp.partition_responses[0]
    assert (resp.topic_id, p.index, p.error_code, p.base_offset) == (topic_id, 0, ErrorCode.UNKNOWN_TOPIC_ID, -1)


def commit_v10(w, group, topic_ids, offset=5):
    R = Req(ApiKey.OFFSET_COMMIT)
    T = R.OffsetCommitRequestTopic
    body = R(
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            T(topic_id=tid, partitions=[T.OffsetCommitRequestPartition(partition_index=0, committed_offset=offset)])
            for tid in topic_ids
        ],
    )
    return w.call(ApiKey.OFFSET_COMMIT, 10, body)


def fetch_offsets_v10(w, group, topic_ids):
    R = Req(ApiKey.OFFSET_FETCH)
    G = R.OffsetFetchRequestGroup
    topics = (
        None
        if topic_ids is None
        else [G.OffsetFetchRequestTopics(topic_id=t, partition_indexes=[0]) for t in topic_ids]
    )
    resp = w.call(ApiKey.OFFSET_FETCH, 10, R(groups=[G(group_id=group, topics=topics)]))
    (g,) = resp.groups
    return g.error_code, [
        (t.topic_id, [(p.partition_index, p.committed_offset, p.error_code) for p in t.partitions]) for t in g.topics
    ]


def test_offset_commit_and_fetch_v10_name_topics_by_id_and_refuse_unknown_ids(broker, topic):
    group, stranger = unique("g10"), uuid.uuid4()
    with Wire(broker.bootstrap_servers) as w:
        find_coordinator(w, group)
        tid = metadata(w, topic, 12).topics[0].topic_id
        committed = commit_v10(w, group, [stranger, tid])
        by_id = fetch_offsets_v10(w, group, [tid, stranger])
        every = fetch_offsets_v10(w, group, None)
        v9 = w.call(
            ApiKey.OFFSET_FETCH,
            8,
            Req(ApiKey.OFFSET_FETCH)(
                groups=[Req(ApiKey.OFFSET_FETCH).OffsetFetchRequestGroup(group_id=group, topics=None)]
            ),
        )
    assert [(t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions]) for t in committed.topics] == [
        (stranger, [(0, ErrorCode.UNKNOWN_TOPIC_ID)]),
        (tid, [(0, ErrorCode.NONE)]),
    ]
    assert by_id == (ErrorCode.NONE, [(tid, [(0, 5, 0)]), (stranger, [(0, -1, ErrorCode.UNKNOWN_TOPIC_ID)])])
    assert every == (ErrorCode.NONE, [(tid, [(0, 5, 0)])])
    assert [(t.name, [p.committed_offset for p in t.partitions]) for t in v9.groups[0].topics] == [(topic, [5])]


def transactional_producer(w, transactional_id: str) -> tuple[int, int]:
    """(producer id, epoch) of a transactional producer InitProducerId registered with its coordinator."""
    F, Init = Req(ApiKey.FIND_COORDINATOR), Req(ApiKey.INIT_PRODUCER_ID)
    wait_until(
        lambda: w.call(ApiKey.FIND_COORDINATOR, 1, F(key=transactional_id, key_type=1)).error_code == ErrorCode.NONE,
        15,
        "a transaction coordinator",
    )
    got = []
    wait_until(
        lambda: (
            got.append(
                w.call(
                    ApiKey.INIT_PRODUCER_ID, 5, Init(transactional_id=transactional_id, transaction_timeout_ms=60000)
                )
            )
            or got[-1].error_code == ErrorCode.NONE
        ),
        15,
        "a producer id",
    )
    return got[-1].producer_id, got[-1].producer_epoch


def txn_offset_commit(w, version, group, *, generation=-1, topic=None, topic_id=None):
    R = Req(ApiKey.TXN_OFFSET_COMMIT)
    T = R.TxnOffsetCommitRequestTopic
    part = T.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=1)
    ident = {"topic_id": topic_id} if version >= 6 else {"name": topic}
    pid, epoch = transactional_producer(w, "tx-" + group)
    body = R(
        transactional_id="tx-" + group,
        group_id=group,
        producer_id=pid,
        producer_epoch=epoch,
        generation_id=generation,
        topics=[T(**ident, partitions=[part])],
    )
    return w.call(ApiKey.TXN_OFFSET_COMMIT, version, body).topics[0]


@pytest.mark.parametrize(
    "version, generation, expected",
    [
        (6, 3, ErrorCode.GROUP_ID_NOT_FOUND),  # KIP-1319: a generation for a group that does not exist
        (5, 3, ErrorCode.ILLEGAL_GENERATION),  # what older versions are answered instead
    ],
)
def test_txn_offset_commit_of_a_generation_of_a_missing_group_by_version(broker, topic, version, generation, expected):
    group = unique("txg")
    with Wire(broker.bootstrap_servers) as w:
        find_coordinator(w, group)
        tid = metadata(w, topic, 12).topics[0].topic_id
        got = txn_offset_commit(w, version, group, generation=generation, topic=topic, topic_id=tid)
    assert got.partitions[0].error_code == expected
    if version >= 6:
        assert got.topic_id == tid


def test_txn_offset_commit_v6_to_an_unknown_topic_id_is_unknown_topic_id(broker):
    group, stranger = unique("txu"), uuid.uuid4()
    with Wire(broker.bootstrap_servers) as w:
        find_coordinator(w, group)
        got = txn_offset_commit(w, 6, group, topic_id=stranger)
    assert (got.topic_id, got.partitions[0].error_code) == (stranger, ErrorCode.UNKNOWN_TOPIC_ID)


def list_transactions(w, version, pattern=None):
    """(error, listed ids) once no ``__transaction_state`` partition is loading (COORDINATOR_LOAD_IN_PROGRESS)."""
    R = Req(ApiKey.LIST_TRANSACTIONS)
    body = R(state_filters=[], producer_id_filters=[], transactional_id_pattern=pattern)
    got = []
    wait_until(
        lambda: (
            got.append(w.call(ApiKey.LIST_TRANSACTIONS, version, body))
            or got[-1].error_code != ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        ),
        15,
        "the transaction coordinator loaded",
    )
    return got[-1].error_code, sorted(t.transactional_id for t in got[-1].transaction_states)


def test_list_transactions_v2_lists_the_ids_its_pattern_matches_whole(broker):
    prefix = unique("lt")
    with Wire(broker.bootstrap_servers) as w:
        for suffix in ("a", "b"):
            transactional_producer(w, f"{prefix}-{suffix}")
        both = [f"{prefix}-a", f"{prefix}-b"]
        wait_until(lambda: [t for t in list_transactions(w, 2)[1] if t.startswith(prefix)] == both, 15, "both listed")
        assert list_transactions(w, 2, f"{prefix}-a") == (ErrorCode.NONE, [f"{prefix}-a"])
        assert list_transactions(w, 2, f"{prefix}-.*") == (ErrorCode.NONE, both)
        assert list_transactions(w, 2, prefix) == (ErrorCode.NONE, [])  # a prefix alone does not match the whole id
        assert list_transactions(w, 2, "(") == (ErrorCode.INVALID_REGULAR_EXPRESSION, [])
        assert list_transactions(w, 2, "") == list_transactions(w, 2) == list_transactions(w, 1)  # no filter


# What Kafka 4.4 answered (seen against the peers' broker): both right -> NONE, either wrong -> REBOOTSTRAP_REQUIRED with
# no APIs, only one given -> INVALID_REQUEST, neither -> NONE.
@pytest.mark.parametrize(
    "cluster, node, expected",
    [
        ("ours", "ours", ErrorCode.NONE),
        ("other", "ours", ErrorCode.REBOOTSTRAP_REQUIRED),
        ("ours", "other", ErrorCode.REBOOTSTRAP_REQUIRED),
        ("other", None, ErrorCode.INVALID_REQUEST),
        (None, "other", ErrorCode.INVALID_REQUEST),
        (None, None, ErrorCode.NONE),
    ],
)
def test_api_versions_v5_checks_the_cluster_and_node_the_client_meant(broker, topic, cluster, node, expected):
    R = Req(ApiKey.API_VERSIONS)
    with Wire(broker.bootstrap_servers) as w:
        md = metadata(w, topic, 12)
        ours = {"cluster": md.cluster_id, "node": md.brokers[0].node_id}
        cluster_id = {"ours": ours["cluster"], "other": "another-cluster", None: None}[cluster]
        node_id = {"ours": ours["node"], "other": ours["node"] + 7, None: -1}[node]
        body = R(client_software_name="t", client_software_version="1", cluster_id=cluster_id, node_id=node_id)
        resp = w.call(ApiKey.API_VERSIONS, 5, body)
        still = w.call(ApiKey.API_VERSIONS, 4, R(client_software_name="t", client_software_version="1"))
    assert resp.error_code == expected
    assert bool(resp.api_keys) == (expected == ErrorCode.NONE)
    assert still.error_code == ErrorCode.NONE  # the connection stays usable
