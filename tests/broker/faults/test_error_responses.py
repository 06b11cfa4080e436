"""The error responses built from the declared schemas: every error field holds the error, entries mirror the
request's, they encode and decode with our codec; the per-partition split and merge."""

from __future__ import annotations

import uuid

import pytest

from broker.faults.error_responses import (
    PartitionMatch,
    count_partitions,
    error_response,
    is_error_field,
    is_partitioned,
    merge_responses,
    paired_arrays,
    partition_error_response,
    split_request,
)
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode, decode_response, encode_response

NLF = ErrorCode.NOT_LEADER_OR_FOLLOWER
TOPIC_ID = uuid.UUID(int=7)


def error_codes(msg, version: int) -> list[int]:
    """Every error field's value in ``msg``, depth first."""
    out = []
    for f in msg._spec.fields:
        if not f.in_version(version):
            continue
        value = getattr(msg, f.name)
        if is_error_field(f):
            out.append(value)
        elif f.struct is not None and f.kind == "array":
            for item in value or []:
                out.extend(error_codes(item, version))
        elif f.struct is not None:
            out.extend(error_codes(value, version))
    return out


def round_trip(api_key: int, version: int, body):
    frame = encode_response(api_key, version, 42, body)
    correlation, decoded = decode_response(api_key, version, frame)
    assert correlation == 42
    return decoded


def produce(version: int):
    api = API_BY_KEY[ApiKey.PRODUCE]
    topic_key = {"topic_id": TOPIC_ID} if version >= 13 else {"name": "t"}
    return api.Request(
        acks=-1,
        timeout_ms=1000,
        topic_data=[
            api.Request.TopicProduceData(
                **topic_key,
                partition_data=[api.Request.TopicProduceData.PartitionProduceData(index=i) for i in (0, 1, 2)],
            ),
            api.Request.TopicProduceData(
                name="u" if version < 13 else "",
                topic_id=uuid.UUID(int=8) if version >= 13 else uuid.UUID(int=0),
                partition_data=[api.Request.TopicProduceData.PartitionProduceData(index=5)],
            ),
        ],
    )


def fetch(version: int):
    api = API_BY_KEY[ApiKey.FETCH]
    t = api.Request.FetchTopic
    topic_key = {"topic_id": TOPIC_ID} if version >= 13 else {"topic": "t"}
    return api.Request(
        max_wait_ms=0,
        min_bytes=1,
        topics=[t(**topic_key, partitions=[t.FetchPartition(partition=p, fetch_offset=3) for p in (0, 1)])],
    )


def list_offsets(version: int):
    api = API_BY_KEY[ApiKey.LIST_OFFSETS]
    t = api.Request.ListOffsetsTopic
    return api.Request(topics=[t(name="t", partitions=[t.ListOffsetsPartition(partition_index=p) for p in (0, 1)])])


def offset_fetch(version: int):
    api = API_BY_KEY[ApiKey.OFFSET_FETCH]
    if version < 8:
        t = api.Request.OffsetFetchRequestTopic
        return api.Request(group_id="g", topics=[t(name="t", partition_indexes=[0, 1])])
    g = api.Request.OffsetFetchRequestGroup
    key = {"topic_id": TOPIC_ID} if version >= 10 else {"name": "t"}
    topics = [g.OffsetFetchRequestTopics(**key, partition_indexes=[0, 1])]
    return api.Request(groups=[g(group_id="g", topics=topics), g(group_id="h", topics=[])])


def add_partitions_to_txn(version: int):
    api = API_BY_KEY[ApiKey.ADD_PARTITIONS_TO_TXN]
    t = api.Request.AddPartitionsToTxnTopic
    topics = [t(name="t", partitions=[0, 1]), t(name="u", partitions=[4])]
    if version < 4:
        return api.Request(v3_and_below_transactional_id="x", v3_and_below_topics=topics)
    tx = api.Request.AddPartitionsToTxnTransaction
    return api.Request(transactions=[tx(transactional_id="x", topics=topics)])


