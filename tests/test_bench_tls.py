"""The pure parts of bench/tls_bench.py: listener and client settings for both brokers, the rotation of the
listeners, broker CPU per MB, the best of N rounds, the TLS / plaintext figures and the kernel TLS probe."""

from __future__ import annotations

import pytest

from bench.tls_bench import (
    LISTENERS,
    best_of,
    client_config,
    kafka_broker_config,
    kafka_listeners,
    kafkalog_broker_config,
    kernel_tls,
    listener_order,
    plain_jaas,
    tls_cost,
    with_cpu_per_mb,
)
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.security.jaas import parse_jaas_config, plain_users

STORES = ("/tls/broker.jks", "/tls/truststore.jks", "store-pw", "user-pw")


def test_kafkalog_broker_has_the_three_listeners_on_its_port_and_two_more():
    config = kafkalog_broker_config(*STORES)
    cluster = EmbeddedCluster(1, data_dir="/nonexistent", broker_config=config, zookeeper_connect="memory:x")
    cluster.ports[1] = 9000
    listeners = cluster._properties(1)["listeners"].split(",")
    assert [entry.split("://")[0] for entry in listeners] == ["PLAINTEXT", "SSL", "SASL_SSL"]
    assert listeners[0] == "PLAINTEXT://127.0.0.1:9000"
    ports = {int(entry.rsplit(":", 1)[1]) for entry in listeners}
    assert len(ports) == 3 and set(cluster.extra_ports[1].values()) == ports - {9000}
    assert config["listener.security.protocol.map"] == "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL"
    assert config["inter.broker.listener.name"] == "PLAINTEXT"
    assert config["sasl.enabled.mechanisms"] == "PLAIN"


@pytest.mark.parametrize("build", [kafkalog_broker_config, kafka_broker_config])
def test_both_brokers_get_the_same_stores_and_plain_login(build):
    config = build(*STORES)
    assert config["ssl.keystore.location"] == "/tls/broker.jks"
    assert config["ssl.truststore.location"] == "/tls/truststore.jks"
    assert config["ssl.keystore.password"] == config["ssl.key.password"] == "store-pw"
    jaas = parse_jaas_config(config["listener.name.sasl_ssl.plain.sasl.jaas.config"])
    assert jaas.options["user_bench"] == "user-pw"
    assert "ssl.client.auth" not in " ".join(config)  # server authentication only


def test_kafka_gets_the_secured_listeners_beside_its_own_plaintext():
    assert kafka_listeners() == {"SSL": "SSL", "SASL_SSL": "SASL_SSL"}
    assert kafka_broker_config(*STORES)["listener.name.sasl_ssl.sasl.enabled.mechanisms"] == "PLAIN"


def test_plain_jaas_line_is_read_back_by_the_jaas_parser():
    jaas = parse_jaas_config(plain_jaas("u", "p w"))
    assert jaas.module.endswith("PlainLoginModule")
    assert (jaas.username, jaas.password, plain_users(jaas)) == ("u", "p w", {"u": "p w"})


@pytest.mark.parametrize(
    ("listener", "expected"),
    [
        ("PLAINTEXT", {}),
        ("SSL", {"security.protocol": "SSL", "ssl.ca.location": "/ca.pem"}),
        (
            "SASL_SSL",
            {
                "security.protocol": "SASL_SSL",
                "ssl.ca.location": "/ca.pem",
                "sasl.mechanisms": "PLAIN",
                "sasl.username": "bench",
                "sasl.password": "pw",
            },
        ),
    ],
)
def test_client_config_per_listener(listener, expected):
    assert client_config(listener, "/ca.pem", "pw") == expected


def test_listener_order_rotates_so_each_listener_goes_first_once_in_three_rounds():
    orders = [listener_order(r) for r in range(3)]
    assert orders[0] == list(LISTENERS)
    assert {o[0] for o in orders} == set(LISTENERS)
    assert all(sorted(o) == sorted(LISTENERS) for o in orders)
    assert listener_order(3) == orders[0]


