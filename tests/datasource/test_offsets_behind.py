"""Spark's ``*OffsetsBehindLatest`` source metrics computed from progress offsets (``offsets_behind``, pure)."""

from __future__ import annotations

import json
import threading

import pytest

from spark_kafkalog.datasource.offsets import TopicPartition
from spark_kafkalog.datasource.offsets_behind import (
    KAFKALOG,
    PYTHON_STREAM_PREFIX,
    SPARK_KAFKA,
    LagTable,
    OffsetsBehindLatest,
    SourceLag,
    avg_json_string,
    java_double_string,
    offsets_behind_latest,
    parse_source_offsets,
    source_kind,
    source_label,
    source_lags,
    with_lag_metrics,
)

TP = TopicPartition
PY_STREAM = f"{PYTHON_STREAM_PREFIX}WithTriggerAvailableNow@4e32871f"
ID_ENTRY = "@topicId:t:4nlKkU76SECtw5HG3Bzfvw"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (2.5, "2.5"),
        (12.0, "12.0"),
        (1 / 3, "0.3333333333333333"),
        (10 / 3, "3.3333333333333335"),
        (0.001, "0.001"),
        (0.0005, "5.0E-4"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (12345678.5, "1.23456785E7"),
        (1.5e20, "1.5E20"),
        (-2.5, "-2.5"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_java_double_string_writes_doubles_as_the_jvm_does(value, text):
    assert java_double_string(value) == text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"t": {"0": 5, "1": 7}}', {TP("t", 0): 5, TP("t", 1): 7}),
        ({"t": {"0": 5}}, {TP("t", 0): 5}),
        (f'{{"t": {{"0": 5}}, "{ID_ENTRY}": {{}}}}', {TP("t", 0): 5}),
        ('{"a":{"0":1},"b":{"2":3}}', {TP("a", 0): 1, TP("b", 2): 3}),
        ("{}", {}),
        (None, None),
        ("None", None),
        ("null", None),
        ("", None),
        ("not json", None),
        ('{"t": [0, 1]}', None),
        ('{"t": {"x": 1}}', None),
        ('{"t": {"0": "5"}}', None),
        ('{"t": {"0": true}}', None),
        ('{"offset": 42}', None),
        ("[1, 2]", None),
    ],
)
def test_parse_source_offsets_reads_kafka_offset_json_and_skips_topic_id_entries(value, expected):
    assert parse_source_offsets(value) == expected


@pytest.mark.parametrize(
    ("end", "latest", "expected"),
    [
        # behind by 0, 10, 20 -> min 0, max 20, avg 10.0
        ({"0": 10, "1": 20, "2": 30}, {"0": 10, "1": 30, "2": 50}, (0, 20, 10.0)),
        ({"0": 5}, {"0": 5}, (0, 0, 0.0)),
        ({"0": 0, "1": 0}, {"0": 3, "1": 4}, (3, 4, 3.5)),
        # a partition that appeared: in latest and in the batch's end (kafkalog ends every listed partition)
        ({"0": 10, "1": 10, "2": 0}, {"0": 10, "1": 10, "2": 9}, (0, 9, 3.0)),
        # only latest's partitions count; one missing from end is left out
        ({"0": 4, "5": 1}, {"0": 6}, (2, 2, 2.0)),
        ({"0": 4}, {"0": 6, "1": 100}, (2, 2, 2.0)),
        # a log that shrank (topic re-created) is 0 behind, not negative
        ({"0": 50, "1": 10}, {"0": 3, "1": 12}, (0, 2, 1.0)),
        ({}, {"0": 3}, None),
        ({"0": 3}, {}, None),
    ],
)
def test_offsets_behind_latest_is_min_max_avg_of_latest_minus_end(end, latest, expected):
    lag = offsets_behind_latest(
        {TP("t", int(p)): o for p, o in end.items()}, {TP("t", int(p)): o for p, o in latest.items()}
    )
    assert (None if lag is None else (lag.min, lag.max, lag.avg)) == expected


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # as Spark 4.3's SourceProgress.json wrote these (checked on the JVM)
        (88.33333333333333, "88.3"),
        (0.0005, "0.0"),
        (1.25, "1.3"),
        (1.35, "1.4"),
        (2.45, "2.5"),
        (1e7, "10000000.0"),
        (12345678.96, "12345679.0"),
        (3.0, "3.0"),
        (7, "7.0"),
        (0.05, "0.1"),
        (0.04, "0.0"),
        (0.0, "0.0"),
    ],
)
def test_avg_json_string_rounds_as_sparks_progress_json(value, text):
    assert avg_json_string(value) == text


