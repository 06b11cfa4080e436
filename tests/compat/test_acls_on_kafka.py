"""``kafkalog acls`` and kafkalog's AdminClient as clients of Apache Kafka's own ACL APIs: on a Kafka 3.9.1 broker
with its AclAuthorizer (ZooKeeper mode; PLAINTEXT's User:ANONYMOUS a super user), kafkalog adds, lists (literal,
prefixed, match) and removes ACLs, and Kafka's kafka-acls sees the same blocks; an empty resource name is refused by
Kafka with INVALID_REQUEST for that binding only; on Kafka 3.9 and 4.4 without an authorizer every ACL call fails
with SECURITY_DISABLED."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.client.admin import AdminClient, AdminOperationError
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

from .kafka_broker import KafkaBroker
from .peers import KAFKA_39
from .test_acls_on_kafkalog import blocks, kafka_acls, kafkalog_acls, layouts, name

pytestmark = pytest.mark.compat


@pytest.fixture(scope="module")
def kafka_with_acls(zookeeper, tmp_path_factory):
    broker = KafkaBroker(
        KAFKA_39,
        tmp_path_factory.mktemp("kafka39-acls"),
        zookeeper_connect=f"{zookeeper.connect_string}/kafka39-acls-{uuid.uuid4().hex[:8]}",
        extra={"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "User:ANONYMOUS"},
    )
    broker.start()
    yield broker
    broker.stop()


def test_kafkalog_acls_on_kafka_matches_kafka_acls(kafka_with_acls):
    bootstrap = kafka_with_acls.bootstrap_servers
    topic, group = name("orders"), name("billing")
    kafkalog_acls(
        bootstrap, "--add", "--allow-principal", "User:alice", "--consumer", "--topic", topic, "--group", group
    )
    kafkalog_acls(
        bootstrap, "--add", "--deny-principal", "User:mallory", "--operation", "Write", "--topic", topic[:8],
        "--resource-pattern-type", "prefixed",
    )  # fmt: skip
    for args in (
        ("--topic", topic, "--group", group),
        ("--topic", topic, "--resource-pattern-type", "match"),
        ("--topic", topic[:8], "--resource-pattern-type", "any"),
    ):
        ours, theirs = kafkalog_acls(bootstrap, "--list", *args), kafka_acls(KAFKA_39, bootstrap, "--list", *args)
        assert ours and blocks(ours) == blocks(theirs) and layouts(ours) == layouts(theirs)
    match = blocks(kafkalog_acls(bootstrap, "--list", "--topic", topic, "--resource-pattern-type", "match"))
    assert len(match) == 2  # the literal topic and the prefixed deny
    kafkalog_acls(bootstrap, "--remove", "--force", "--topic", topic, "--group", group)
    kafkalog_acls(bootstrap, "--remove", "--force", "--topic", topic[:8], "--resource-pattern-type", "prefixed")
    assert kafka_acls(KAFKA_39, bootstrap, "--list", "--topic", topic, "--resource-pattern-type", "match") == ""


def test_kafka_refuses_an_empty_name_for_that_binding_only(kafka_with_acls):
    good = AclBinding(
        ResourcePattern(ResourceType.GROUP, name("g")),
        AccessControlEntry("User:a", "*", AclOperation.READ, AclPermissionType.ALLOW),
    )
    bad = AclBinding(ResourcePattern(ResourceType.TOPIC, ""), good.entry)
    with AdminClient(kafka_with_acls.bootstrap_servers) as admin:
        with pytest.raises(AdminOperationError) as e:
            admin.create_acls([good, bad])
        assert list(e.value.errors) == [bad] and e.value.errors[bad].error_code is ErrorCode.INVALID_REQUEST
        exact = ResourcePatternFilter(good.pattern.resource_type, good.pattern.name, good.pattern.pattern_type)
        assert admin.delete_acls([AclBindingFilter(exact)]) == [good]


def test_security_disabled_on_kafka_without_an_authorizer(kafka):
    binding = AclBinding(
        ResourcePattern(ResourceType.TOPIC, "t"),
        AccessControlEntry("User:a", "*", AclOperation.READ, AclPermissionType.ALLOW),
    )
    with AdminClient(kafka.bootstrap_servers) as admin:
        with pytest.raises(KafkaClientError) as described:
            admin.describe_acls()
        with pytest.raises(AdminOperationError) as created:
            admin.create_acls([binding])
        with pytest.raises(AdminOperationError) as deleted:
            admin.delete_acls([AclBindingFilter()])
    for error in (described.value, created.value, deleted.value):
        assert error.error_code is ErrorCode.SECURITY_DISABLED
