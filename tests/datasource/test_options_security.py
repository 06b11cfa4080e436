"""Security options of the data source: every ``kafka.*`` TLS/SASL option reaches the client, nothing secret is shown."""

from __future__ import annotations

import pytest

from spark_kafkalog.datasource.options import KafkaOptionError, parse_sink_options, parse_source_options
from spark_kafkalog.datasource.scan import client_config

SECRET = "jaas-pa55word"
SECURITY_OPTIONS = {
    "kafka.security.protocol": "SASL_SSL",
    "kafka.sasl.mechanism": "SCRAM-SHA-512",
    "kafka.sasl.jaas.config": (
        f'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="{SECRET}";'
    ),
    "kafka.ssl.truststore.location": "/etc/kafka/truststore.jks",
    "kafka.ssl.truststore.password": SECRET,
    "kafka.ssl.keystore.location": "/etc/kafka/keystore.jks",
    "kafka.ssl.keystore.password": SECRET,
    "kafka.ssl.key.password": SECRET,
    "kafka.ssl.endpoint.identification.algorithm": "",
}


@pytest.mark.parametrize("direction", ["read", "write"])
def test_every_security_option_reaches_the_client_config(direction):
    options = {"kafka.bootstrap.servers": "b1:9093", **SECURITY_OPTIONS}
    if direction == "read":
        parsed = parse_source_options({**options, "subscribe": "orders"})
    else:
        parsed = parse_sink_options({**options, "topic": "orders"})
    config = client_config(parsed)
    assert config.security_protocol == "SASL_SSL"
    kept = config.security_config()
    for key, value in SECURITY_OPTIONS.items():
        name = key[len("kafka.") :]
        if name != "security.protocol":
            assert kept[name] == value, name
    assert SECRET not in repr(parsed)
    assert SECRET not in repr(config)


def test_a_refused_jaas_line_is_a_planning_error_without_the_password():
    options = {
        "kafka.bootstrap.servers": "b1:9093",
        "subscribe": "orders",
        **SECURITY_OPTIONS,
        "kafka.sasl.jaas.config": f'com.sun.security.auth.module.JndiLoginModule required password="{SECRET}";',
    }
    with pytest.raises(KafkaOptionError) as caught:
        parse_source_options(options)
    assert "JndiLoginModule" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_an_unknown_ssl_option_names_the_spark_option():
    with pytest.raises(KafkaOptionError, match=r"'kafka.ssl.trustore.location'"):
        parse_source_options(
            {"kafka.bootstrap.servers": "b1:9093", "subscribe": "orders", "kafka.ssl.trustore.location": "/x"}
        )
