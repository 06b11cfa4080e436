"""kafkalog's Producer, Consumer and AdminClient against a secured Apache Kafka 3.9.1 broker (ZooKeeper mode).

One broker for the module with four listeners: PLAINTEXT (readiness check, inter-broker), SASL_SSL with
SCRAM-SHA-512 (user added through ZooKeeper with Kafka's ConfigCommand, JKS keystore made by keytool),
SASL_PLAINTEXT with PLAIN (JAAS ``user_alice``; sessions of 2 s, so KIP-368 re-authentication happens
during the test) and SSL requiring a client certificate.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest

from spark_kafkalog.client import AdminClient, Consumer, KafkaClient, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.errors import KafkaAuthenticationError, KafkaSslError
from tests.security.certs import PASSWORD, TlsMaterial, build_tls_material

from . import test_datasource_on_kafka as datasource_compat
from .kafka_broker import KafkaBroker
from .peers import KAFKA_39

pytestmark = pytest.mark.compat

spark = datasource_compat.spark  # its SparkSession fixture (the same driver classpath for the whole run)

USER = "alice"
USER_PASSWORD = "alice-secret"
WRONG_PASSWORD = "not-" + USER_PASSWORD
REAUTH_MS = 2000
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> TlsMaterial:
    return build_tls_material(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def secured_kafka(zookeeper, tls, tmp_path_factory):
    connect = f"{zookeeper.connect_string}/kafka39-sec-{uuid.uuid4().hex[:8]}"
    broker = KafkaBroker(
        KAFKA_39,
        tmp_path_factory.mktemp("kafka-3.9.1-secured"),
        zookeeper_connect=connect,
        listeners={"SASL_SSL": "SASL_SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SSL": "SSL"},
        extra={
            "ssl.keystore.type": "JKS",
            "ssl.keystore.location": str(tls.broker_keystore_jks),
            "ssl.keystore.password": PASSWORD,
            "ssl.key.password": PASSWORD,
            "ssl.truststore.type": "JKS",
            "ssl.truststore.location": str(tls.truststore_jks),
            "ssl.truststore.password": PASSWORD,
            "listener.name.ssl.ssl.client.auth": "required",
            "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": f"{SCRAM} required;",
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": (f'{PLAIN} required user_{USER}="{USER_PASSWORD}";'),
            "listener.name.sasl_plaintext.plain.connections.max.reauth.ms": str(REAUTH_MS),
        },
    )
    broker.start()
    try:
        broker.run_class(
            "kafka.admin.ConfigCommand",
            "--zookeeper",
            connect,
            "--alter",
            "--add-config",
            f"SCRAM-SHA-512=[iterations=4096,password={USER_PASSWORD}]",
            "--entity-type",
            "users",
            "--entity-name",
            USER,
        )
        yield broker
    finally:
        broker.stop()


def scram_ssl(broker: KafkaBroker, tls: TlsMaterial, password: str = USER_PASSWORD) -> dict[str, str]:
    """Java/Spark names: a JKS truststore and a ScramLoginModule JAAS line."""
    return {
        "bootstrap.servers": broker.listener_bootstrap("SASL_SSL"),
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": f'{SCRAM} required username="{USER}" password="{password}";',
        "ssl.truststore.location": str(tls.truststore_jks),
        "ssl.truststore.password": PASSWORD,
    }


def plain(broker: KafkaBroker, password: str = USER_PASSWORD) -> dict[str, str]:
    """librdkafka names: sasl.mechanisms, sasl.username, sasl.password."""
    return {
        "bootstrap.servers": broker.listener_bootstrap("SASL_PLAINTEXT"),
        "security.protocol": "sasl_plaintext",
        "sasl.mechanisms": "PLAIN",
        "sasl.username": USER,
        "sasl.password": password,
    }


def mtls(broker: KafkaBroker, tls: TlsMaterial, *, certificate: bool = True) -> dict[str, str]:
    """librdkafka names: a PEM CA, and the client certificate and key as PEM files."""
    config = {
        "bootstrap.servers": broker.listener_bootstrap("SSL"),
        "security.protocol": "SSL",
        "ssl.ca.location": str(tls.ca_pem),
    }
    if certificate:
        config |= {"ssl.certificate.location": str(tls.client_chain_pem), "ssl.key.location": str(tls.client_key_pem)}
    return config


def wait_for_scram_user(config: dict[str, str], deadline_s: float = 30.0) -> None:
    """The SCRAM credential reaches the broker through a ZooKeeper change notification: log in until it works."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            with KafkaClient(config, default_api_timeout_ms=5000) as client:
                client.refresh_metadata_once(None)
            return
        except KafkaAuthenticationError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def round_trip(config: dict[str, str], n: int = 50) -> None:
    """Create a topic (admin), produce ``n`` records, consume them back in a group (subscribe + commit)."""
    topic = f"sec-{uuid.uuid4().hex[:10]}"
    with AdminClient(config) as admin:
        admin.create_topics([NewTopic(topic, 2, 1)])
        assert topic in admin.list_topics()
    with Producer(config, linger_ms=5, acks="all") as producer:
        futures = [producer.send(topic, b"value-%d" % i, key=b"key-%d" % i) for i in range(n)]
        producer.flush(60)
        for future in futures:
            future.result(30)
    group = f"g-{uuid.uuid4().hex[:8]}"
    with Consumer(config, group_id=group, auto_offset_reset="earliest", fetch_max_wait_ms=100) as consumer:
        consumer.subscribe([topic])
        records: list = []
        deadline = time.monotonic() + 60
        while len(records) < n and time.monotonic() < deadline:
            records.extend(consumer.poll(500))
        consumer.commit()
    assert sorted(r.value for r in records) == sorted(b"value-%d" % i for i in range(n))
    with AdminClient(config) as admin:
        committed = admin.list_group_offsets(group)
        assert sum(meta.offset for meta in committed.values()) == n


