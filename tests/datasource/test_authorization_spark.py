"""``format("kafkalog")`` through Spark (local[2]) against a broker that authorizes (SASL PLAIN users, Kafka's
AclAuthorizer semantics): a batch read of a topic the user may not READ and a batch write to a topic it may not
WRITE fail within seconds, with the client's message naming the principal, the topic and the operation and the
``kafkalog acls`` command that grants it; granted, the same read and write work.

The broker is the authorization tests' (``tests/integration/security/secured_broker``) on the in-process registry;
ACLs go into its ACL cache directly. The SparkSession is the session one of tests/datasource/conftest.py.
"""

from __future__ import annotations

import time
import uuid

import pytest

from spark_kafkalog.security.acl import AclOperation, ResourceType
from tests.integration.security.acl_clients import acl
from tests.integration.security.secured_broker import start_secured

pytestmark = pytest.mark.integration

AT_ONCE_S = 60.0  # Spark's own overhead (job, task, Python worker) included; a retried error takes far longer


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    s = start_secured(tmp_path_factory, f"memory:authz-spark-{uuid.uuid4().hex[:8]}")
    try:
        yield s
    finally:
        s.broker.stop()


def grant(secured, binding, granted) -> None:
    granted.setdefault(binding.pattern, []).append(binding.entry)
    secured.broker.broker.authorizer.update_resource(binding.pattern, granted[binding.pattern])


def options_of(user) -> dict[str, str]:
    return {f"kafka.{k}": v for k, v in user.kafka_names().items()}


def failure_text(run) -> str:
    started = time.monotonic()
    with pytest.raises(Exception) as caught:  # noqa: PT011 - Spark wraps the Python worker's error in its own
        run()
    assert time.monotonic() - started < AT_ONCE_S, "the authorization error was retried instead of raised"
    return str(caught.value)


def test_batch_read_and_write_without_the_acls_fail_naming_principal_topic_and_operation(spark, secured):
    topic = secured.topic("spark-acl", records=3)
    user = secured.user()
    granted: dict = {}
    grant(secured, acl(user.principal, AclOperation.DESCRIBE, ResourceType.TOPIC, topic), granted)
    options = options_of(user)

    def read() -> list:
        df = spark.read.format("kafkalog").options(**options).option("subscribe", topic).load()
        return [bytes(r.value) for r in df.select("value").collect()]

    def write() -> None:
        df = spark.createDataFrame([("k", "spark")], "key string, value string")
        df.write.format("kafkalog").options(**options).option("topic", topic).mode("append").save()

    text = failure_text(read)  # planning passes (Describe), the task's Fetch is refused
    assert f"Not authorized: principal {user.principal} may not READ topic '{topic}'" in text
    grant_read = f"--add --allow-principal {user.principal} --operation Read --topic {topic}"
    assert f"kafkalog acls --bootstrap-server {user.bootstrap} {grant_read}" in text
    assert user.password not in text
    text = failure_text(write)  # the sink's idempotent producer: IdempotentWrite, or Write on some topic (KIP-679)
    assert f"Not authorized: principal {user.principal} may not IDEMPOTENT_WRITE the cluster" in text
    assert f"--operation Write --topic {topic}" not in text and "--operation Write --topic <name>" in text
    assert user.password not in text

    grant(secured, acl(user.principal, AclOperation.READ, ResourceType.TOPIC, topic), granted)
    grant(secured, acl(user.principal, AclOperation.WRITE, ResourceType.TOPIC, topic), granted)
    write()
    assert sorted(read()) == [b"r0", b"r1", b"r2", b"spark"]
