"""``format("kafkalog")`` through Spark (local[2]) over SASL_SSL with SCRAM-SHA-512, as Spark's Kafka users write it.

One in-process broker for the module with two listeners: SASL_SSL (SCRAM-SHA-512 only; the one Spark uses) and
PLAINTEXT ``INTERNAL`` (inter-broker, and the admin path of the test itself: topics and the SCRAM user are created
there with kafkalog's AdminClient). The options are Spark's Kafka connector spelling (``kafka.bootstrap.servers``,
``kafka.security.protocol``, ``kafka.sasl.mechanism``, ``kafka.sasl.jaas.config``, ``kafka.ssl.truststore.*``);
trust comes from a JKS truststore, a PEM file (``kafka.ssl.truststore.type=PEM``) or inline PEM
(``kafka.ssl.truststore.certificates``). The SparkSession is the session one of tests/datasource/conftest.py.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from typing import Any

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, NewTopic
from spark_kafkalog.client.admin import UserScramCredentialUpsertion
from tests.security.certs import PASSWORD, TlsMaterial
from tests.security.certs import tls_material as _tls_material

pytestmark = pytest.mark.integration

tls_material = pytest.fixture(scope="module")(_tls_material)

USER = "alice"
USER_PASSWORD = "alice-secret"
WRONG_PASSWORD = "not-alice-secret-42"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
N = 40


@pytest.fixture(scope="module")
def secured(tls_material: TlsMaterial, tmp_path_factory):
    """``(sasl_ssl bootstrap, internal bootstrap)`` of a broker whose SCRAM user ``alice`` can log in."""
    m = tls_material
    config: dict[str, Any] = {
        "listeners": "SASL_SSL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "ssl.keystore.location": str(m.broker_keystore_jks),
        "ssl.keystore.password": PASSWORD,
        "ssl.key.password": PASSWORD,
        "num.partitions": "1",
    }
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:spark-sec-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("spark-secured"),
        **config,
    ).start()
    try:
        assert broker.broker is not None and broker.broker.metadata_sync is not None
        ports = broker.broker.bound_ports
        internal = f"127.0.0.1:{ports['INTERNAL']}"
        with AdminClient(internal) as admin:
            admin.alter_user_scram_credentials([UserScramCredentialUpsertion(USER, "SCRAM-SHA-512", USER_PASSWORD)])
        cache = broker.broker.metadata_sync.scram_credentials
        deadline = time.monotonic() + 15
        while cache.lookup("SCRAM-SHA-512", USER) is None:
            assert time.monotonic() < deadline, "alice's SCRAM credential never reached the broker"
            time.sleep(0.05)
        yield f"localhost:{ports['SASL_SSL']}", internal
    finally:
        broker.stop()


def jaas(password: str) -> str:
    return f'{SCRAM} required username="{USER}" password="{password}";'


def spark_options(bootstrap: str, m: TlsMaterial, trust: str, password: str = USER_PASSWORD) -> dict[str, str]:
    """Spark's Kafka connector options; ``trust``: ``jks`` (store + password), ``pem-file`` or ``pem-inline``."""
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": jaas(password),
    }
    if trust == "jks":
        options |= {"kafka.ssl.truststore.location": str(m.truststore_jks), "kafka.ssl.truststore.password": PASSWORD}
    elif trust == "pem-file":
        options |= {"kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": str(m.truststore_pem)}
    else:
        assert trust == "pem-inline"
        options |= {"kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.certificates": m.ca_pem.read_text()}
    return options


def create_topic(internal: str, partitions: int = 2) -> str:
    name = f"spark-sec-{uuid.uuid4().hex[:10]}"
    with AdminClient(internal) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


def secrets_in(text: str) -> list[str]:
    return [s for s in (USER_PASSWORD, WRONG_PASSWORD, PASSWORD) if s in text]


