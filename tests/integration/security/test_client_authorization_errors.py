"""kafkalog's group consumer and transactional producer against a broker that authorizes (SASL PLAIN users, Kafka's
AclAuthorizer semantics): an authorization failure is raised at once (no retry until a timeout) as a typed
``AuthorizationError`` naming the principal, the resource and the operation, and the same call succeeds once the
ACL it names is granted.

One in-process broker for the module (``secured_broker``); ACLs are put into its ACL cache directly
(``AclAuthorizer.update_resource``), so these tests depend on the authorizer, not on the ACL APIs or storage.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest

from spark_kafkalog.client import (
    ClusterAuthorizationFailedError,
    Consumer,
    GroupAuthorizationFailedError,
    GroupMemberFatalError,
    Producer,
    TopicAuthorizationFailedError,
    TopicPartition,
    TransactionalIdAuthorizationFailedError,
)
from spark_kafkalog.client.errors import AuthorizationError
from spark_kafkalog.security.acl import AclBinding, AclOperation, PatternType, ResourcePattern, ResourceType

from .acl_clients import User, acl
from .secured_broker import Secured, start_secured, unique

pytestmark = pytest.mark.integration

O, R = AclOperation, ResourceType  # noqa: E741 (the grants read as Kafka ACL lines)
AT_ONCE_S = 5.0  # an authorization error must come well before any timeout of the calls below (20 s and more)


@pytest.fixture(scope="module")
def secured(zookeeper, tmp_path_factory):
    s = start_secured(tmp_path_factory, f"{zookeeper.connect_string}/authz-client-{uuid.uuid4().hex[:8]}")
    try:
        yield s
    finally:
        s.broker.stop()


class Grants:
    """Puts ACLs straight into the broker's ACL cache, keeping the entries already granted to each pattern."""

    def __init__(self, secured: Secured) -> None:
        assert secured.broker.broker is not None
        self.authorizer = secured.broker.broker.authorizer
        self.entries: dict[ResourcePattern, list] = {}

    def add(self, binding: AclBinding) -> None:
        entries = self.entries.setdefault(binding.pattern, [])
        entries.append(binding.entry)
        self.authorizer.update_resource(binding.pattern, entries)


@pytest.fixture(scope="module")
def grants(secured):
    return Grants(secured)


def raised_at_once(call: Callable[[], object], expected: type[AuthorizationError]) -> AuthorizationError:
    started = time.monotonic()
    with pytest.raises(expected) as caught:
        call()
    assert time.monotonic() - started < AT_ONCE_S, "the authorization error was retried instead of raised"
    error = caught.value
    assert error.retriable is False
    return error


def assert_names(error: AuthorizationError, user: User, operation: AclOperation, rtype: ResourceType, name: str):
    assert (error.principal, error.operation) == (user.principal, operation)
    assert error.resource == ResourcePattern(rtype, name, PatternType.LITERAL)
    text = str(error)
    assert f"principal {user.principal} may not {operation.name}" in text
    assert name in text and error.code.name in text
    flag = {R.TOPIC: "--topic", R.GROUP: "--group", R.TRANSACTIONAL_ID: "--transactional-id"}[rtype]
    assert (
        f"kafkalog acls --bootstrap-server {user.bootstrap} --add --allow-principal {user.principal} "
        f"--operation {operation.kafka_name} {flag} {name}" in text
    )


def test_group_consumer_without_group_acls_fails_at_once_naming_group_and_operation(secured, grants):
    topic = secured.topic(records=3)
    user = secured.user()
    group = unique("g")
    grants.add(acl(user.principal, O.READ, R.TOPIC, topic))

    def consume() -> list:
        settings = {**user.kafka_names(), "group.id": group, "auto.offset.reset": "earliest"}
        with Consumer(settings) as consumer:
            consumer.subscribe([topic])
            records: list = []
            deadline = time.monotonic() + 30
            while len(records) < 3 and time.monotonic() < deadline:
                records += consumer.poll(20_000)
            return records

    found = raised_at_once(consume, GroupAuthorizationFailedError)  # FindCoordinator: no Describe on the group
    assert_names(found, user, O.DESCRIBE, R.GROUP, group)

    grants.add(acl(user.principal, O.DESCRIBE, R.GROUP, group))
    joined = raised_at_once(consume, GroupAuthorizationFailedError)  # JoinGroup: Describe is not Read
    assert isinstance(joined, GroupMemberFatalError)  # what the consumer raised for fatal group errors before
    assert_names(joined, user, O.READ, R.GROUP, group)

    grants.add(acl(user.principal, O.READ, R.GROUP, group))
    assert [r.value for r in consume()] == [b"r0", b"r1", b"r2"]