def test_sasl_ssl_scram_sha_512_with_a_jks_truststore(secured_kafka, tls):
    config = scram_ssl(secured_kafka, tls)
    wait_for_scram_user(config)
    round_trip(config)


def test_sasl_plaintext_plain_with_librdkafka_names(secured_kafka):
    round_trip(plain(secured_kafka))


def test_ssl_with_a_client_certificate(secured_kafka, tls):
    round_trip(mtls(secured_kafka, tls))


def test_ssl_without_the_required_client_certificate_fails_without_retrying(secured_kafka, tls):
    started = time.monotonic()
    with pytest.raises(KafkaSslError) as caught:
        with KafkaClient(mtls(secured_kafka, tls, certificate=False), default_api_timeout_ms=30000) as client:
            client.refresh_metadata_once(None)
    assert time.monotonic() - started < 10
    assert secured_kafka.listener_bootstrap("SSL") in str(caught.value)


@pytest.mark.parametrize(("which", "idempotent"), [("SCRAM-SHA-512", True), ("PLAIN", True), ("PLAIN", False)])
def test_a_wrong_password_fails_fast_with_an_authentication_error(secured_kafka, tls, which, idempotent):
    if which == "PLAIN":
        config = plain(secured_kafka, WRONG_PASSWORD)
    else:
        wait_for_scram_user(scram_ssl(secured_kafka, tls))
        config = scram_ssl(secured_kafka, tls, WRONG_PASSWORD)
    started = time.monotonic()
    with pytest.raises(KafkaAuthenticationError) as caught:
        with Producer(
            config, max_block_ms=30000, enable_idempotence=idempotent, acks="all" if idempotent else "1"
        ) as producer:
            producer.send("any-topic", b"x").result(30)
    elapsed = time.monotonic() - started
    error = caught.value
    assert elapsed < 10, f"took {elapsed:.1f} s: authentication failures must not be retried"
    assert error.retriable is False
    assert error.error_code == 58
    assert which in str(error)
    assert config["bootstrap.servers"] in str(error)
    assert WRONG_PASSWORD not in str(error) and USER_PASSWORD not in str(error)