def offset_for_leader_epoch(version: int):
    api = API_BY_KEY[ApiKey.OFFSET_FOR_LEADER_EPOCH]
    t = api.Request.OffsetForLeaderTopic
    return api.Request(topics=[t(topic="t", partitions=[t.OffsetForLeaderPartition(partition=p) for p in (0, 1)])])


def delete_records(version: int):
    api = API_BY_KEY[ApiKey.DELETE_RECORDS]
    t = api.Request.DeleteRecordsTopic
    return api.Request(topics=[t(name="t", partitions=[t.DeleteRecordsPartition(partition_index=p) for p in (0, 1)])])


def offset_commit(version: int):
    api = API_BY_KEY[ApiKey.OFFSET_COMMIT]
    return api.Request.from_dict(
        {"group_id": "g", "topics": [{"name": "t", "partitions": [{"partition_index": 0}, {"partition_index": 1}]}]}
    )


def txn_offset_commit(version: int):
    api = API_BY_KEY[ApiKey.TXN_OFFSET_COMMIT]
    key = {"topic_id": TOPIC_ID} if version >= 6 else {"name": "t"}
    return api.Request.from_dict(
        {"transactional_id": "x", "group_id": "g", "topics": [{**key, "partitions": [{"partition_index": 0}]}]}
    )


def find_coordinator(version: int):
    api = API_BY_KEY[ApiKey.FIND_COORDINATOR]
    if version < 4:
        return api.Request(key="g")
    return api.Request(coordinator_keys=["g", "h"])


def delete_topics(version: int):
    api = API_BY_KEY[ApiKey.DELETE_TOPICS]
    if version < 6:
        return api.Request(topic_names=["t", "u"])
    return api.Request.from_dict({"topics": [{"name": "t"}, {"name": "u"}]})


def join_group(version: int):
    return API_BY_KEY[ApiKey.JOIN_GROUP].Request(group_id="g", protocol_type="consumer")


def describe_groups(version: int):
    return API_BY_KEY[ApiKey.DESCRIBE_GROUPS].Request(groups=["g", "h"])


def metadata(version: int):
    api = API_BY_KEY[ApiKey.METADATA]
    return api.Request.from_dict({"topics": [{"name": "t"}, {"name": "u"}]})


def init_producer_id(version: int):
    return API_BY_KEY[ApiKey.INIT_PRODUCER_ID].Request(transactional_id="x")


# api, request builder, entries (error fields) the response must hold, versions
CASES = [
    (ApiKey.PRODUCE, produce, 4, (3, 9, 12, 13)),
    (ApiKey.FETCH, fetch, 2, (0, 4, 6)),  # v7+ adds the top-level error_code
    (ApiKey.FETCH, fetch, 3, (7, 11, 12, 13, 18)),
    (ApiKey.LIST_OFFSETS, list_offsets, 2, (1, 5, 11)),
    (ApiKey.OFFSET_FETCH, offset_fetch, 2, (1,)),
    (ApiKey.OFFSET_FETCH, offset_fetch, 3, (2, 7)),  # v2-7: a top-level error_code
    (ApiKey.OFFSET_FETCH, offset_fetch, 4, (8, 10)),  # two groups' error_code and two partitions
    (ApiKey.ADD_PARTITIONS_TO_TXN, add_partitions_to_txn, 3, (0, 3)),
    (ApiKey.ADD_PARTITIONS_TO_TXN, add_partitions_to_txn, 4, (4, 5)),  # + the top-level error_code
    (ApiKey.OFFSET_FOR_LEADER_EPOCH, offset_for_leader_epoch, 2, (0, 4)),
    (ApiKey.DELETE_RECORDS, delete_records, 2, (0, 2)),
    (ApiKey.OFFSET_COMMIT, offset_commit, 2, (2, 8, 9)),
    (ApiKey.TXN_OFFSET_COMMIT, txn_offset_commit, 1, (0, 3, 6)),
    (ApiKey.FIND_COORDINATOR, find_coordinator, 1, (0, 3)),
    (ApiKey.FIND_COORDINATOR, find_coordinator, 2, (4, 6)),
    (ApiKey.DELETE_TOPICS, delete_topics, 2, (1, 6)),
    (ApiKey.JOIN_GROUP, join_group, 1, (0, 9)),
    (ApiKey.DESCRIBE_GROUPS, describe_groups, 2, (0, 5)),
    (ApiKey.METADATA, metadata, 2, (1, 12)),
    (ApiKey.INIT_PRODUCER_ID, init_producer_id, 1, (0, 5)),
]


