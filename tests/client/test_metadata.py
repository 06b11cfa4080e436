"""The metadata cache: applying Metadata responses, staleness, invalidation after errors or lost brokers."""

from __future__ import annotations

from spark_kafkalog.client.metadata import MetadataCache, metadata_request
from spark_kafkalog.protocol import API_BY_KEY, decode_request, decode_response, encode_request, encode_response

M = API_BY_KEY[3]
R = M.Response
Part = R.MetadataResponseTopic.MetadataResponsePartition


def response(leaders: dict[str, dict[int, int]], *, version=12, errors=None):
    body = R(
        brokers=[R.MetadataResponseBroker(node_id=n, host=f"h{n}", port=9090 + n, rack=None) for n in (1, 2)],
        cluster_id="c1",
        controller_id=2,
        topics=[
            R.MetadataResponseTopic(
                error_code=(errors or {}).get(name, 0),
                name=name,
                partitions=[
                    Part(
                        partition_index=p,
                        leader_id=leader,
                        leader_epoch=3,
                        replica_nodes=[1, 2],
                        isr_nodes=[1],
                        offline_replicas=[],
                    )
                    for p, leader in parts.items()
                ],
            )
            for name, parts in leaders.items()
        ],
    )
    return decode_response(3, version, encode_response(3, version, 1, body))[1]


def test_update_records_brokers_controller_and_leaders():
    cache = MetadataCache()
    cache.update(response({"t": {0: 1, 1: 2}}), all_topics=False, now=10.0)
    assert cache.broker(2).port == 9092 and str(cache.broker(1)) == "1 (h1:9091)"
    assert (cache.controller_id, cache.cluster_id) == (2, "c1")
    assert cache.leader("t", 1) == (2, 3)
    info = cache.topic("t")
    assert info.partitions[0].isr == (1,) and info.partitions[0].replicas == (1, 2)


def test_old_versions_without_epochs_or_controller_decode_with_defaults():
    cache = MetadataCache()
    cache.update(response({"t": {0: 1}}, version=0), all_topics=False, now=0.0)
    assert cache.leader("t", 0) == (1, -1)
    assert cache.controller_id == -1


def test_topics_become_stale_with_age_invalidation_errors_or_missing_leaders():
    cache = MetadataCache(max_age_ms=1000)
    cache.update(response({"t": {0: 1}, "u": {0: -1}, "v": {0: 1}}, errors={"v": 5}), all_topics=False, now=0.0)
    assert not cache.needs_refresh("t", now=0.5)
    assert cache.needs_refresh("t", now=1.5)
    assert cache.needs_refresh("u", now=0.5)  # no leader
    assert cache.needs_refresh("v", now=0.5)  # LEADER_NOT_AVAILABLE
    assert cache.needs_refresh("unknown", now=0.5)
    cache.invalidate("t")
    assert cache.needs_refresh("t", now=0.5)
    cache.update(response({"t": {0: 1}}), all_topics=False, now=0.6)
    assert not cache.needs_refresh("t", now=0.7)


def test_losing_a_broker_invalidates_the_topics_it_leads():
    cache = MetadataCache()
    cache.update(response({"t": {0: 1}, "u": {0: 2}}), all_topics=True, now=0.0)
    assert cache.all_topics_fresh(now=1.0)
    cache.invalidate_broker(2)
    assert cache.needs_refresh("u", now=0.1)
    assert not cache.needs_refresh("t", now=0.1)
    assert not cache.all_topics_fresh(now=1.0)


def test_metadata_request_for_all_topics_differs_by_version():
    assert decode_request(encode_request(3, 0, 1, metadata_request(0, None, False))).body.topics == []
    assert decode_request(encode_request(3, 1, 1, metadata_request(1, None, False))).body.topics is None
    named = decode_request(encode_request(3, 12, 1, metadata_request(12, ["a", "b"], True))).body
    assert [t.name for t in named.topics] == ["a", "b"] and named.allow_auto_topic_creation is True
