"""Fixtures of the Spark tests: one local[2] SparkSession and one embedded 2-broker cluster per test session.

Topics get unique names per test (``new_topic``); the pushdown setting is toggled per test with
``pushdown(spark, on)``. The pure tests of this directory use none of these.
"""

from __future__ import annotations

import contextlib
import itertools
import re

import pytest

_names = itertools.count()


@pytest.fixture(scope="session")
def kafka():
    """An ``EmbeddedCluster`` of two brokers (ZooKeeper included) for the whole test session."""
    from broker.embedded_cluster import EmbeddedCluster

    with EmbeddedCluster(brokers=2) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def bootstrap(kafka) -> str:
    return kafka.bootstrap_servers


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the test session (local[2], pushdown off unless a test turns it on)."""
    from spark_kafkalog.datasource import kafkalog_session

    session = kafkalog_session(
        "local[2]",
        "kafkalog-tests",
        conf={
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.python.worker.reuse": "true",
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def new_topic(bootstrap, request):
    """``new_topic(partitions=3, **config) -> name``: a fresh topic (replication factor 1)."""
    from spark_kafkalog.client import AdminClient, NewTopic

    base = re.sub(r"[^a-zA-Z0-9]+", "-", request.node.name)[:80].strip("-")

    def create(partitions: int = 3, **config: str) -> str:
        name = f"{base}-{next(_names)}"
        with AdminClient(bootstrap) as admin:
            admin.create_topics([NewTopic(name, partitions, 1, {k.replace("_", "."): v for k, v in config.items()})])
        return name

    return create


@contextlib.contextmanager
def pushdown(spark, on: bool):
    """Run the block with ``spark.sql.python.filterPushdown.enabled`` set to ``on``."""
    key = "spark.sql.python.filterPushdown.enabled"
    before = spark.conf.get(key)
    spark.conf.set(key, "true" if on else "false")
    try:
        yield
    finally:
        spark.conf.set(key, before)


def reader(spark, bootstrap: str, **options):
    """``spark.read.format("kafkalog")`` with the bootstrap servers and ``options`` (``__`` stands for ``.``)."""
    r = spark.read.format("kafkalog").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        r = r.option(key.replace("__", "."), str(value))
    return r