@pytest.mark.parametrize(
    ("api_key", "build", "entries", "version"),
    [(k, b, n, v) for k, b, n, vs in CASES for v in vs],
    ids=[f"{API_BY_KEY[k].name}-v{v}" for k, _, _, vs in CASES for v in vs],
)
@pytest.mark.parametrize("code", [NLF, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS])
def test_every_error_field_of_the_built_response_holds_the_error_and_survives_the_codec(
    api_key, build, entries, version, code
):
    api = API_BY_KEY[api_key]
    response = error_response(api, version, build(version), code)
    decoded = round_trip(api_key, version, response)
    codes = error_codes(decoded, version)
    assert codes == [code] * entries


@pytest.mark.parametrize("version", [3, 12, 13])
def test_a_produce_error_response_mirrors_the_topics_and_partitions_with_kafkas_offsets(version):
    api = API_BY_KEY[ApiKey.PRODUCE]
    response = round_trip(ApiKey.PRODUCE, version, error_response(api, version, produce(version), NLF))
    first = response.responses[0]
    assert (first.topic_id if version >= 13 else first.name) == (TOPIC_ID if version >= 13 else "t")
    assert [p.index for p in first.partition_responses] == [0, 1, 2]
    assert [p.index for p in response.responses[1].partition_responses] == [5]
    assert {p.base_offset for p in first.partition_responses} == {-1}


def test_primitive_request_entries_fill_the_key_of_their_answers():
    of = round_trip(ApiKey.OFFSET_FETCH, 8, error_response(API_BY_KEY[ApiKey.OFFSET_FETCH], 8, offset_fetch(8), NLF))
    assert [g.group_id for g in of.groups] == ["g", "h"]
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in of.groups[0].topics] == [("t", [0, 1])]
    assert {p.committed_offset for p in of.groups[0].topics[0].partitions} == {-1}
    fc = error_response(API_BY_KEY[ApiKey.FIND_COORDINATOR], 4, find_coordinator(4), NLF)
    assert [c.key for c in fc.coordinators] == ["g", "h"]
    dt = error_response(API_BY_KEY[ApiKey.DELETE_TOPICS], 1, delete_topics(1), NLF)
    assert [r.name for r in dt.responses] == ["t", "u"]


def test_a_response_array_without_a_request_source_stays_empty():
    api = API_BY_KEY[ApiKey.METADATA]
    response = error_response(api, 12, metadata(12), NLF)
    assert response.brokers == []
    assert [t.name for t in response.topics] == ["t", "u"]
    jg = error_response(API_BY_KEY[ApiKey.JOIN_GROUP], 9, join_group(9), NLF)
    assert jg.members == []
    assert paired_arrays("ListTransactions", *_specs(ApiKey.LIST_TRANSACTIONS), 1) == ()


def _specs(key):
    api = API_BY_KEY[key]
    return api.request, api.response


