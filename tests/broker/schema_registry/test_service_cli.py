"""How clusters started from Python and from ``kafkalog cluster up`` place their Schema Registries: ports picked,
recorded and reused, and the comma-joined URL Confluent's clients take."""

from __future__ import annotations

import socket

import pytest

from broker.cli import cluster as cli_cluster
from broker.embedded_cluster import EmbeddedCluster


def test_the_cluster_url_lists_every_brokers_registry_in_broker_order(tmp_path):
    cluster = EmbeddedCluster(
        3, data_dir=tmp_path, zookeeper_connect="127.0.0.1:1", schema_registry=True,
        schema_registry_ports={1: 18081, 2: 18082, 3: 18083}, broker_ports={1: 19092, 2: 19093, 3: 19094},
    )  # fmt: skip
    assert cluster.schema_registry_url == "http://127.0.0.1:18081,http://127.0.0.1:18082,http://127.0.0.1:18083"
    assert cluster._properties(2)["schema.registry.listeners"] == "http://127.0.0.1:18082"


def test_a_configured_listener_wins_and_a_wildcard_host_is_the_clusters_host(tmp_path):
    cluster = EmbeddedCluster(
        2, data_dir=tmp_path, zookeeper_connect="127.0.0.1:1", schema_registry=True,
        schema_registry_ports={1: 18081, 2: 18082},
        broker_configs={2: {"schema.registry.listeners": "https://0.0.0.0:{port1}"}},
    )  # fmt: skip
    url = cluster.schema_registry_url
    assert url is not None
    first, second = url.split(",")
    assert first == "http://127.0.0.1:18081"
    assert second == f"https://127.0.0.1:{cluster.extra_ports[2][1]}"


def test_without_schema_registry_there_is_no_url(tmp_path):
    assert EmbeddedCluster(1, data_dir=tmp_path, zookeeper_connect="127.0.0.1:1").schema_registry_url is None


def test_cluster_up_records_the_registry_ports_and_reuses_them(tmp_path):
    first = cli_cluster.choose_schema_registry_ports(tmp_path, 2, "127.0.0.1", avoid={8081})
    assert len(set(first.values())) == 2 and 8081 not in first.values()
    cli_cluster.write_ports(tmp_path, None, {1: 9092, 2: 9093}, schema_registry_ports=first)
    recorded = cli_cluster.read_ports(tmp_path)
    assert {b: recorded[f"broker.{b}.schema.registry.port"] for b in (1, 2)} == first
    assert cli_cluster.choose_schema_registry_ports(tmp_path, 2, "127.0.0.1") == first
    cli_cluster.write_ports(tmp_path, None, {1: 9092, 2: 9093})  # a run without registries keeps them recorded
    assert cli_cluster.choose_schema_registry_ports(tmp_path, 2, "127.0.0.1") == first


def test_a_recorded_registry_port_in_use_is_refused_naming_the_line(tmp_path, monkeypatch):
    monkeypatch.setattr(cli_cluster, "RECORDED_PORT_WAIT_S", 0.1)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        (tmp_path / "ports.properties").write_text(f"broker.1.schema.registry.port={port}\n")
        with pytest.raises(cli_cluster.PortError, match="broker.1.schema.registry.port"):
            cli_cluster.choose_schema_registry_ports(tmp_path, 1, "127.0.0.1")
