"""Spark's offsets, timestamps and assign JSON: parsing, formatting, and the errors for malformed values."""

from __future__ import annotations

import json

import pytest

from spark_kafkalog.datasource.offsets import (
    EARLIEST,
    LATEST,
    OffsetsJsonError,
    TopicPartition,
    format_assign,
    format_partition_offsets,
    parse_assign,
    parse_partition_offsets,
    parse_partition_timestamps,
    parse_specific_offsets,
)

TP = TopicPartition


def test_offsets_json_parses_partition_keys_and_sentinels():
    parsed = parse_partition_offsets('{"topicA":{"0":23,"1":-2},"topicB":{"0":-1}}')
    assert parsed == {TP("topicA", 0): 23, TP("topicA", 1): EARLIEST, TP("topicB", 0): LATEST}


def test_offsets_json_is_written_sorted_by_topic_then_partition_as_spark_does():
    offsets = {TP("b", 0): 5, TP("a", 10): 7, TP("a", 2): -2}
    text = format_partition_offsets(offsets)
    assert text == '{"a":{"2":-2,"10":7},"b":{"0":5}}'
    assert parse_partition_offsets(text) == offsets


def test_offsets_json_round_trips_through_json_dumps_of_python_dicts():
    text = json.dumps({"t": {"3": 100, "0": 0}})
    assert format_partition_offsets(parse_partition_offsets(text)) == '{"t":{"0":0,"3":100}}'


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("not json", "expected e.g."),
        ("[1, 2]", "expected e.g."),
        ('{"t": [0, 1]}', "expected e.g."),
        ('{"t": {"x": 1}}', "partition 'x' of topic 't'"),
        ('{"t": {"-1": 1}}', "partition '-1'"),
        ('{"t": {"0": "5"}}', "must be a whole number"),
        ('{"t": {"0": 1.5}}', "must be a whole number"),
        ('{"t": {"0": true}}', "must be a whole number"),
        ('{"t": {"0": -3}}', "neither an offset >= 0 nor -2 (earliest) or -1 (latest)"),
        ('{"": {"0": 1}}', "expected e.g."),
    ],
)
def test_malformed_offsets_json_names_the_option_and_shows_an_example(text, fragment):
    with pytest.raises(OffsetsJsonError) as info:
        parse_partition_offsets(text, "endingOffsets")
    message = str(info.value)
    assert "'endingOffsets'" in message
    assert fragment in message
    assert '{"topicA"' in message or "-2 (earliest)" in message


def test_timestamps_json_rejects_negative_timestamps():
    assert parse_partition_timestamps('{"t":{"0":1700000000000}}') == {TP("t", 0): 1700000000000}
    with pytest.raises(OffsetsJsonError, match="timestamp -1 of t-0 is negative"):
        parse_partition_timestamps('{"t":{"0":-1}}')


def test_assign_json_keeps_order_and_drops_duplicates():
    assert parse_assign('{"b":[2,0],"a":[1,1]}') == [TP("b", 2), TP("b", 0), TP("a", 1)]
    assert format_assign([TP("b", 2), TP("a", 1), TP("b", 0)]) == '{"a":[1],"b":[0,2]}'


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("topicA", "No topicpartitions to assign"),
        ("{}", "No topicpartitions to assign"),
        ('{"t": {"0": 1}}', "expected e.g."),
        ('{"t": [-1]}', "partition -1 of topic 't'"),
        ('{"t": ["0"]}', "partition '0' of topic 't'"),
        ("{oops", "expected e.g."),
    ],
)
def test_malformed_assign_json_is_rejected_with_an_example(text, fragment):
    with pytest.raises(OffsetsJsonError) as info:
        parse_assign(text)
    assert fragment in str(info.value)
    assert '{"topicA":[0,1],"topicB":[2,4]}' in str(info.value)


# -- topic-level sentinels in the offsets options (SPARK-58774) ---------------------------------------


def test_offsets_option_json_takes_earliest_or_latest_per_topic_in_any_case_mixed_with_partitions():
    limit = parse_specific_offsets('{"a":"EARLIEST","b":{"0":23,"1":-2},"c":" Latest "}', "startingOffsets")
    assert limit.topics == {"a": EARLIEST, "c": LATEST}
    assert limit.offsets == {TP("b", 0): 23, TP("b", 1): EARLIEST}
    partitions = [TP("a", 0), TP("a", 1), TP("b", 0), TP("b", 1), TP("c", 0)]
    assert limit.for_partitions(partitions) == {
        TP("a", 0): EARLIEST,
        TP("a", 1): EARLIEST,
        TP("b", 0): 23,
        TP("b", 1): EARLIEST,
        TP("c", 0): LATEST,
    }
    assert limit.named(partitions) == set(partitions)
    assert limit.missing_topics([TP("b", 0)]) == ["a", "c"]


@pytest.mark.parametrize("value", ['"first"', '"-2"', "5", "[0]", "null"])
def test_a_topic_level_value_other_than_earliest_latest_or_partition_offsets_is_rejected(value):
    with pytest.raises(OffsetsJsonError, match="endingOffsets"):
        parse_specific_offsets(f'{{"a":{value}}}', "endingOffsets")