@pytest.mark.parametrize(
    ("api_key", "expected"),
    [
        (ApiKey.PRODUCE, True),
        (ApiKey.FETCH, True),
        (ApiKey.LIST_OFFSETS, True),
        (ApiKey.OFFSET_COMMIT, True),
        (ApiKey.OFFSET_FETCH, True),
        (ApiKey.TXN_OFFSET_COMMIT, True),
        (ApiKey.ADD_PARTITIONS_TO_TXN, True),
        (ApiKey.DELETE_RECORDS, True),
        (ApiKey.OFFSET_FOR_LEADER_EPOCH, True),
        (ApiKey.METADATA, False),
        (ApiKey.JOIN_GROUP, False),
        (ApiKey.FIND_COORDINATOR, False),
        (ApiKey.CREATE_TOPICS, False),
    ],
)
def test_partitioned_apis_are_recognised_from_their_schemas(api_key, expected):
    assert is_partitioned(API_BY_KEY[api_key]) is expected


def test_split_takes_out_exactly_the_matching_partition_and_the_merge_answers_it():
    api = API_BY_KEY[ApiKey.PRODUCE]
    request = produce(12)
    kept, removed = split_request(api, 12, request, PartitionMatch("t", 1))
    assert [[p.index for p in t.partition_data] for t in kept.topic_data] == [[0, 2], [5]]
    assert removed is not None
    assert [[p.index for p in t.partition_data] for t in removed.topic_data] == [[1]]
    assert count_partitions(api, 12, kept) == 3
    assert [[p.index for p in t.partition_data] for t in request.topic_data] == [[0, 1, 2], [5]]  # untouched

    served = error_response(api, 12, kept, ErrorCode.NONE)
    merged = merge_responses(api, 12, served, partition_error_response(api, 12, removed, NLF))
    answers = {(t.name, p.index): p.error_code for t in merged.responses for p in t.partition_responses}
    assert answers == {("t", 0): 0, ("t", 2): 0, ("t", 1): NLF, ("u", 5): 0}


def test_a_whole_topic_split_drops_its_entry_and_other_topics_stay():
    api = API_BY_KEY[ApiKey.PRODUCE]
    kept, removed = split_request(api, 12, produce(12), PartitionMatch("t"))
    assert [t.name for t in kept.topic_data] == ["u"]
    assert removed is not None and [len(t.partition_data) for t in removed.topic_data] == [3]
    _, none = split_request(api, 12, produce(12), PartitionMatch("absent"))
    assert none is None


def test_topics_named_by_id_are_matched_through_the_resolver():
    api = API_BY_KEY[ApiKey.FETCH]
    names = {TOPIC_ID: "t"}
    kept, removed = split_request(api, 13, fetch(13), PartitionMatch("t", 0), names.get)
    assert removed is not None and [p.partition for p in removed.topics[0].partitions] == [0]
    assert [p.partition for p in kept.topics[0].partitions] == [1]
    _, unresolved = split_request(api, 13, fetch(13), PartitionMatch("t", 0), {}.get)
    assert unresolved is None


def test_a_partition_error_replaces_the_served_answer_of_that_partition_and_keeps_top_level_codes_zero():
    api = API_BY_KEY[ApiKey.FETCH]
    request = fetch(12)
    _, removed = split_request(api, 12, request, PartitionMatch("t", 1))
    assert removed is not None
    served = error_response(api, 12, request, ErrorCode.NONE)
    merged = merge_responses(api, 12, served, partition_error_response(api, 12, removed, NLF))
    decoded = round_trip(ApiKey.FETCH, 12, merged)
    assert decoded.error_code == 0
    assert [(p.partition_index, p.error_code) for p in decoded.responses[0].partitions] == [(0, 0), (1, NLF)]


def test_nested_groups_split_per_group_for_offset_fetch():
    api = API_BY_KEY[ApiKey.OFFSET_FETCH]
    kept, removed = split_request(api, 9, offset_fetch(9), PartitionMatch("t", 0))
    assert removed is not None
    assert [g.group_id for g in removed.groups] == ["g"]
    assert removed.groups[0].topics[0].partition_indexes == [0]
    assert kept.groups[0].topics[0].partition_indexes == [1]
    answer = partition_error_response(api, 9, removed, NLF)
    assert error_codes(answer, 9) == [NLF, 0]  # the partition's code; the group's stays 0
