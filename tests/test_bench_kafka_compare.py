"""The parsing of Apache Kafka's perf tools' summaries in bench/kafka_compare_bench.py, on lines those tools
(Kafka 4.4.0: the producer and consumer perf tools and EndToEndLatency) printed against kafkalog and Kafka 3.9.1, and the kafkalog / Kafka ratios."""

from __future__ import annotations

import pytest

from bench.kafka_compare_bench import (
    PerfToolOutputError,
    median_of,
    parse_consumer_summary,
    parse_end_to_end_summary,
    parse_producer_summary,
    ratios,
)

PRODUCER_OUTPUT = """\
20000 records sent, 13879.250520 records/sec (13.55 MB/sec), 24.13 ms avg latency, 715.00 ms max latency, \
15 ms 50th, 64 ms 95th, 78 ms 99th, 106 ms 99.9th.
"""

CONSUMER_OUTPUT = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, \
fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-12-05 17:42:06:461, 2026-12-05 17:42:09:146, 19.5313, 7.2742, 20000, 7448.7896, 2009, 676, 28.8924, \
29585.7988
"""

END_TO_END_OUTPUT = """\
Topic "e2e-x" does not exist. Will create topic with 1 partition(s) and replication factor = 1
0\t665.946321
Avg latency: 30.2219 ms
Percentiles: 50th = 11, 99th = 253, 99.9th = 665
"""


def test_producer_summary_is_the_final_line_with_percentiles():
    summary = parse_producer_summary(PRODUCER_OUTPUT)
    assert summary == {
        "records": 20000,
        "records_per_s": 13879.25052,
        "mib_per_s": 13.55,
        "avg_ms": 24.13,
        "max_ms": 715.0,
        "p50_ms": 15.0,
        "p95_ms": 64.0,
        "p99_ms": 78.0,
        "p999_ms": 106.0,
    }


def test_the_consumer_tools_output_is_no_producer_summary():
    with pytest.raises(PerfToolOutputError):
        parse_producer_summary(CONSUMER_OUTPUT)


def test_consumer_summary_maps_the_header_names_to_the_row():
    summary = parse_consumer_summary(CONSUMER_OUTPUT)
    assert summary["data.consumed.in.nMsg"] == "20000"
    assert summary["fetch.MB.sec"] == "28.8924"
    assert summary["MB.sec"] == "7.2742"
    assert summary["rebalance.time.ms"] == "2009"
    assert len(summary) == 10


def test_consumer_output_without_its_header_is_no_summary():
    with pytest.raises(PerfToolOutputError):
        parse_consumer_summary(CONSUMER_OUTPUT.splitlines()[-1])
    with pytest.raises(PerfToolOutputError):
        parse_consumer_summary(PRODUCER_OUTPUT)


def test_end_to_end_summary_is_the_average_and_percentiles_after_the_progress_lines():
    assert parse_end_to_end_summary(END_TO_END_OUTPUT) == {
        "avg_ms": 30.2219,
        "p50_ms": 11.0,
        "p99_ms": 253.0,
        "p999_ms": 665.0,
    }
    with pytest.raises(PerfToolOutputError):
        parse_end_to_end_summary(END_TO_END_OUTPUT.rsplit("Percentiles", 1)[0])


def test_ratios_divide_kafkalog_by_kafka_where_both_have_a_number():
    ours = {"produce": {"mb_per_s": 30.0, "summary": "x", "p99_ms": 5}, "only_ours": 1.0}
    theirs = {"produce": {"mb_per_s": 20.0, "summary": "y", "p99_ms": 0}}
    assert ratios(ours, theirs) == {"produce": {"mb_per_s": 1.5}}


def test_rounds_combine_into_the_median_of_each_number_and_the_first_rounds_text():
    rounds = [
        {"produce": {"mb_per_s": 10.0, "summary": "first"}},
        {"produce": {"mb_per_s": 30.0, "summary": "second"}},
        {"produce": {"mb_per_s": 20.0, "summary": "third"}},
    ]
    assert median_of(rounds) == {"produce": {"mb_per_s": 20.0, "summary": "first"}}
