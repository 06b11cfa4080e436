"""Client settings of the read and write tasks: the data source's defaults apply only to unset keys."""

from __future__ import annotations

from spark_kafkalog.datasource.options import parse_sink_options, parse_source_options
from spark_kafkalog.datasource.scan import client_config


def test_read_tasks_default_to_large_fetches_and_the_os_receive_buffer():
    config = client_config(parse_source_options({"kafka.bootstrap.servers": "h:1", "subscribe": "t"}))
    assert (config.max_partition_fetch_bytes, config.receive_buffer_bytes) == (8 * 1024 * 1024, -1)
    assert config.bootstrap_servers == ("h:1",)


def test_kafka_options_win_over_the_data_source_defaults():
    options = parse_source_options(
        {
            "kafka.bootstrap.servers": "h:1",
            "subscribe": "t",
            "kafka.max.partition.fetch.bytes": "1024",
            "kafka.receive.buffer.bytes": "65536",
            "kafka.client.id": "etl",
            "kafka.isolation.level": "read_committed",
        }
    )
    config = client_config(options)
    assert (config.max_partition_fetch_bytes, config.receive_buffer_bytes, config.client_id) == (1024, 65536, "etl")
    assert config.isolation_level == 1


def test_write_tasks_take_acks_and_compression_from_kafka_options():
    config = client_config(
        parse_sink_options({"kafka.bootstrap.servers": "h:1", "kafka.acks": "1", "kafka.compression.type": "zstd"})
    )
    assert config.acks == 1 and config.compression_type.name == "ZSTD"
    assert config.max_partition_fetch_bytes == 1024 * 1024  # read defaults do not leak into the producer


def test_planning_retries_offset_lookups_as_fetch_offset_options_say():
    options = parse_source_options(
        {
            "kafka.bootstrap.servers": "h:1",
            "subscribe": "t",
            "fetchOffset.numRetries": "5",
            "fetchOffset.retryIntervalMs": "20",
        }
    )
    config = client_config(options, planning=True)
    assert (config.retries, config.retry_backoff_ms, config.retry_backoff_max_ms) == (5, 20, 20)
    assert client_config(options).retries == 2147483647  # read tasks keep the client's own retry policy
    explicit = parse_source_options({"kafka.bootstrap.servers": "h:1", "subscribe": "t", "kafka.retries": "9"})
    assert client_config(explicit, planning=True).retries == 9