@pytest.mark.parametrize("trust", ["jks", "pem-file", "pem-inline"])
def test_batch_write_then_read_over_sasl_ssl_scram_sha_512(spark, secured, tls_material, trust):
    bootstrap, internal = secured
    topic = create_topic(internal)
    options = spark_options(bootstrap, tls_material, trust)
    df = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(N)], "key string, value string")
    df.write.format("kafkalog").options(**options).option("topic", topic).mode("append").save()
    rows = (
        spark.read.format("kafkalog")
        .options(**options)
        .option("subscribe", topic)
        .load()
        .selectExpr("CAST(key AS STRING) AS k", "CAST(value AS STRING) AS v", "partition")
        .collect()
    )
    assert sorted((r.k, r.v) for r in rows) == sorted((f"k{i}", f"v{i}") for i in range(N))
    assert {r.partition for r in rows} == {0, 1}


def test_stream_read_to_stream_write_over_sasl_ssl_available_now(spark, secured, tls_material, tmp_path):
    """readStream (inline PEM trust) -> writeStream (JKS trust), AvailableNow: every record copied, clean stop."""
    bootstrap, internal = secured
    source, sink = create_topic(internal), create_topic(internal)
    jks, pem = (spark_options(bootstrap, tls_material, t) for t in ("jks", "pem-inline"))
    spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(N)], "key string, value string").write.format(
        "kafkalog"
    ).options(**jks).option("topic", source).mode("append").save()
    query = (
        spark.readStream.format("kafkalog")
        .options(**pem)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "15")
        .load()
        .selectExpr("key", "upper(CAST(value AS STRING)) AS value")
        .writeStream.format("kafkalog")
        .options(**jks)
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
    assert not query.isActive
    progress = query.recentProgress
    assert sum(p["numInputRows"] for p in progress) == N
    assert len([p for p in progress if p["numInputRows"]]) >= 3  # maxOffsetsPerTrigger=15: several batches
    progress_json = "\n".join(p.json for p in progress)
    assert "description" in progress_json  # each source's and the sink's description is in it
    assert secrets_in(progress_json) == []
    rows = spark.read.format("kafkalog").options(**pem).option("subscribe", sink).load().collect()
    assert sorted(bytes(r.value).decode() for r in rows) == sorted(f"V{i}" for i in range(N))


