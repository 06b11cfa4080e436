"""Share-group read mode options (``shareGroup``) without Spark: defaults, refusals with their reasons, and the
share-only options refused in a normal stream."""

from __future__ import annotations

import pytest

from spark_kafkalog.datasource.options import KafkaOptionError, Subscribe
from spark_kafkalog.datasource.share_options import (
    DEFAULT_SHARE_ACK_TIMEOUT_MS,
    DEFAULT_SHARE_MAX_RECORDS,
    DEFAULT_SHARE_MAX_WAIT_MS,
    is_share_read,
    parse_share_stream_options,
)
from spark_kafkalog.datasource.stream_options import parse_stream_options

BASE = {"kafka.bootstrap.servers": "h:9092", "subscribe": "orders, refunds", "shareGroup": " workers "}


def test_defaults_and_the_parsed_settings():
    opts = parse_share_stream_options(BASE)
    assert opts.group_id == "workers"
    assert opts.topics == ("orders", "refunds")
    assert isinstance(opts.source.strategy, Subscribe)
    assert (opts.max_records_per_trigger, opts.max_wait_ms, opts.acknowledge_timeout_ms) == (
        DEFAULT_SHARE_MAX_RECORDS,
        DEFAULT_SHARE_MAX_WAIT_MS,
        DEFAULT_SHARE_ACK_TIMEOUT_MS,
    )
    given = parse_share_stream_options(
        {
            **BASE,
            "MAXRECORDSPERTRIGGER": "250",
            "shareMaxWaitMs": "0",
            "shareAcknowledgeTimeoutMs": "5000",
            "includeHeaders": "true",
            "failOnDataLoss": "false",
            "kafka.client.rack": "r1",
        }
    )
    assert (given.max_records_per_trigger, given.max_wait_ms, given.acknowledge_timeout_ms) == (250, 0, 5000)
    assert given.source.include_headers and not given.source.fail_on_data_loss
    assert given.source.client_properties["client.rack"] == "r1"


def test_is_share_read_looks_for_share_group_in_any_case():
    assert is_share_read({"SHAREGROUP": "g"}) and not is_share_read({"subscribe": "t"})


REFUSED = [
    ("startingOffsets", "earliest", "share.auto.offset.reset"),
    ("startingTimestamp", "1000", "share.auto.offset.reset"),
    ("startingOffsetsByTimestamp", '{"t":{"0":1}}', "share.auto.offset.reset"),
    ("endingOffsets", "latest", "until it is stopped"),
    ("maxOffsetsPerTrigger", "10", "maxRecordsPerTrigger"),
    ("minOffsetsPerTrigger", "10", "maxRecordsPerTrigger"),
    ("maxTriggerDelay", "1m", "shareMaxWaitMs"),
    ("maxBytesPerTrigger", "10", "maxRecordsPerTrigger"),
    ("minPartitions", "4", "one task per topic-partition"),
    ("maxRecordsPerPartition", "4", "one task per topic-partition"),
    ("commitOffsetsToGroup", "g", "keeps the query's progress"),
    ("kafka.group.id", "g", "the group is the shareGroup option"),
    ("kafka.isolation.level", "read_committed", "share.isolation.level"),
    ("kafka.session.timeout.ms", "10000", "share.session.timeout.ms"),
]


@pytest.mark.parametrize(("name", "value", "reason"), REFUSED, ids=[r[0] for r in REFUSED])
def test_options_that_make_no_sense_with_a_share_group_are_refused_with_the_reason(name, value, reason):
    with pytest.raises(KafkaOptionError, match=f"Option '{name}' cannot be used with 'shareGroup'") as info:
        parse_share_stream_options({**BASE, name: value})
    assert reason in str(info.value)


@pytest.mark.parametrize("strategy", ["assign", "subscribePattern"])
def test_only_subscribe_names_the_topics(strategy):
    options = {k: v for k, v in BASE.items() if k != "subscribe"}
    with pytest.raises(KafkaOptionError, match="subscribe"):
        parse_share_stream_options({**options, strategy: "x"})
    with pytest.raises(KafkaOptionError, match="Option 'subscribe' must be specified with 'shareGroup'"):
        parse_share_stream_options(options)


BAD_VALUES = [
    ("shareGroup", "  ", "Option 'shareGroup' is empty"),
    ("maxRecordsPerTrigger", "0", "positive integer"),
    ("maxRecordsPerTrigger", "many", "positive integer"),
    ("shareMaxWaitMs", "-1", "non-negative integer"),
    ("shareAcknowledgeTimeoutMs", "0", "positive integer"),
    ("kafka.auto.offset.reset", "earliest", "not supported"),
    ("subscribe", " , ", "No topics to subscribe"),
    ("failOnDataLoss", "maybe", "true or false"),
    ("colour", "red", "Unknown option 'colour'"),
]


@pytest.mark.parametrize(("name", "value", "message"), BAD_VALUES, ids=[f"{n}={v}" for n, v, _ in BAD_VALUES])
def test_bad_values_name_the_option(name, value, message):
    with pytest.raises(KafkaOptionError, match=message):
        parse_share_stream_options({**BASE, name: value})


@pytest.mark.parametrize("name", ["maxRecordsPerTrigger", "shareMaxWaitMs", "shareAcknowledgeTimeoutMs"])
def test_share_only_options_are_refused_without_share_group(name):
    with pytest.raises(KafkaOptionError, match=f"Option '{name}' applies only to share-group reads"):
        parse_stream_options({"kafka.bootstrap.servers": "h:9092", "subscribe": "t", name: "10"})