def test_spark_metrics_in_progress_json_form_round_only_the_average():
    assert OffsetsBehindLatest(53, 159, 265 / 3).spark_metrics(progress_json=True) == {
        "minOffsetsBehindLatest": "53",
        "maxOffsetsBehindLatest": "159",
        "avgOffsetsBehindLatest": "88.3",
    }
    assert OffsetsBehindLatest(53, 159, 265 / 3).spark_metrics()["avgOffsetsBehindLatest"] == "88.33333333333333"


def test_spark_metrics_are_sparks_keys_with_jvm_formatted_values():
    assert OffsetsBehindLatest(0, 7, 3.5).spark_metrics() == {
        "minOffsetsBehindLatest": "0",
        "maxOffsetsBehindLatest": "7",
        "avgOffsetsBehindLatest": "3.5",
    }
    assert OffsetsBehindLatest(3, 3, 3.0).spark_metrics()["avgOffsetsBehindLatest"] == "3.0"
    assert OffsetsBehindLatest(0, 30000000, 1e7).spark_metrics()["avgOffsetsBehindLatest"] == "1.0E7"


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        (
            {"minOffsetsBehindLatest": "1", "maxOffsetsBehindLatest": "9", "avgOffsetsBehindLatest": "4.5"},
            OffsetsBehindLatest(1, 9, 4.5),
        ),
        ({"minOffsetsBehindLatest": "1", "maxOffsetsBehindLatest": "9"}, None),
        ({"minOffsetsBehindLatest": "x", "maxOffsetsBehindLatest": "9", "avgOffsetsBehindLatest": "4.5"}, None),
        ({}, None),
    ],
)
def test_from_spark_metrics_reads_what_sparks_kafka_source_reported(metrics, expected):
    assert OffsetsBehindLatest.from_spark_metrics(metrics) == expected


@pytest.mark.parametrize(
    ("description", "end", "latest", "kind"),
    [
        (PY_STREAM, '{"t": {"0": 1}}', '{"t": {"0": 2}}', KAFKALOG),
        (f"{PYTHON_STREAM_PREFIX}@1a2b", '{"t": {"0": 1}}', '{"t": {"0": 2}}', KAFKALOG),
        (PY_STREAM, '{"t": {"0": 1}}', "None", None),
        (PY_STREAM, '{"offset": 3}', '{"offset": 4}', None),
        ("KafkaV2[Subscribe[t]]", '{"t": {"0": 1}}', '{"t": {"0": 2}}', SPARK_KAFKA),
        ("KafkaSourceV1[Subscribe[t]]", None, None, SPARK_KAFKA),
        ("RateStreamV2[rowsPerSecond=1]", '{"t": {"0": 1}}', '{"t": {"0": 2}}', None),
    ],
)
def test_source_kind_tells_kafkalog_and_sparks_kafka_from_other_sources(description, end, latest, kind):
    assert source_kind(description, end, latest) == kind


def test_source_label_is_stable_across_runs():
    offsets = {TP("b", 0): 1, TP("a", 1): 2, TP("a", 0): 3}
    assert source_label(PY_STREAM, KAFKALOG, offsets) == "kafkalog[a,b]"
    assert source_label(f"{PYTHON_STREAM_PREFIX}@ffff", KAFKALOG, offsets) == "kafkalog[a,b]"
    assert source_label("KafkaV2[Subscribe[t]]", SPARK_KAFKA) == "KafkaV2[Subscribe[t]]"


def _progress(*sources, name="q"):
    return {
        "id": "11111111-1111-1111-1111-111111111111",
        "runId": "22222222-2222-2222-2222-222222222222",
        "name": name,
        "timestamp": "2026-12-06T06:14:52.723Z",
        "batchId": 4,
        "sources": list(sources),
        "sink": {"description": "NoopTable", "numOutputRows": 10},
    }


def _source(description, start, end, latest, metrics=None):
    source = {"description": description, "startOffset": start, "endOffset": end, "latestOffset": latest}
    if metrics is not None:
        source["metrics"] = metrics
    return source


