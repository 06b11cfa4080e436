"""Source and sink options: Spark's names, defaults, precedence, and one error per invalid option."""

from __future__ import annotations

import pytest

from spark_kafkalog.datasource.offsets import (
    EarliestLimit,
    GlobalTimestampLimit,
    LatestLimit,
    SpecificOffsetsLimit,
    SpecificTimestampsLimit,
    TopicPartition,
)
from spark_kafkalog.datasource.options import (
    Assign,
    KafkaOptionError,
    Subscribe,
    SubscribePattern,
    parse_sink_options,
    parse_source_options,
)

BASE = {"kafka.bootstrap.servers": "localhost:9092", "subscribe": "events"}
SINK = {"kafka.bootstrap.servers": "localhost:9092"}
TP = TopicPartition


def source(**extra):
    opts = dict(BASE)
    for key, value in extra.items():
        key = key.replace("__", ".")
        if value is None:
            opts.pop(key, None)
        else:
            opts[key] = value
    return opts


def test_defaults_are_sparks_batch_defaults():
    o = parse_source_options(BASE)
    assert o.strategy == Subscribe(("events",))
    assert o.starting == EarliestLimit()
    assert o.ending == LatestLimit()
    assert o.fail_on_data_loss is True
    assert o.min_partitions is None and o.max_records_per_partition is None
    assert o.include_headers is False
    assert o.poll_timeout_ms == 120_000
    assert o.fetch_offset_retries == 3 and o.fetch_offset_retry_interval_ms == 1000
    assert o.client_properties == {"bootstrap.servers": "localhost:9092"}


def test_option_names_and_keyword_values_are_case_insensitive():
    o = parse_source_options(
        {
            "KAFKA.BOOTSTRAP.SERVERS": "h:1",
            "SubScribe": " a , b ,, a ",
            "STARTINGOFFSETS": " Earliest ",
            "endingoffsets": "LATEST",
            "failondataloss": "FALSE",
            "INCLUDEHEADERS": "True",
            "minpartitions": "4",
        }
    )
    assert o.strategy == Subscribe(("a", "b"))
    assert (o.starting, o.ending) == (EarliestLimit(), LatestLimit())
    assert o.fail_on_data_loss is False and o.include_headers is True and o.min_partitions == 4


def test_strategies_assign_and_pattern():
    assert parse_source_options(source(subscribe=None, assign='{"t":[1,0]}')).strategy == Assign(
        (TP("t", 1), TP("t", 0))
    )
    pattern = parse_source_options(source(subscribe=None, subscribePattern="orders")).strategy
    assert pattern == SubscribePattern("orders")
    assert pattern.matches("orders-eu") and pattern.matches("eu-orders")  # search, not full match (as Spark)
    assert not pattern.matches("__orders_internal")


def test_timestamp_options_take_precedence_as_in_spark():
    o = parse_source_options(
        source(startingOffsets="earliest", startingOffsetsByTimestamp='{"events":{"0":5}}', startingTimestamp="7")
    )
    assert o.starting == GlobalTimestampLimit(7, "error")
    o = parse_source_options(source(startingOffsets="earliest", startingOffsetsByTimestamp='{"events":{"0":5}}'))
    assert o.starting == SpecificTimestampsLimit({TP("events", 0): 5}, "error")
    o = parse_source_options(source(endingOffsets='{"events":{"0":9}}', endingTimestamp="11"))
    assert o.ending == GlobalTimestampLimit(11, "latest")  # an ending timestamp without a match is latest
    o = parse_source_options(source(startingTimestamp="3", startingOffsetsByTimestampStrategy="LATEST"))
    assert o.starting == GlobalTimestampLimit(3, "latest")


def test_specific_offsets_keep_sentinels_for_planning():
    o = parse_source_options(
        source(startingOffsets='{"events":{"0":-2,"1":4}}', endingOffsets='{"events":{"0":-1,"1":9}}')
    )
    assert o.starting == SpecificOffsetsLimit({TP("events", 0): -2, TP("events", 1): 4})
    assert o.ending == SpecificOffsetsLimit({TP("events", 0): -1, TP("events", 1): 9})


