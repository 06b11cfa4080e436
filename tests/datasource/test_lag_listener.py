"""``KafkalogLagListener`` fed PySpark's own progress objects by hand (no SparkSession): what it keeps, serves
and returns."""

from __future__ import annotations

import json
import urllib.request
import uuid

import pytest
from pyspark.sql import Row
from pyspark.sql.streaming.listener import (
    QueryProgressEvent,
    QueryStartedEvent,
    QueryTerminatedEvent,
    StreamingQueryProgress,
)

from spark_kafkalog.datasource.lag_metrics import KafkalogLagListener, register_lag_metrics
from spark_kafkalog.datasource.lag_prometheus import series_names
from spark_kafkalog.datasource.offsets_behind import PYTHON_STREAM_PREFIX, plain_progress

QUERY_ID = uuid.UUID("11111111-1111-1111-1111-111111111111")
RUN_ID = uuid.UUID("22222222-2222-2222-2222-222222222222")
DESCRIPTION = f"{PYTHON_STREAM_PREFIX}WithTriggerAvailableNow@4e32871f"


def _progress(batch_id: int, end: dict, latest: dict) -> StreamingQueryProgress:
    """A progress as Spark 4.3 gives a listener (``fromJson`` of ``progress.json``)."""
    source = {
        "description": DESCRIPTION,
        "startOffset": None,
        "endOffset": {"orders": end, "@topicId:orders:4nlKkU76SECtw5HG3Bzfvw": {}},
        "latestOffset": {"orders": latest},
        "numInputRows": 10,
        "inputRowsPerSecond": 1.0,
        "processedRowsPerSecond": 2.0,
    }
    return StreamingQueryProgress.fromJson(
        {
            "id": str(QUERY_ID),
            "runId": str(RUN_ID),
            "name": "orders_etl",
            "timestamp": "2026-12-06T06:14:52.723Z",
            "batchId": batch_id,
            "batchDuration": 460,
            "durationMs": {"triggerExecution": 460},
            "stateOperators": [],
            "sources": [source],
            "sink": {"description": "NoopTable", "numOutputRows": 10},
            "numInputRows": 10,
            "inputRowsPerSecond": 1.0,
            "processedRowsPerSecond": 2.0,
            "observedMetrics": {"seen": {"rows": 10}},
        }
    )


class FakeQuery:
    id, runId, name = QUERY_ID, RUN_ID, "orders_etl"
    lastProgress = None


class FakeStreams:
    def __init__(self) -> None:
        self.listeners: list = []

    def addListener(self, listener) -> None:  # noqa: N802 - PySpark's name
        self.listeners.append(listener)

    def removeListener(self, listener) -> None:  # noqa: N802 - PySpark's name
        self.listeners.remove(listener)


class FakeSession:
    def __init__(self) -> None:
        self.streams = FakeStreams()


def test_plain_progress_gives_json_types_for_pysparks_progress():
    progress = _progress(3, {"0": 5}, {"0": 9})
    plain = plain_progress(progress)
    assert plain["id"] == str(QUERY_ID) and plain["batchId"] == 3
    assert json.loads(plain["sources"][0]["endOffset"])["orders"] == {"0": 5}
    assert plain_progress({"m": Row(rows=10), "u": uuid.UUID(int=1), "t": (1, 2)}) == {
        "m": {"rows": 10},
        "u": str(uuid.UUID(int=1)),
        "t": [1, 2],
    }
    json.dumps(plain)


def test_listener_keeps_each_progress_lag_and_returns_it_as_source_metrics():
    listener = KafkalogLagListener()
    listener.onQueryStarted(QueryStartedEvent(QUERY_ID, RUN_ID, "orders_etl", "2026-12-06T06:14:52.723Z", set()))
    assert listener.metrics(FakeQuery()) == {}
    listener.onQueryProgress(QueryProgressEvent(_progress(0, {"0": 20, "1": 20}, {"0": 60, "1": 30})))
    listener.onQueryProgress(QueryProgressEvent(_progress(1, {"0": 40, "1": 30}, {"0": 100, "1": 30})))
    expected = {"minOffsetsBehindLatest": "0", "maxOffsetsBehindLatest": "60", "avgOffsetsBehindLatest": "30.0"}
    for key in (FakeQuery(), str(QUERY_ID), str(RUN_ID), "orders_etl"):
        assert listener.metrics(key) == {0: expected}
    progress = listener.progress_with_lag(FakeQuery())
    assert progress is not None and progress["batchId"] == 1
    assert progress["sources"][0]["metrics"] == expected
    assert progress["observedMetrics"] == {"seen": {"rows": 10}}
    (lag,) = listener.lags(FakeQuery())
    assert (lag.source, lag.query_name, lag.batch_id) == ("kafkalog[orders]", "orders_etl", 1)
    assert f'{series_names()[2]}{{query_name="orders_etl"' in listener.prometheus_text()
    listener.onQueryTerminated(QueryTerminatedEvent(QUERY_ID, RUN_ID, None, None))
    assert series_names()[2] + "{" not in listener.prometheus_text()
    assert listener.metrics(FakeQuery()) == {0: expected}


def test_a_bad_prefix_is_refused_before_anything_starts():
    with pytest.raises(ValueError, match="spark-streaming"):
        KafkalogLagListener(prometheus_port=0, prefix="spark-streaming")


def test_a_bad_progress_event_is_logged_not_raised(caplog):
    listener = KafkalogLagListener()

    class Broken:
        @property
        def progress(self):
            raise RuntimeError("py4j gone")

    listener.onQueryProgress(Broken())
    assert "could not compute the lag metrics" in caplog.text
    assert listener.table.active() == []


def test_register_adds_the_listener_serves_the_endpoint_and_close_undoes_both():
    session = FakeSession()
    listener = register_lag_metrics(session, prometheus_port=0, prefix="spark_streaming")
    assert session.streams.listeners == [listener]
    url = listener.prometheus_url
    assert url is not None and url.startswith("http://127.0.0.1:")
    listener.onQueryProgress(QueryProgressEvent(_progress(0, {"0": 2}, {"0": 9})))
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    assert text == listener.prometheus_text()
    assert 'spark_streaming_max_offsets_behind_latest{query_name="orders_etl"' in text
    assert text.rstrip().endswith(" 7")
    listener.close()
    listener.close()
    assert session.streams.listeners == []
    assert KafkalogLagListener().prometheus_url is None