def test_stream_read_over_sasl_ssl_into_the_memory_sink(spark, secured, tls_material):
    bootstrap, internal = secured
    topic = create_topic(internal, 1)
    options = spark_options(bootstrap, tls_material, "pem-file")
    spark.createDataFrame([(None, f"m{i}") for i in range(N)], "key string, value string").write.format(
        "kafkalog"
    ).options(**options).option("topic", topic).mode("append").save()
    name = f"secured_{uuid.uuid4().hex[:8]}"
    query = (
        spark.readStream.format("kafkalog")
        .options(**options)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("CAST(value AS STRING) AS v", "offset")
        .writeStream.format("memory")
        .queryName(name)
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(180), "the AvailableNow query did not finish"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()
    rows = spark.sql(f"SELECT v, offset FROM {name} ORDER BY offset").collect()
    # every record once, at offsets 0..N-1 (the batch write's Spark partitions append in no fixed order)
    assert [r.offset for r in rows] == list(range(N))
    assert sorted(r.v for r in rows) == sorted(f"m{i}" for i in range(N))


def one_failure_line(text: str) -> str:
    lines = [line for line in text.splitlines() if "SASL_AUTHENTICATION_FAILED" in line]
    assert lines, f"no SASL_AUTHENTICATION_FAILED line in:\n{text}"
    return lines[0]


@pytest.mark.parametrize("direction", ["read", "write", "stream"])
def test_a_wrong_password_fails_the_job_quickly_with_one_line_naming_broker_and_mechanism(
    spark, secured, tls_material, tmp_path, direction
):
    bootstrap, internal = secured
    topic = create_topic(internal, 1)
    options = spark_options(bootstrap, tls_material, "jks", WRONG_PASSWORD)
    started = time.monotonic()
    with pytest.raises(Exception) as caught:  # noqa: B017 - Spark's wrapper class differs by path; the text is checked
        if direction == "read":
            spark.read.format("kafkalog").options(**options).option("subscribe", topic).load().collect()
        elif direction == "write":
            spark.createDataFrame([("k", "v")], "key string, value string").write.format("kafkalog").options(
                **options
            ).option("topic", topic).mode("append").save()
        else:
            query = (
                spark.readStream.format("kafkalog")
                .options(**options)
                .option("subscribe", topic)
                .load()
                .writeStream.format("memory")
                .queryName(f"wrong_{uuid.uuid4().hex[:8]}")
                .trigger(availableNow=True)
                .start()
            )
            try:
                query.awaitTermination(60)
            finally:
                query.stop()
            if query.exception() is not None:
                raise query.exception()
    elapsed = time.monotonic() - started
    assert elapsed < 60, f"took {elapsed:.1f} s: an authentication failure must not be retried"
    text = str(caught.value)
    line = one_failure_line(text)
    assert "SCRAM-SHA-512" in line and bootstrap in line, line
    assert secrets_in(text) == []


def explain(df, capsys, mode: str = "extended") -> str:
    capsys.readouterr()
    df.explain(mode=mode)
    return capsys.readouterr().out


def test_secrets_stay_out_of_plans_progress_and_spark_logs(spark, secured, tls_material, tmp_path, capsys):
    """Explain strings (batch and stream), the streaming progress, the reader's and writer's reprs and Spark's own
    log4j output of a failing job never show a password or the JAAS line's secret."""
    bootstrap, internal = secured
    topic = create_topic(internal, 1)
    options = spark_options(bootstrap, tls_material, "jks")
    batch = spark.read.format("kafkalog").options(**options).option("subscribe", topic).load()
    for mode in ("simple", "extended", "formatted", "cost"):
        text = explain(batch, capsys, mode)
        assert "kafkalog" in text.lower() or "BatchScan" in text or "PythonDataSource" in text, text
        assert secrets_in(text) == [], (mode, text)
    stream = spark.readStream.format("kafkalog").options(**options).option("subscribe", topic).load()
    text = explain(stream, capsys)
    assert secrets_in(text) == [], text

    from spark_kafkalog.datasource.source import KafkaLogDataSource

    source = KafkaLogDataSource({**options, "subscribe": topic})
    reader = source.reader(source.schema())
    writer = KafkaLogDataSource({**options, "topic": topic}).writer(source.schema(), False)
    for obj in (source, reader, writer):
        assert secrets_in(repr(obj)) == [] and secrets_in(str(obj)) == [], repr(obj)

    with spark_log_capture(spark) as log:
        with pytest.raises(Exception):  # noqa: B017 - only the logs are checked here
            bad = spark_options(bootstrap, tls_material, "jks", WRONG_PASSWORD)
            spark.createDataFrame([("k", "v")], "key string, value string").write.format("kafkalog").options(
                **bad
            ).option("topic", topic).mode("append").save()
    logged = log()
    assert "SASL_AUTHENTICATION_FAILED" in logged, logged[-2000:]  # the capture saw the failure
    assert secrets_in(logged) == []


class spark_log_capture:
    """A log4j2 WriterAppender on the root logger of the session's JVM for the block; call the result for the text."""

    def __init__(self, spark):
        self.jvm = spark.sparkContext._jvm

    def __enter__(self):
        jvm = self.jvm
        self.context = jvm.org.apache.logging.log4j.LogManager.getContext(False)
        self.writer = jvm.java.io.StringWriter()
        layout = jvm.org.apache.logging.log4j.core.layout.PatternLayout.createDefaultLayout()
        self.appender = jvm.org.apache.logging.log4j.core.appender.WriterAppender.createAppender(
            layout, None, self.writer, f"capture-{uuid.uuid4().hex[:6]}", False, True
        )
        self.appender.start()
        self.context.getConfiguration().getRootLogger().addAppender(self.appender, None, None)
        self.context.updateLoggers()
        return lambda: str(self.writer.toString())

    def __exit__(self, *exc):
        self.context.getConfiguration().getRootLogger().removeAppender(self.appender.getName())
        self.context.updateLoggers()
        self.appender.stop()
        return False


def python_worker_places(spark) -> tuple[str, str]:
    """``(cwd, SparkFiles root)`` as a Python worker of the session sees them."""

    def probe(_):
        import os

        from pyspark import SparkFiles

        yield os.getcwd(), SparkFiles.getRootDirectory()

    return spark.sparkContext.parallelize([0], 1).mapPartitions(probe).collect()[0]


def test_a_relative_store_path_is_read_from_the_python_workers_working_directory(spark, secured, tls_material):
    """A relative ``kafka.ssl.truststore.location`` resolves against each Python worker's working directory, the
    executor's (where ``--files`` puts its files on a cluster), on the driver's planning worker as on the tasks'."""
    bootstrap, internal = secured
    cwd, _root = python_worker_places(spark)
    relative = os.path.relpath(tls_material.truststore_jks, cwd)
    assert not os.path.isabs(relative)
    topic = create_topic(internal, 1)
    options = spark_options(bootstrap, tls_material, "jks") | {"kafka.ssl.truststore.location": relative}
    spark.createDataFrame([("k", "relative")], "key string, value string").write.format("kafkalog").options(
        **options
    ).option("topic", topic).mode("append").save()
    rows = spark.read.format("kafkalog").options(**options).option("subscribe", topic).load().collect()
    assert [bytes(r.value) for r in rows] == [b"relative"]


def test_in_local_mode_a_spark_files_name_is_not_in_the_workers_directory_and_fails_at_once(
    spark, secured, tls_material, tmp_path
):
    """``addFile``/``spark.files`` copies land in the driver's SparkFiles root, not in the working directory of a
    local-mode worker: the bare name fails at planning with one line naming the setting; the absolute
    ``SparkFiles.get`` path of the driver works (local mode only: that path exists on the driver's machine)."""
    from pyspark import SparkFiles

    bootstrap, internal = secured
    name = f"truststore-{uuid.uuid4().hex[:8]}.jks"
    shutil.copyfile(tls_material.truststore_jks, tmp_path / name)
    spark.sparkContext.addFile(str(tmp_path / name))
    cwd, root = python_worker_places(spark)
    assert os.path.realpath(cwd) != os.path.realpath(root) and os.path.exists(os.path.join(root, name))
    topic = create_topic(internal, 1)
    options = spark_options(bootstrap, tls_material, "jks") | {"kafka.ssl.truststore.location": name}
    started = time.monotonic()
    with pytest.raises(Exception) as caught:  # noqa: B017 - Spark's wrapper class; the text is checked
        spark.read.format("kafkalog").options(**options).option("subscribe", topic).load().collect()
    assert time.monotonic() - started < 60
    line = next(line for line in str(caught.value).splitlines() if "cannot read the file" in line)
    assert "ssl.truststore.location" in line and name in line, line
    assert secrets_in(str(caught.value)) == []

    options["kafka.ssl.truststore.location"] = SparkFiles.get(name)
    assert spark.read.format("kafkalog").options(**options).option("subscribe", topic).load().count() == 0


def test_an_untrusted_broker_certificate_fails_the_read_at_once_naming_the_broker(spark, secured, tls_material):
    """Inline PEM trust of another CA: the planning worker's handshake fails with KafkaSslError, not retried."""
    from spark_kafkalog.security.certificates import LocalCA

    bootstrap, internal = secured
    topic = create_topic(internal, 1)
    other_ca = LocalCA.create("some other CA")
    options = spark_options(bootstrap, tls_material, "pem-inline") | {
        "kafka.ssl.truststore.certificates": other_ca.certificate_pem.decode()
    }
    started = time.monotonic()
    with pytest.raises(Exception) as caught:  # noqa: B017 - Spark's wrapper class; the text is checked
        spark.read.format("kafkalog").options(**options).option("subscribe", topic).load().collect()
    assert time.monotonic() - started < 60
    line = next(line for line in str(caught.value).splitlines() if "errors.KafkaSslError:" in line)
    assert bootstrap.split(":")[1] in line and "certificate" in line, line
    assert secrets_in(str(caught.value)) == []
