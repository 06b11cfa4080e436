"""The Prometheus exposition and endpoint of the streaming lag metrics (``lag_prometheus``)."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from spark_kafkalog.datasource.lag_prometheus import (
    CONTENT_TYPE,
    DEFAULT_PREFIX,
    LagMetricsServer,
    render_prometheus,
    series_names,
)
from spark_kafkalog.datasource.offsets_behind import KAFKALOG, SPARK_KAFKA, OffsetsBehindLatest, SourceLag

LAG = OffsetsBehindLatest(1, 9, 4.5)


def _lag(source="kafkalog[t]", index=0, name: str | None = "orders", lag=LAG) -> SourceLag:
    kind = KAFKALOG if source.startswith("kafkalog") else SPARK_KAFKA
    return SourceLag("qid", "rid", name, 3, "", index, source, kind, lag)


def _samples(text: str) -> dict[str, str]:
    """``{"name{labels}": "value"}`` of every sample line."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            out[series] = value
    return out


def test_series_names_follow_sparks_metric_names_in_prometheus_form():
    assert series_names() == (
        "kafkalog_spark_streaming_min_offsets_behind_latest",
        "kafkalog_spark_streaming_avg_offsets_behind_latest",
        "kafkalog_spark_streaming_max_offsets_behind_latest",
    )
    assert series_names("spark_streaming")[2] == "spark_streaming_max_offsets_behind_latest"


def test_render_gives_one_gauge_per_family_and_source_with_labels():
    text = render_prometheus([_lag(), _lag("KafkaV2[Subscribe[k]]", 1, None, OffsetsBehindLatest(0, 0, 0.0))])
    labels = 'query_name="orders",query_id="qid",run_id="rid",source="kafkalog[t]",source_index="0"'
    spark_labels = 'query_name="",query_id="qid",run_id="rid",source="KafkaV2[Subscribe[k]]",source_index="1"'
    low, avg, high = series_names()
    assert _samples(text) == {
        f"{low}{{{labels}}}": "1",
        f"{low}{{{spark_labels}}}": "0",
        f"{avg}{{{labels}}}": "4.5",
        f"{avg}{{{spark_labels}}}": "0.0",
        f"{high}{{{labels}}}": "9",
        f"{high}{{{spark_labels}}}": "0",
    }
    for name in series_names():
        assert f"# TYPE {name} gauge" in text
        assert f"# HELP {name} " in text
    assert text.endswith("\n")


def test_render_without_sources_still_declares_the_families():
    text = render_prometheus([], "p")
    assert _samples(text) == {}
    assert text.count("# TYPE p_") == 3


@pytest.mark.parametrize(
    ("name", "escaped"),
    [('a"b', 'a\\"b'), ("a\\b", "a\\\\b"), ("a\nb", "a\\nb"), ("plain", "plain")],
)
def test_render_escapes_label_values(name, escaped):
    assert f'query_name="{escaped}"' in render_prometheus([_lag(name=name)])


def test_endpoint_serves_metrics_and_404_elsewhere():
    calls = []

    def render() -> str:
        calls.append(1)
        return render_prometheus([_lag()])

    with LagMetricsServer(render, port=0) as server:
        assert server.host == "127.0.0.1"
        assert server.url == f"http://127.0.0.1:{server.port}/metrics"
        with urllib.request.urlopen(server.url, timeout=10) as response:
            assert response.status == 200
            assert response.headers["Content-Type"] == CONTENT_TYPE
            body = response.read().decode()
        assert body == render_prometheus([_lag()])
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/other", timeout=10)
        assert missing.value.code == 404
        assert len(calls) == 1
    server.close()  # idempotent
    with pytest.raises(OSError):
        urllib.request.urlopen(server.url, timeout=2)


def test_endpoint_answers_500_when_rendering_fails_and_keeps_serving():
    state = {"fail": True}

    def render() -> str:
        if state["fail"]:
            raise RuntimeError("boom")
        return "ok\n"

    with LagMetricsServer(render) as server:
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(server.url, timeout=10)
        assert failed.value.code == 500
        state["fail"] = False
        with urllib.request.urlopen(server.url, timeout=10) as response:
            assert response.read() == b"ok\n"


@pytest.mark.parametrize("prefix", ["", "1abc", "spark-streaming", "a b", "kafkalog.spark"])
def test_a_prefix_that_is_no_prometheus_name_is_refused(prefix):
    with pytest.raises(ValueError, match="not a Prometheus metric name"):
        render_prometheus([], prefix)


def test_default_prefix_is_kafkalog_spark_streaming():
    assert DEFAULT_PREFIX == "kafkalog_spark_streaming"