def test_kafka_prefixed_options_become_client_properties():
    o = parse_source_options(
        source(
            **{
                "kafka.isolation.level": "read_committed",
                "kafka.max.partition.fetch.bytes": "4194304",
                "kafka.group.id": "g",
            }
        )
    )
    assert o.client_properties == {
        "bootstrap.servers": "localhost:9092",
        "isolation.level": "read_committed",
        "max.partition.fetch.bytes": "4194304",
        "group.id": "g",
    }


def test_streaming_only_options_are_accepted_by_batch_reads():
    o = parse_source_options(
        source(maxOffsetsPerTrigger="100", minOffsetsPerTrigger="10", maxTriggerDelay="5m", groupIdPrefix="x")
    )
    assert o.strategy == Subscribe(("events",))


INVALID_SOURCE = [
    # (options, option named in the message, fragment of Spark's wording)
    (
        source(**{"kafka.bootstrap.servers": None}),
        "kafka.bootstrap.servers",
        "must be specified for configuring Kafka consumer",
    ),
    (source(**{"kafka.bootstrap.servers": "  "}), "kafka.bootstrap.servers", "must be specified"),
    (source(subscribe=None), "subscribe", "One of the following options must be specified for Kafka source"),
    (source(assign='{"t":[0]}'), "assign", "Only one of the following options can be specified"),
    (source(subscribe=" , "), "subscribe", "No topics to subscribe to"),
    (source(subscribe=None, subscribePattern=" "), "subscribePattern", "Pattern to subscribe is empty"),
    (source(subscribe=None, subscribePattern="orders-("), "subscribePattern", "not a valid regular expression"),
    (source(subscribe=None, assign="t:0"), "assign", "No topicpartitions to assign"),
    (source(subscribe=None, assign='{"t":"0"}'), "assign", "expected e.g."),
    (source(startingOffsets="latest"), "startingOffsets", "starting offset can't be latest for batch queries"),
    (source(startingOffsets='{"events":{"0":-1}}'), "startingOffsets", "can't be latest (-1) for batch queries"),
    (source(startingOffsets="beginning"), "startingOffsets", "expected e.g."),
    (source(endingOffsets="earliest"), "endingOffsets", "ending offset can't be earliest for batch queries"),
    (source(endingOffsets='{"events":{"0":-2}}'), "endingOffsets", "can't be earliest (-2) for batch queries"),
    (source(endingOffsets='{"events":{"0":"x"}}'), "endingOffsets", "must be a whole number"),
    (source(startingOffsetsByTimestamp='{"events":[1]}'), "startingOffsetsByTimestamp", "expected e.g."),
    (source(endingOffsetsByTimestamp='{"events":{"0":-5}}'), "endingOffsetsByTimestamp", "is negative"),
    (source(startingTimestamp="yesterday"), "startingTimestamp", "expected a single long value"),
    (source(startingTimestamp="-1"), "startingTimestamp", "must be >= 0"),
    (source(endingTimestamp="1.5"), "endingTimestamp", "expected a single long value"),
    (
        source(startingOffsetsByTimestampStrategy="fail"),
        "startingOffsetsByTimestampStrategy",
        "must be 'error' or 'latest'",
    ),
    (source(failOnDataLoss="no"), "failOnDataLoss", "must be true or false"),
    (source(includeHeaders="1"), "includeHeaders", "must be true or false"),
    (source(minPartitions="0"), "minPartitions", "must be a positive integer"),
    (source(minPartitions="many"), "minPartitions", "must be a positive integer"),
    (source(maxRecordsPerPartition="-10"), "maxRecordsPerPartition", "must be a positive integer"),
    (source(kafkaConsumer__pollTimeoutMs="soon"), "kafkaConsumer.pollTimeoutMs", "must be a positive integer"),
    (source(fetchOffset__numRetries="-1"), "fetchOffset.numRetries", "must be a non-negative integer"),
    (source(fetchOffset__retryIntervalMs="1s"), "fetchOffset.retryIntervalMs", "must be a non-negative integer"),
    (source(maxOffsetsPerTrigger="0"), "maxOffsetsPerTrigger", "must be a positive integer"),
    (
        source(maxOffsetsPerTrigger="10", minOffsetsPerTrigger="20"),
        "minOffsetsPerTrigger",
        "must be <= 'maxOffsetsPerTrigger'",
    ),
    (source(maxTriggerDelay="soon"), "maxTriggerDelay", "expected a duration"),
    (source(**{"kafka.auto.offset.reset": "earliest"}), "auto.offset.reset", "set the source option 'startingOffsets'"),
    (source(**{"kafka.key.deserializer": "x"}), "key.deserializer", "keys are always read as bytes"),
    (source(**{"kafka.value.deserializer": "x"}), "value.deserializer", "values are always read as bytes"),
    (source(**{"kafka.enable.auto.commit": "true"}), "enable.auto.commit", "does not commit offsets"),
    (source(**{"kafka.interceptor.classes": "x"}), "interceptor.classes", "interceptors are not supported"),
    (source(**{"kafka.fetch.max.bytes": "big"}), "kafka.fetch.max.bytes", "must be an integer"),
    (source(**{"kafka.fetch.max.byte": "1"}), "kafka.fetch.max.byte", "Invalid Kafka client option"),
    (source(**{"kafka.security.protocol": "TLS"}), "kafka.security.protocol", "Invalid Kafka client option"),
    (source(startingOffset="earliest"), "startingoffset", "did you mean 'startingOffsets'"),
    (source(topic="events"), "topic", "does not apply to reads"),
    (
        source(subscribe=None, assign='{"t":[0,1]}', startingOffsets='{"t":{"0":5}}'),
        "startingOffsets",
        "you must specify all TopicPartitions",
    ),
    (
        source(subscribe=None, assign='{"t":[0]}', endingOffsetsByTimestamp='{"t":{"1":5}}'),
        "endingOffsetsByTimestamp",
        "you must specify all TopicPartitions",
    ),
    (
        source(startingOffsets='{"events":{"0":1}}', endingOffsets='{"events":{"1":5}}'),
        "startingOffsets",
        "name different topic-partitions",
    ),
    (
        source(startingOffsets='{"events":{"0":9}}', endingOffsets='{"events":{"0":5}}'),
        "startingOffsets",
        "is greater than its endingOffsets value 5",
    ),
    (
        source(startingOffsetsByTimestamp='{"events":{"0":9}}', endingOffsetsByTimestamp='{"events":{"0":5}}'),
        "startingOffsetsByTimestamp",
        "greater than",
    ),
]


