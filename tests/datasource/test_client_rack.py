"""``kafka.client.rack`` reaches the read tasks' client, which sends it as Fetch's ``rack_id`` (KIP-392), and is no
longer one of the Java keys accepted with a warning."""

from __future__ import annotations

import warnings

from spark_kafkalog.client.config import IGNORED_KEYS, ClientConfig
from spark_kafkalog.datasource.options import parse_source_options
from spark_kafkalog.datasource.scan import client_config


def test_the_source_passes_client_rack_to_its_read_tasks():
    options = parse_source_options(
        {"kafka.bootstrap.servers": "h:1", "subscribe": "t", "kafka.client.rack": "use1-az1"}
    )
    assert client_config(options).client_rack == "use1-az1"
    assert client_config(options, planning=True).client_rack == "use1-az1"


def test_client_rack_is_a_setting_not_an_ignored_key():
    assert "client.rack" not in IGNORED_KEYS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ClientConfig.from_kafka_properties({"client.rack": "b"}).client_rack == "b"
    assert ClientConfig.from_kafka_properties({}).client_rack == ""
