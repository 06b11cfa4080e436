"""Spark filters to ``ScanBounds``: which predicates narrow the scan, and which Spark must still evaluate.

Uses PySpark's filter classes only (no Spark session); the Spark tests check the same through a query.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringStartsWith,
)

from spark_kafkalog.datasource.options import parse_source_options
from spark_kafkalog.datasource.planning import ScanBounds
from spark_kafkalog.datasource.source import KafkaLogPushdownReader, push_filter


def bounds_of(*filters):
    reader = KafkaLogPushdownReader(parse_source_options({"kafka.bootstrap.servers": "h:1", "subscribe": "t"}))
    remaining = reader.pushFilters(list(filters))
    assert all(any(r is f for f in filters) for r in remaining), "pushFilters must return the given objects"
    return reader.bounds, remaining


def test_topic_and_partition_predicates_prune_exactly():
    bounds, remaining = bounds_of(EqualTo(("topic",), "a"), In(("partition",), (0, 2, 5)), IsNotNull(("partition",)))
    assert bounds.topics == frozenset({"a"}) and bounds.partitions == frozenset({0, 2, 5})
    assert remaining == []
    bounds, _ = bounds_of(
        In(("topic",), ("a", "b")),
        EqualNullSafe(("topic",), "b"),
        GreaterThan(("partition",), 1),
        LessThanOrEqual(("partition",), 3),
    )
    assert bounds.topics == frozenset({"b"})
    assert (bounds.partition_min, bounds.partition_end) == (2, 4)


def test_offset_comparisons_become_a_half_open_range():
    bounds, remaining = bounds_of(
        GreaterThanOrEqual(("offset",), 10), LessThan(("offset",), 50), GreaterThan(("offset",), 12)
    )
    assert (bounds.offset_min, bounds.offset_end) == (13, 50)
    assert remaining == []
    bounds, _ = bounds_of(EqualTo(("offset",), 7))
    assert (bounds.offset_min, bounds.offset_end) == (7, 8)


def test_offset_in_narrows_to_its_span_and_stays_with_spark():
    f = In(("offset",), (30, 10, 20))
    bounds, remaining = bounds_of(f)
    assert (bounds.offset_min, bounds.offset_end) == (10, 31)
    assert remaining == [f]


def test_contradictory_bounds_are_empty():
    bounds, _ = bounds_of(GreaterThan(("offset",), 5), LessThan(("offset",), 3))
    assert bounds.is_empty
    bounds, _ = bounds_of(EqualTo(("topic",), "a"), EqualTo(("topic",), "b"))
    assert bounds.is_empty


def test_a_lower_timestamp_bound_narrows_but_spark_keeps_every_timestamp_filter():
    t = datetime(2024, 1, 2, 3, 4, 5, 678_901, tzinfo=UTC)
    lower, upper = GreaterThan(("timestamp",), t), LessThan(("timestamp",), t + timedelta(hours=1))
    bounds, remaining = bounds_of(lower, upper)
    assert bounds.timestamp_min == int(t.timestamp() * 1000)  # floor to the millisecond
    assert remaining == [lower, upper]
    bounds, _ = bounds_of(GreaterThanOrEqual(("timestamp",), t.astimezone(timezone(timedelta(hours=-5)))))
    assert bounds.timestamp_min == int(t.timestamp() * 1000)


@pytest.mark.parametrize(
    "f",
    [
        Not(EqualTo(("partition",), 1)),
        IsNull(("key",)),
        StringStartsWith(("topic",), "a"),
        EqualTo(("partition",), "1"),
        EqualTo(("offset",), True),
        EqualTo(("key",), b"k"),
        GreaterThan(("timestamp",), datetime(2024, 1, 1)),  # naive: not a TIMESTAMP literal
        EqualTo(("headers", "key"), "x"),
    ],
    ids=repr,
)
def test_other_filters_are_left_to_spark_and_do_not_narrow(f):
    bounds, remaining = bounds_of(f)
    assert remaining == [f]
    assert bounds == ScanBounds()


def test_push_filter_returns_new_bounds_without_mutating():
    start = ScanBounds()
    narrowed, applied = push_filter(EqualTo(("partition",), 3), start)
    assert applied and start == ScanBounds() and (narrowed.partition_min, narrowed.partition_end) == (3, 4)
