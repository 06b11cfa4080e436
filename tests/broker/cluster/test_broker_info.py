"""``/brokers/ids/<id>``: version 5 as Kafka's ZkData writes it, real listener names, older versions read."""

import json

import pytest

from broker.cluster.registry import BrokerInfo


def test_version_5_carries_listener_names_and_protocols_and_round_trips():
    info = BrokerInfo(
        3,
        "client.example",
        9093,
        rack="r2",
        endpoints=("CLIENT://client.example:9093", "INTERNAL://10.0.0.3:9092", "REPL://10.0.0.3:9094"),
        listener_security_protocol_map={"CLIENT": "SASL_SSL", "INTERNAL": "PLAINTEXT", "REPL": "SSL"},
    )
    node = json.loads(info.to_json())
    assert node["version"] == 5 and node["features"] == {} and node["jmx_port"] == -1 and node["rack"] == "r2"
    assert node["endpoints"] == ["CLIENT://client.example:9093", "INTERNAL://10.0.0.3:9092", "REPL://10.0.0.3:9094"]
    assert node["listener_security_protocol_map"] == {"CLIENT": "SASL_SSL", "INTERNAL": "PLAINTEXT", "REPL": "SSL"}
    assert (node["host"], node["port"]) == ("10.0.0.3", 9092)  # the first PLAINTEXT endpoint
    back = BrokerInfo.from_json(3, info.to_json())
    assert back.endpoints == info.endpoints and back.rack == "r2"
    assert back.listener_security_protocol_map == info.listener_security_protocol_map
    assert back.listener_endpoint("REPL") == ("10.0.0.3", 9094)
    assert back.listener_endpoint("OTHER") is None


def test_without_a_plaintext_listener_the_top_level_address_is_null_and_reading_uses_the_first_endpoint():
    info = BrokerInfo(
        1,
        "h",
        9093,
        endpoints=("SSL://h:9093", "SASL_SSL://h:9094"),
        listener_security_protocol_map={"SSL": "SSL", "SASL_SSL": "SASL_SSL"},
    )
    node = json.loads(info.to_json())
    assert node["host"] is None and node["port"] == -1
    back = BrokerInfo.from_json(1, info.to_json())
    assert (back.host, back.port) == ("h", 9093)
    assert back.listener_endpoint("SASL_SSL") == ("h", 9094)


def test_kafka_3_9_registration_is_read():
    kafka = (
        '{"features":{},"listener_security_protocol_map":{"INTERNAL":"PLAINTEXT","EXTERNAL":"SASL_SSL"},'
        '"endpoints":["INTERNAL://kafka-1:29092","EXTERNAL://localhost:9092"],"jmx_port":-1,"port":29092,'
        '"host":"kafka-1","version":5,"timestamp":"1733400000000"}'
    )
    info = BrokerInfo.from_json(1, kafka)
    assert (info.host, info.port) == ("kafka-1", 29092)
    assert info.listener_names == ("INTERNAL", "EXTERNAL")
    assert info.listener_security_protocol_map == {"INTERNAL": "PLAINTEXT", "EXTERNAL": "SASL_SSL"}
    assert info.endpoint("EXTERNAL") == ("localhost", 9092)


@pytest.mark.parametrize(
    "text,endpoints,protocols",
    [
        ('{"jmx_port":-1,"host":"h","port":9092,"version":1}', ("PLAINTEXT://h:9092",), {"PLAINTEXT": "PLAINTEXT"}),
        (
            '{"version":2,"host":"h","port":9092,"jmx_port":-1,"timestamp":"1","endpoints":["PLAINTEXT://h:9092","SSL://h:9093"]}',
            ("PLAINTEXT://h:9092", "SSL://h:9093"),
            {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"},
        ),
        (
            '{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://[::1]:9092"],'
            '"jmx_port":-1,"host":null,"timestamp":"1","port":-1,"version":4}',
            ("PLAINTEXT://[::1]:9092",),
            {"PLAINTEXT": "PLAINTEXT"},
        ),
    ],
)
def test_older_versions_are_read(text, endpoints, protocols):
    info = BrokerInfo.from_json(7, text)
    assert info.endpoints == endpoints and info.listener_security_protocol_map == protocols
    assert info.endpoint("PLAINTEXT")[1] == 9092


def test_a_broker_info_stays_hashable():
    assert len({BrokerInfo(1, "h", 1), BrokerInfo(1, "h", 1)}) == 1