def test_source_lags_of_a_progress_with_kafkalog_spark_kafka_and_other_sources():
    kafka_metrics = {"minOffsetsBehindLatest": "2", "maxOffsetsBehindLatest": "2", "avgOffsetsBehindLatest": "2.0"}
    progress = _progress(
        _source(PY_STREAM, "None", f'{{"t": {{"0": 5, "1": 5}}, "{ID_ENTRY}": {{}}}}', '{"t": {"0": 25, "1": 15}}'),
        _source("RateStreamV2[rowsPerSecond=1]", "1", "2", "2"),
        _source("KafkaV2[Subscribe[k]]", '{"k":{"0":1}}', '{"k":{"0":3}}', '{"k":{"0":5}}', kafka_metrics),
        # Spark's own source without metrics (no latest yet at its first batch): computed from its offsets
        _source("KafkaV2[Subscribe[m]]", None, {"m": {"0": 1}}, {"m": {"0": 4}}, {}),
    )
    lags = source_lags(progress)
    assert [(x.source_index, x.source, x.kind, x.lag) for x in lags] == [
        (0, "kafkalog[t]", KAFKALOG, OffsetsBehindLatest(10, 20, 15.0)),
        (2, "KafkaV2[Subscribe[k]]", SPARK_KAFKA, OffsetsBehindLatest(2, 2, 2.0)),
        (3, "KafkaV2[Subscribe[m]]", SPARK_KAFKA, OffsetsBehindLatest(3, 3, 3.0)),
    ]
    first = lags[0]
    assert (first.query_id, first.run_id, first.query_name, first.batch_id) == (
        progress["id"],
        progress["runId"],
        "q",
        4,
    )


def test_source_lags_before_the_first_latest_offset_is_empty():
    assert source_lags(_progress(_source(PY_STREAM, "None", '{"t": {"0": 5}}', "None"))) == []
    assert source_lags(_progress()) == []


def test_with_lag_metrics_fills_kafkalog_sources_metrics_and_leaves_the_rest():
    progress = _progress(
        _source(PY_STREAM, None, {"t": {"0": 5}, ID_ENTRY: {}}, {"t": {"0": 8}}),
        _source("KafkaV2[Subscribe[k]]", None, {"k": {"0": 3}}, {"k": {"0": 5}}, {"x": "y"}),
    )
    before = json.dumps(progress, sort_keys=True)
    out = with_lag_metrics(progress)
    assert out["sources"][0]["metrics"] == {
        "minOffsetsBehindLatest": "3",
        "maxOffsetsBehindLatest": "3",
        "avgOffsetsBehindLatest": "3.0",
    }
    assert out["sources"][1]["metrics"] == {"x": "y"}
    assert json.dumps(progress, sort_keys=True) == before, "the input progress must not change"
    json.dumps(out)  # plain JSON types only
    thirds = _progress(_source(PY_STREAM, None, {"t": {"0": 0, "1": 0, "2": 0}}, {"t": {"0": 1, "1": 1, "2": 2}}))
    assert with_lag_metrics(thirds)["sources"][0]["metrics"]["avgOffsetsBehindLatest"] == "1.3333333333333333"
    assert with_lag_metrics(thirds, progress_json=True)["sources"][0]["metrics"]["avgOffsetsBehindLatest"] == "1.3"


def _lag(run_id="r1", query_id="q1", name="n", index=0, behind=5) -> SourceLag:
    return SourceLag(query_id, run_id, name, 1, "", index, "kafkalog[t]", KAFKALOG, OffsetsBehindLatest(0, behind, 2.5))


def test_lag_table_finds_runs_by_run_id_query_id_and_name():
    table = LagTable()
    table.run_started("q1", "r1", "n")
    assert table.lags("r1") == []
    table.update("q1", "r1", "n", [_lag(behind=5)], {"batchId": 1})
    table.update("q1", "r1", "n", [_lag(behind=7)], {"batchId": 2})
    for key in ("r1", "q1", "n"):
        assert [x.lag.max for x in table.lags(key)] == [7]
    assert table.progress("q1") == {"batchId": 2}
    assert table.lags("unknown") == []
    assert table.progress("unknown") is None


def test_lag_table_terminated_runs_stay_readable_but_leave_active_and_a_new_run_replaces_them():
    table = LagTable()
    table.run_started("q1", "r1", "n")
    table.update("q1", "r1", "n", [_lag("r1")])
    table.update("q2", "s1", None, [_lag("s1", "q2", None)])
    assert sorted(x.run_id for x in table.active()) == ["r1", "s1"]
    table.run_terminated("r1")
    assert [x.run_id for x in table.active()] == ["s1"]
    assert [x.run_id for x in table.lags("q1")] == ["r1"]
    table.run_started("q1", "r2", "n")
    assert table.lags("r1") == []
    table.update("q1", "r2", "n", [_lag("r2", behind=1)])
    assert [(x.run_id, x.lag.max) for x in table.lags("n")] == [("r2", 1)]
    assert sorted(x.run_id for x in table.active()) == ["r2", "s1"]


def test_lag_table_is_safe_across_threads():
    table = LagTable()
    errors: list[BaseException] = []

    def feed(i: int) -> None:
        try:
            for n in range(200):
                table.update(f"q{i}", f"r{i}", None, [_lag(f"r{i}", f"q{i}", None, behind=n)])
                table.active()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=feed, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted((x.run_id, x.lag.max) for x in table.active()) == [(f"r{i}", 199) for i in range(4)]