def test_sessions_are_reauthenticated_on_the_live_connection(secured_kafka):
    """connections.max.reauth.ms=2000 on the PLAIN listener: keep using one connection for 3 lifetimes."""
    topic = f"reauth-{uuid.uuid4().hex[:8]}"
    with AdminClient(plain(secured_kafka)) as admin:
        admin.create_topics([NewTopic(topic, 1, 1)])
    with KafkaClient(plain(secured_kafka)) as client:
        client.refresh_metadata_once([topic])
        conn = client._pool.live()[0]
        assert conn.protocol.session_lifetime_ms == REAUTH_MS
        deadline = time.monotonic() + 3 * REAUTH_MS / 1000
        rounds = 0
        while time.monotonic() < deadline:
            client.refresh_metadata_once([topic])
            rounds += 1
            time.sleep(0.1)
        assert client._pool.live()[0] is conn and not conn.closed  # never dropped by the broker
        assert conn.protocol.reauthentications >= 2
        assert rounds > 10
    # a producer keeps producing across re-authentications
    with Producer(plain(secured_kafka), linger_ms=0) as producer:
        end = time.monotonic() + 2.5 * REAUTH_MS / 1000
        sent = 0
        while time.monotonic() < end:
            producer.send(topic, b"r-%d" % sent).result(30)
            sent += 1
    with Consumer(plain(secured_kafka), auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        records: list = []
        deadline = time.monotonic() + 30
        while len(records) < sent and time.monotonic() < deadline:
            records.extend(consumer.poll(500))
    assert [r.value for r in records] == [b"r-%d" % i for i in range(sent)]


def test_cli_tools_take_command_config_for_a_secured_cluster(secured_kafka, tls, tmp_path):
    """``kafkalog topics/produce/consume --command-config client.properties`` over SASL_SSL (Kafka's flag)."""
    config = scram_ssl(secured_kafka, tls)
    wait_for_scram_user(config)
    bootstrap = config.pop("bootstrap.servers")
    properties = tmp_path / "client.properties"
    properties.write_text("".join(f"{key}={value}\n" for key, value in config.items()))
    topic = f"cli-{uuid.uuid4().hex[:8]}"
    cli = [sys.executable, "-m", "broker.cli"]
    common = ["--bootstrap-server", bootstrap, "--command-config", str(properties)]

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([*cli, *args], input=stdin, capture_output=True, text=True, timeout=90)

    created = run("topics", "create", "--topic", topic, "--partitions", "1", *common)
    assert created.returncode == 0, created.stderr
    assert topic in run("topics", "list", *common).stdout.split()
    produced = run("produce", "--topic", topic, *common, stdin="one\ntwo\n")
    assert produced.returncode == 0, produced.stderr
    consumed = run("consume", "--topic", topic, "--from-beginning", "--max-messages", "2", *common)
    assert consumed.stdout.split() == ["one", "two"], consumed.stderr
    # without the file, the SASL_SSL listener cannot be used; with a wrong password, one clear line
    wrong = tmp_path / "wrong.properties"
    wrong.write_text(properties.read_text().replace(USER_PASSWORD, WRONG_PASSWORD))
    failed = run("topics", "list", "--bootstrap-server", bootstrap, "--command-config", str(wrong))
    assert failed.returncode != 0
    assert "SASL_AUTHENTICATION_FAILED" in failed.stderr and "SCRAM-SHA-512" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert WRONG_PASSWORD not in failed.stderr + failed.stdout


def spark_options(config: dict[str, str]) -> dict[str, str]:
    """Client settings as Spark's Kafka options (``kafka.`` prefixed)."""
    return {f"kafka.{key}": value for key, value in config.items()}


def test_spark_batch_and_stream_read_and_write_over_sasl_ssl(spark, secured_kafka, tls, tmp_path):
    """format("kafkalog") with kafka.security.protocol=SASL_SSL, SCRAM-SHA-512 and a JKS truststore."""
    config = scram_ssl(secured_kafka, tls)
    wait_for_scram_user(config)
    options = spark_options(config)
    source, sink = f"spark-in-{uuid.uuid4().hex[:8]}", f"spark-out-{uuid.uuid4().hex[:8]}"
    with AdminClient(config) as admin:
        admin.create_topics([NewTopic(source, 2, 1), NewTopic(sink, 2, 1)])
    # batch write
    df = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(30)], "key string, value string")
    df.write.format("kafkalog").options(**options).option("topic", source).mode("append").save()
    # batch read
    frame = spark.read.format("kafkalog").options(**options).option("subscribe", source).load()
    rows = frame.selectExpr("CAST(value AS STRING) AS v").collect()
    assert sorted(r.v for r in rows) == sorted(f"v{i}" for i in range(30))
    plans = frame._jdf.queryExecution().toString()  # parsed, analyzed, optimized and physical plans
    assert USER_PASSWORD not in plans and PASSWORD not in plans
    # stream read -> stream write, AvailableNow
    query = (
        spark.readStream.format("kafkalog")
        .options(**options)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "value")
        .writeStream.format("kafkalog")
        .options(**options)
        .option("topic", sink)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(180), "the AvailableNow query did not finish"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()
    with Consumer(config, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(sink, p) for p in range(2)])
        records: list = []
        deadline = time.monotonic() + 30
        while len(records) < 30 and time.monotonic() < deadline:
            records.extend(consumer.poll(500))
    assert sorted(r.value for r in records) == sorted(b"v%d" % i for i in range(30))


