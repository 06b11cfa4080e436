"""format("kafkalog") against a SASL_SSL Apache Kafka 3.9.1 broker with PEM trust (file and inline).

The JKS truststore case, the AvailableNow stream and a wrong password are in test_security_on_kafka.py; this module
reuses its broker set-up (``secured_kafka``: SCRAM-SHA-512 user added with Kafka's ConfigCommand, a keytool-made JKS
keystore) and adds the no-JKS ways Spark users bring trust: ``kafka.ssl.truststore.type=PEM`` with a file, and the
CA's PEM text in ``kafka.ssl.truststore.certificates``. The broker is this module's own instance of the fixture.
"""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.client import AdminClient, NewTopic
from tests.security.certs import PASSWORD, TlsMaterial

from .kafka_broker import KafkaBroker
from .test_security_on_kafka import (  # noqa: F401 - fixtures
    USER_PASSWORD,
    scram_ssl,
    secured_kafka,
    spark,
    spark_options,
    tls,
    wait_for_scram_user,
)

pytestmark = pytest.mark.compat


def pem_options(broker: KafkaBroker, m: TlsMaterial, trust: str) -> dict[str, str]:
    options = spark_options(scram_ssl(broker, m))
    del options["kafka.ssl.truststore.location"], options["kafka.ssl.truststore.password"]
    options["kafka.ssl.truststore.type"] = "PEM"
    if trust == "pem-file":
        options["kafka.ssl.truststore.location"] = str(m.truststore_pem)
    else:
        options["kafka.ssl.truststore.certificates"] = m.ca_pem.read_text()
    return options


@pytest.mark.parametrize("trust", ["pem-file", "pem-inline"])
def test_spark_batch_write_and_read_with_pem_trust(spark, secured_kafka, tls, trust, capsys):  # noqa: F811
    wait_for_scram_user(scram_ssl(secured_kafka, tls))
    options = pem_options(secured_kafka, tls, trust)
    topic = f"spark-pem-{uuid.uuid4().hex[:8]}"
    with AdminClient(scram_ssl(secured_kafka, tls)) as admin:
        admin.create_topics([NewTopic(topic, 2, 1)])
    df = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(25)], "key string, value string")
    df.write.format("kafkalog").options(**options).option("topic", topic).mode("append").save()
    read = spark.read.format("kafkalog").options(**options).option("subscribe", topic).load()
    rows = read.selectExpr("CAST(value AS STRING) AS v", "partition").collect()
    assert sorted(r.v for r in rows) == sorted(f"v{i}" for i in range(25))
    assert {r.partition for r in rows} == {0, 1}
    capsys.readouterr()
    read.explain(mode="extended")
    plan = capsys.readouterr().out
    assert plan.strip() and USER_PASSWORD not in plan and PASSWORD not in plan