def _phase(mb_per_s: float, cpu: float, records: int = 1_000_000) -> dict:
    return {"records": records, "mb_per_s": mb_per_s, "broker_cpu_s": cpu}


def test_cpu_per_mb_counts_record_values_of_each_phase():
    case = with_cpu_per_mb({"produce": _phase(100, 4.096), "consume": _phase(50, 1.024, 500_000), "client_cpu_s": 3})
    assert case["produce"]["broker_cpu_s_per_mb"] == pytest.approx(4.096 / 1024)
    assert case["consume"]["broker_cpu_s_per_mb"] == pytest.approx(1.024 / 512)
    assert case["client_cpu_s"] == 3


def _round(system_figures: dict) -> dict:
    return {
        system: {listener: {"produce": _phase(*pc[0]), "consume": _phase(*pc[1])} for listener, pc in listeners.items()}
        for system, listeners in system_figures.items()
    }


def test_best_of_keeps_each_phases_fastest_round_with_its_cpu():
    rounds = [
        _round({"kafkalog": {"PLAINTEXT": ((100, 1.0), (80, 0.5))}}),
        _round({"kafkalog": {"PLAINTEXT": ((120, 2.0), (70, 0.1))}}),
    ]
    best = best_of(rounds)["kafkalog"]["PLAINTEXT"]
    assert (best["produce"]["mb_per_s"], best["produce"]["broker_cpu_s"], best["produce"]["round"]) == (120, 2.0, 2)
    assert (best["consume"]["mb_per_s"], best["consume"]["broker_cpu_s"], best["consume"]["round"]) == (80, 0.5, 1)


def test_tls_cost_is_each_secured_listener_against_plaintext_of_the_same_system():
    figures = {
        "kafkalog": {
            "PLAINTEXT": ((200, 2.0), (100, 1.0)),
            "SSL": ((150, 3.0), (50, 2.5)),
            "SASL_SSL": ((100, 4.0), (100, 1.0)),
        },
        "kafka": {
            "PLAINTEXT": ((100, 1.0), (100, 1.0)),
            "SSL": ((80, 1.5), (90, 1.2)),
            "SASL_SSL": ((60, 2.0), (100, 1.0)),
        },
    }
    results = {s: {n: with_cpu_per_mb(c) for n, c in ls.items()} for s, ls in _round(figures).items()}
    cost = tls_cost(results)
    assert set(cost) == {"kafkalog", "kafka"}
    assert set(cost["kafka"]) == {"SSL", "SASL_SSL"}
    assert cost["kafkalog"]["SSL"]["produce"] == {
        "mb_per_s_ratio": 0.75,
        "throughput_drop_pct": 25.0,
        "cpu_per_mb_ratio": 1.5,
    }
    assert cost["kafkalog"]["SSL"]["consume"] == {
        "mb_per_s_ratio": 0.5,
        "throughput_drop_pct": 50.0,
        "cpu_per_mb_ratio": 2.5,
    }
    assert cost["kafka"]["SASL_SSL"]["produce"] == {
        "mb_per_s_ratio": 0.6,
        "throughput_drop_pct": 40.0,
        "cpu_per_mb_ratio": 2.0,
    }
    assert cost["kafkalog"]["SASL_SSL"]["consume"]["throughput_drop_pct"] == 0.0


def test_tls_cost_without_plaintext_cpu_has_no_cpu_ratio():
    results = _round({"kafka": {"PLAINTEXT": ((100, 0.0), (100, 0.0)), "SSL": ((50, 1.0), (50, 1.0))}})
    results = {s: {n: with_cpu_per_mb(c) for n, c in ls.items()} for s, ls in results.items()}
    assert tls_cost(results)["kafka"]["SSL"]["produce"]["cpu_per_mb_ratio"] is None


@pytest.mark.parametrize(
    ("text", "ulps", "available"),
    [("mptcp\n", ["mptcp"], False), ("tls mptcp\n", ["tls", "mptcp"], True), (None, [], False), ("", [], False)],
)
def test_kernel_tls_is_the_tls_upper_layer_protocol(text, ulps, available):
    assert kernel_tls(text) == {"tcp_available_ulp": ulps, "ktls_available": available}