def test_spark_authentication_failure_is_one_line_naming_broker_and_mechanism(spark, secured_kafka, tls):
    config = scram_ssl(secured_kafka, tls, WRONG_PASSWORD)
    wait_for_scram_user(scram_ssl(secured_kafka, tls))
    started = time.monotonic()
    with pytest.raises(Exception) as caught:
        spark.read.format("kafkalog").options(**spark_options(config)).option("subscribe", "any").load().collect()
    assert time.monotonic() - started < 60
    text = str(caught.value)
    line = next(line for line in text.splitlines() if "SASL_AUTHENTICATION_FAILED" in line)
    assert "SCRAM-SHA-512" in line and config["bootstrap.servers"] in line
    assert WRONG_PASSWORD not in text


def test_asyncio_connections_authenticate_and_reauthenticate(secured_kafka, tls):
    """``AsyncKafkaConnection.open(security=...)`` (the broker's inter-broker path): SASL_SSL and a re-auth."""
    import asyncio

    from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
    from spark_kafkalog.client.network.security import ClientSecurity
    from spark_kafkalog.protocol import API_BY_KEY

    metadata = API_BY_KEY[3]
    scram = scram_ssl(secured_kafka, tls)
    wait_for_scram_user(scram)

    async def main() -> None:
        conn = await AsyncKafkaConnection.open(
            "localhost", secured_kafka.listener_port("SASL_SSL"), security=ClientSecurity.from_config(scram)
        )
        try:
            response = await conn.request(3, metadata.Request(topics=None), timeout=10)
            assert [b.port for b in response.brokers] == [secured_kafka.listener_port("SASL_SSL")]
        finally:
            await conn.close()
        conn = await AsyncKafkaConnection.open(
            "127.0.0.1",
            secured_kafka.listener_port("SASL_PLAINTEXT"),
            security=ClientSecurity.from_config(plain(secured_kafka)),
        )
        try:
            deadline = asyncio.get_running_loop().time() + 2.5 * REAUTH_MS / 1000
            while asyncio.get_running_loop().time() < deadline:
                await conn.request(3, metadata.Request(topics=None), timeout=10)
                await asyncio.sleep(0.1)
            assert conn.protocol.reauthentications >= 1 and not conn.closed
        finally:
            await conn.close()

    asyncio.run(main())


def test_a_mechanism_the_listener_does_not_enable_lists_the_enabled_ones(secured_kafka):
    """SCRAM-SHA-256 on the PLAIN-only listener: UNSUPPORTED_SASL_MECHANISM (33) naming PLAIN, not retried."""
    config = {
        **plain(secured_kafka),
        "sasl.mechanisms": "SCRAM-SHA-256",
        "sasl.jaas.config": f'{SCRAM} required username="{USER}" password="{USER_PASSWORD}";',
    }
    started = time.monotonic()
    with pytest.raises(KafkaAuthenticationError) as caught:
        with KafkaClient(config) as client:
            client.refresh_metadata(None)
    assert time.monotonic() - started < 10
    assert caught.value.error_code == 33
    assert caught.value.enabled_mechanisms == ("PLAIN",)
    assert "SCRAM-SHA-256" in str(caught.value) and "it enables PLAIN" in str(caught.value)