def test_assigned_consumer_without_read_on_the_topic_fails_at_once(secured, grants):
    topic = secured.topic(records=1)
    user = secured.user()

    def consume() -> list:
        with Consumer({**user.kafka_names(), "auto.offset.reset": "earliest"}) as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            return consumer.poll(20_000)

    assert_names(raised_at_once(consume, TopicAuthorizationFailedError), user, O.DESCRIBE, R.TOPIC, topic)
    grants.add(acl(user.principal, O.DESCRIBE, R.TOPIC, topic))
    assert_names(raised_at_once(consume, TopicAuthorizationFailedError), user, O.READ, R.TOPIC, topic)
    grants.add(acl(user.principal, O.READ, R.TOPIC, topic))
    assert [r.value for r in consume()] == [b"r0"]


def test_transactional_producer_without_write_on_its_transactional_id_fails_init_at_once(secured, grants):
    topic = secured.topic(records=0)
    user = secured.user()
    txn_id = unique("tx")
    grants.add(acl(user.principal, O.WRITE, R.TOPIC, topic))

    def transact() -> None:
        with Producer({**user.kafka_names(), "transactional.id": txn_id}) as producer:
            producer.init_transactions(20)
            producer.begin_transaction()
            producer.send(topic, b"committed", partition=0)
            producer.commit_transaction(20)

    found = raised_at_once(transact, TransactionalIdAuthorizationFailedError)  # FindCoordinator: Describe
    assert_names(found, user, O.DESCRIBE, R.TRANSACTIONAL_ID, txn_id)
    grants.add(acl(user.principal, O.DESCRIBE, R.TRANSACTIONAL_ID, txn_id))
    init = raised_at_once(transact, TransactionalIdAuthorizationFailedError)  # InitProducerId: Write
    assert_names(init, user, O.WRITE, R.TRANSACTIONAL_ID, txn_id)
    grants.add(acl(user.principal, O.WRITE, R.TRANSACTIONAL_ID, txn_id))
    transact()


def test_idempotent_producer_without_any_write_acl_fails_naming_the_cluster(secured, grants):
    topic = secured.topic(records=0)
    user = secured.user()
    grants.add(acl(user.principal, O.DESCRIBE, R.TOPIC, topic))

    def produce() -> None:
        with Producer({**user.kafka_names(), "enable.idempotence": True}) as producer:
            producer.send(topic, b"x", partition=0).result(20)

    error = raised_at_once(produce, ClusterAuthorizationFailedError)
    assert (error.principal, error.operation) == (user.principal, O.IDEMPOTENT_WRITE)
    assert error.resource == ResourcePattern(R.CLUSTER, "kafka-cluster", PatternType.LITERAL)
    assert "--operation IdempotentWrite --cluster" in str(error)
    grants.add(acl(user.principal, O.WRITE, R.TOPIC, topic))  # KIP-679: Write on a topic is enough
    produce()


def test_group_consumer_of_a_topic_it_may_not_describe_fails_at_once_naming_the_topic(secured, grants):
    topic = secured.topic(records=1)
    user = secured.user()
    group = unique("g")
    grants.add(acl(user.principal, O.READ, R.GROUP, group))

    def consume() -> list:
        settings = {**user.kafka_names(), "group.id": group, "auto.offset.reset": "earliest"}
        with Consumer(settings) as consumer:
            consumer.subscribe([topic])
            return consumer.poll(20_000)

    assert_names(raised_at_once(consume, TopicAuthorizationFailedError), user, O.DESCRIBE, R.TOPIC, topic)


def test_offsets_sent_to_a_transaction_need_read_on_the_group(secured, grants):
    topic = secured.topic(records=1)
    user = secured.user()
    txn_id, group = unique("tx"), unique("g")
    grants.add(acl(user.principal, O.WRITE, R.TRANSACTIONAL_ID, txn_id))
    grants.add(acl(user.principal, O.WRITE, R.TOPIC, topic))
    grants.add(acl(user.principal, O.READ, R.TOPIC, topic))

    def transact() -> None:
        with Producer({**user.kafka_names(), "transactional.id": txn_id}) as producer:
            producer.init_transactions(20)
            producer.begin_transaction()
            producer.send(topic, b"x", partition=0)
            producer.send_offsets_to_transaction({TopicPartition(topic, 0): 1}, group, 20)
            producer.commit_transaction(20)

    # transactions v2 (the broker's default transaction.version 2) sends no AddOffsetsToTxn (READ): the first
    # request about the group is its FindCoordinator (DESCRIBE), refused first; READ implies DESCRIBE
    assert_names(raised_at_once(transact, GroupAuthorizationFailedError), user, O.DESCRIBE, R.GROUP, group)
    grants.add(acl(user.principal, O.READ, R.GROUP, group))
    transact()