@pytest.mark.parametrize(
    "options, option, fragment", INVALID_SOURCE, ids=[f"{i}-{c[1]}" for i, c in enumerate(INVALID_SOURCE)]
)
def test_every_invalid_source_option_fails_with_a_message_naming_it_and_an_example(options, option, fragment):
    with pytest.raises(KafkaOptionError) as info:
        parse_source_options(options)
    message = str(info.value)
    assert fragment in message
    assert option in message
    assert "e.g." in message


def test_sink_options_topic_is_trimmed_and_kafka_settings_pass_through():
    o = parse_sink_options(
        {**SINK, "TOPIC": "  out ", "kafka.acks": "1", "kafka.compression.type": "zstd", "includeHeaders": "true"}
    )
    assert o.topic == "out"
    assert o.client_properties == {"bootstrap.servers": "localhost:9092", "acks": "1", "compression.type": "zstd"}
    assert parse_sink_options(SINK).topic is None


INVALID_SINK = [
    ({}, "kafka.bootstrap.servers", "must be specified for configuring Kafka producer"),
    ({**SINK, "topic": "  "}, "topic", "Option 'topic' is empty"),
    ({**SINK, "kafka.key.serializer": "x"}, "key.serializer", "keys are written as bytes"),
    ({**SINK, "kafka.value.serializer": "x"}, "value.serializer", "values are written as bytes"),
    ({**SINK, "kafka.acks": "2"}, "kafka.acks", "must be one of all, -1, 0, 1"),
    ({**SINK, "kafka.compression.type": "brotli"}, "kafka.compression.type", "unknown compression type"),
    ({**SINK, "subscribe": "t"}, "subscribe", "does not apply to writes"),
    ({**SINK, "topics": "t"}, "topics", "did you mean 'topic'"),
]


