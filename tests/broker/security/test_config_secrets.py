"""Broker secrets stay out of DescribeConfigs: password-typed keys answer null, synonyms included, as Kafka."""

import uuid

from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY
from spark_kafkalog.protocol import ApiKey as K
from tests.broker.wire import Wire

SECRET_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="b" password="jaas-secret-1";'


def test_describe_configs_hides_passwords_and_jaas_in_values_and_synonyms(tmp_path):
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:secrets-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path,
        ssl_keystore_password="ks-secret-2",
        sasl_jaas_config=SECRET_JAAS,
    ).start()
    try:
        R = API_BY_KEY[K.DESCRIBE_CONFIGS].Request
        body = R(
            resources=[
                R.DescribeConfigsResource(
                    resource_type=4,
                    resource_name="0",
                    configuration_keys=["ssl.keystore.password", "sasl.jaas.config", "ssl.keystore.type"],
                )
            ],
            include_synonyms=True,
            include_documentation=False,
        )
        with Wire(broker.bootstrap_servers) as w:
            (result,) = w.call(K.DESCRIBE_CONFIGS, 4, body).results
        entries = {c.name: c for c in result.configs}
        for name in ("ssl.keystore.password", "sasl.jaas.config"):
            assert entries[name].is_sensitive and entries[name].value is None
            assert entries[name].synonyms and all(s.value is None for s in entries[name].synonyms)
        assert entries["ssl.keystore.type"].value == "JKS" and not entries["ssl.keystore.type"].is_sensitive
    finally:
        broker.stop()
