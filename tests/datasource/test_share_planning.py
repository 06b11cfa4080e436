"""Share batches without Spark or a cluster: the offset JSON (round trip, refusals), planning one task per
topic-partition, the spans a task fetches and the acquired-offset filter, as tables."""

from __future__ import annotations

import json

import numpy as np
import pytest

from spark_kafkalog.datasource.offsets import TopicPartition
from spark_kafkalog.datasource.planning import OffsetRange
from spark_kafkalog.datasource.share_planning import (
    ShareBatchOffset,
    ShareOffsetError,
    ShareRange,
    acquired_mask,
    merge_offset_ranges,
    plan_share_partitions,
    read_spans,
)
from spark_kafkalog.datasource.stream_planning import StreamOffsetError, from_offset_json

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


MERGE_TABLE = [
    pytest.param([], (), id="empty"),
    pytest.param([(5, 5), (3, 3), (4, 4)], ((3, 5),), id="adjacent-singles"),
    pytest.param([(0, 9), (5, 12), (20, 20)], ((0, 12), (20, 20)), id="overlap-and-gap"),
    pytest.param([(7, 7), (7, 7)], ((7, 7),), id="duplicate"),
]


@pytest.mark.parametrize(("ranges", "expected"), MERGE_TABLE)
def test_merge_offset_ranges(ranges, expected):
    assert merge_offset_ranges(ranges) == expected


def test_merge_refuses_a_range_ending_before_it_starts():
    with pytest.raises(ValueError, match=r"\[5, 4\]"):
        merge_offset_ranges([(5, 4)])


def test_offset_json_round_trip_through_text():
    batch = ShareBatchOffset("g", 7, {A1: ((10, 19), (25, 25)), A0: ((0, 0),), B0: ((4, 9),)})
    text = json.dumps(batch.to_json())
    assert json.loads(text) == {
        "shareGroup": "g",
        "batch": 7,
        "acquired": {"a": {"0": [[0, 0]], "1": [[10, 19], [25, 25]]}, "b": {"0": [[4, 9]]}},
    }
    again = ShareBatchOffset.from_json(json.loads(text), "g")
    assert again == batch and again.records == 1 + 11 + 6
    assert ShareBatchOffset.from_json({"shareGroup": "g", "batch": 0, "acquired": {}}, "g").records == 0


BAD_JSON = [
    pytest.param({"a": {"0": 42}}, "not written by a share-group read", id="normal-mode-checkpoint"),
    pytest.param({"shareGroup": "other", "batch": 1, "acquired": {}}, "share group 'other'", id="other-group"),
    pytest.param({"shareGroup": "g", "batch": -1, "acquired": {}}, "bad share batch offset", id="negative-batch"),
    pytest.param({"shareGroup": "g", "batch": True, "acquired": {}}, "bad share batch offset", id="bool-batch"),
    pytest.param({"shareGroup": "g", "batch": 1}, "bad share batch offset", id="no-acquired"),
    pytest.param({"shareGroup": "g", "batch": 1, "acquired": {"a": []}}, "bad entry 'a'", id="topic-not-object"),
    pytest.param({"shareGroup": "g", "batch": 1, "acquired": {"a": {"x": []}}}, "bad partition 'x'", id="partition"),
    pytest.param({"shareGroup": "g", "batch": 1, "acquired": {"a": {"0": [[3, 2]]}}}, "bad offset ranges", id="rev"),
    pytest.param({"shareGroup": "g", "batch": 1, "acquired": {"a": {"0": [[1]]}}}, "bad offset ranges", id="short"),
    pytest.param(
        {"shareGroup": "g", "batch": 1, "acquired": {"a": {"0": [[5, 6], [1, 2]]}}}, "bad offset ranges", id="unsorted"
    ),
    pytest.param(
        {"shareGroup": "g", "batch": 1, "acquired": {"a": {"0": [[1, 2], [3, 4]]}}}, "bad offset ranges", id="unmerged"
    ),
    pytest.param({"shareGroup": "g", "batch": 1, "acquired": {"a": {"0": [[-1, 2]]}}}, "bad offset ranges", id="neg"),
    pytest.param([1, 2], "not written by a share-group read", id="not-an-object"),
]


@pytest.mark.parametrize(("value", "message"), BAD_JSON)
def test_offset_json_refusals(value, message):
    with pytest.raises(ShareOffsetError, match=message):
        ShareBatchOffset.from_json(value, "g")


def test_a_normal_stream_refuses_a_share_checkpoint_naming_the_group():
    with pytest.raises(StreamOffsetError, match=r"share-group read \(shareGroup 'g'\)"):
        from_offset_json({"shareGroup": "g", "batch": 1, "acquired": {}})


def test_plan_one_task_per_topic_partition_in_order():
    end = ShareBatchOffset("g", 2, {B0: ((4, 9),), A1: ((1, 1), (3, 3)), A0: ()})
    assert plan_share_partitions(end) == [ShareRange("a", 1, ((1, 1), (3, 3))), ShareRange("b", 0, ((4, 9),))]


SPANS_TABLE = [
    # ranges, max_gap, half-open spans
    pytest.param(((0, 9),), 4096, [(0, 10)], id="one"),
    pytest.param(((0, 9), (20, 29)), 4096, [(0, 30)], id="near-joined"),
    pytest.param(((0, 9), (20, 29)), 10, [(0, 10), (20, 30)], id="gap-of-max-gap-split"),
    pytest.param(((0, 9), (19, 29)), 10, [(0, 30)], id="gap-below-max-gap-joined"),
    pytest.param(((0, 0), (5000, 5000), (5001, 5002)), 4096, [(0, 1), (5000, 5003)], id="far-apart"),
]


@pytest.mark.parametrize(("ranges", "max_gap", "spans"), SPANS_TABLE)
def test_read_spans(ranges, max_gap, spans):
    assert read_spans(ShareRange("t", 3, ranges), max_gap) == [OffsetRange("t", 3, s, e) for s, e in spans]


MASK_TABLE = [
    pytest.param([0, 1, 2, 3, 4, 5], ((1, 2), (4, 4)), [0, 1, 1, 0, 1, 0], id="two-ranges"),
    pytest.param([9, 3, 10], ((3, 3), (10, 12)), [0, 1, 1], id="unsorted-offsets"),
    pytest.param([1, 2], (), [0, 0], id="no-ranges"),
    pytest.param([], ((1, 2),), [], id="no-offsets"),
    pytest.param([2**62, 7], ((2**62, 2**62),), [1, 0], id="large"),
]


@pytest.mark.parametrize(("offsets", "ranges", "expected"), MASK_TABLE)
def test_acquired_mask(offsets, ranges, expected):
    assert acquired_mask(np.array(offsets, dtype=np.int64), ranges).tolist() == [bool(x) for x in expected]