@pytest.mark.parametrize("options, option, fragment", INVALID_SINK, ids=[c[1] for c in INVALID_SINK])
def test_every_invalid_sink_option_fails_with_a_message_naming_it_and_an_example(options, option, fragment):
    with pytest.raises(KafkaOptionError) as info:
        parse_sink_options(options)
    message = str(info.value)
    assert fragment in message
    assert option in message
    assert "e.g." in message


# Each case breaks two or more rules at once; the first complaint is Spark's (KafkaSourceProvider's order:
# starting limit, ending limit, subscription, minPartitions/maxRecordsPerPartition, refused kafka.* keys,
# bootstrap servers, per-trigger limits, start/end pairs, assign JSON).
SPARK_ORDER = [
    ({"startingOffsets": "latest"}, "starting offset can't be latest"),
    ({"endingOffsets": "earliest", "minPartitions": "0"}, "ending offset can't be earliest"),
    ({"startingOffsets": "latest", "endingOffsets": "earliest"}, "starting offset can't be latest"),
    ({"startingOffsets": '{"t":'}, "startingOffsets"),
    ({}, "One of the following options must be specified"),
    ({"subscribe": "a", "assign": '{"a":[0]}'}, "Only one of the following options"),
    ({"subscribe": " , "}, "No topics to subscribe to"),
    ({"subscribe": "a", "minPartitions": "0"}, "minPartitions"),
    ({"subscribe": "a", "maxRecordsPerPartition": "-1", "kafka.auto.offset.reset": "x"}, "maxRecordsPerPartition"),
    ({"subscribe": "a", "kafka.auto.offset.reset": "earliest"}, "auto.offset.reset"),
    ({"subscribe": "a", "kafka.group.id": "g"}, "kafka.bootstrap.servers' must be specified"),
    ({"assign": "{nope"}, "kafka.bootstrap.servers' must be specified"),
]


@pytest.mark.parametrize(("options", "fragment"), SPARK_ORDER)
def test_without_bootstrap_servers_the_first_error_is_the_one_spark_reports_first(options, fragment):
    with pytest.raises(KafkaOptionError, match=fragment.replace("(", r"\(")):
        parse_source_options(options)


def test_with_every_rule_broken_after_the_bootstrap_check_the_start_end_pair_comes_before_the_assign_json():
    options = {
        "kafka.bootstrap.servers": "h:1",
        "assign": '{"t":[0],}',
        "startingOffsets": '{"t":{"0":9}}',
        "endingOffsets": '{"t":{"0":5}}',
    }
    with pytest.raises(KafkaOptionError, match="greater than its endingOffsets"):
        parse_source_options(options)
    options["endingOffsets"] = '{"t":{"0":10}}'
    with pytest.raises(KafkaOptionError, match="Invalid value for option 'assign'"):
        parse_source_options(options)


def test_a_sink_refuses_serializers_before_asking_for_bootstrap_servers_as_sparks_producer_params_do():
    with pytest.raises(KafkaOptionError, match="key.serializer"):
        parse_sink_options({"kafka.key.serializer": "org.apache.kafka.common.serialization.StringSerializer"})
