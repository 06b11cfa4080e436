"""The authorization matrix from outside: kafka-python, confluent-kafka and kafkalog's client against a broker with
Kafka's AclAuthorizer semantics (issue 27's proof; ``reference/security.md`` §6 and §12 item 7, the cases of Kafka's
``AuthorizerIntegrationTest``).

One broker per module on the session's ZooKeeper (its own chroot), a SASL_PLAINTEXT listener with PLAIN users and
a PLAINTEXT inter-broker listener; ``authorizer.class.name=kafka.security.authorizer.AclAuthorizer``,
``super.users=User:admin;User:ANONYMOUS`` (ANONYMOUS: the PLAINTEXT inter-broker listener's principal, as a Kafka
deployment with a PLAINTEXT replication listener must list it). Every test takes fresh users from the JAAS pool
(``u0``, ``u1``, ...) and fresh topic, group and transactional-id names, so the ACLs one test grants never reach
another's. ACLs are created over the wire by the admin with kafkalog's ``AdminClient.create_acls`` and waited for
in the broker's ACL cache. Each client operation yields Kafka's error code (``acl_clients``): 0 when it worked.
"""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.security.acl import AclOperation, AclPermissionType, PatternType, ResourceType
from tests.waiting import wait_until

from .acl_clients import DRIVERS, NO_ANSWER, AclSetter, SaslWire, User, acl, metadata_topic_error
from .api_cases import AUTHORIZATION_FAILURES, CASES, Names, build, error_codes
from .secured_broker import PASSWORDS, Secured, secured_config, start_secured, unique

pytestmark = pytest.mark.integration

O = AclOperation  # noqa: E741 (the tables read as Kafka's ACL lines)
R = ResourceType
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31
UNKNOWN_TOPIC_OR_PARTITION = 3
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
CLIENTS = sorted(DRIVERS)


@pytest.fixture(scope="module")
def secured(zookeeper, tmp_path_factory):
    s = start_secured(tmp_path_factory, f"{zookeeper.connect_string}/authz-{uuid.uuid4().hex[:8]}")
    try:
        yield s
    finally:
        s.broker.stop()


# -- produce ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_produce_needs_write_and_describe_alone_is_not_enough(secured, client):
    topic = secured.topic()
    user = secured.user()
    driver = DRIVERS[client](user)
    assert driver.produce(topic) == TOPIC_AUTHORIZATION_FAILED
    secured.acls.add(acl(user.principal, O.DESCRIBE, R.TOPIC, topic))
    assert driver.produce(topic) == TOPIC_AUTHORIZATION_FAILED
    secured.acls.add(acl(user.principal, O.WRITE, R.TOPIC, topic))
    assert driver.produce(topic) == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_wildcard_topic_acl_grants_every_topic(secured, client):
    user = secured.user()
    topic = secured.topic()
    secured.acls.add(acl(user.principal, O.WRITE, R.TOPIC, "*"))
    assert DRIVERS[client](user).produce(topic) == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_prefixed_acl_grants_the_names_it_prefixes_only(secured, client):
    prefix = unique("tx")
    granted = secured.topic(prefix)  # "<prefix>-<hex>"
    shorter = secured.topic(prefix[:-1])  # the prefix minus its last character: not covered
    user = secured.user()
    secured.acls.add(acl(user.principal, O.WRITE, R.TOPIC, prefix, pattern=PatternType.PREFIXED))
    driver = DRIVERS[client](user)
    assert driver.produce(granted) == 0
    assert driver.produce(shorter) == TOPIC_AUTHORIZATION_FAILED


@pytest.mark.parametrize("client", CLIENTS)
def test_super_user_needs_no_acl(secured, client):
    driver = DRIVERS[client](secured.admin)
    topic = secured.topic()
    assert driver.produce(topic) == 0
    assert driver.consume_group(topic, unique("g")) == 0
    created = unique("super")
    assert driver.create_topic(created) == 0
    assert created in driver.list_topics()
    assert driver.delete_topic(created) == 0
    assert driver.transactional_produce(unique("tid"), topic) == 0


def test_allow_everyone_if_no_acl_found_is_off_by_default(secured):
    """A topic nobody has an ACL on is denied: the module's broker runs with the default (false)."""
    topic = secured.topic()
    with SaslWire(secured.user()) as wire:
        assert metadata_topic_error(wire, topic) == TOPIC_AUTHORIZATION_FAILED


# -- consume with a group ----------------------------------------------------------------------------------------


# What a group member subscribed to a topic it may not read sees: Metadata answers TOPIC_AUTHORIZATION_FAILED for
# the topic (test_unauthorized_topic_answers_...). Java's consumer and librdkafka raise it; kafka-python 3.0
# leaves the topic out of the assignment and polls nothing, without an error (its own behaviour, the broker's
# answer is the same); kafkalog's consumer must raise it (issue 27: one clear, non-retried error).
SUBSCRIBED_TO_AN_UNAUTHORIZED_TOPIC = {
    "confluent-kafka": TOPIC_AUTHORIZATION_FAILED,
    "kafka-python": NO_ANSWER,
    "kafkalog": TOPIC_AUTHORIZATION_FAILED,
}


@pytest.mark.parametrize("client", CLIENTS)
def test_consume_with_a_group_needs_read_on_the_group_and_the_topic(secured, client):
    topic, other = secured.topic(), secured.topic()
    user = secured.user()
    driver = DRIVERS[client](user)
    secured.acls.add(acl(user.principal, O.READ, R.TOPIC, topic))
    assert driver.consume_group(topic, unique("g-none")) == GROUP_AUTHORIZATION_FAILED
    group = unique("g")
    secured.acls.add(acl(user.principal, O.READ, R.GROUP, group))
    assert driver.consume_group(other, group) == SUBSCRIBED_TO_AN_UNAUTHORIZED_TOPIC[client]
    assert driver.consume_group(topic, group) == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_deny_read_beats_allow_all_but_leaves_describe(secured, client):
    topic = secured.topic()
    user = secured.user()
    group = unique("g")
    secured.acls.add(
        acl(user.principal, O.ALL, R.TOPIC, topic),
        acl(user.principal, O.READ, R.TOPIC, topic, permission=DENY),
        acl(user.principal, O.READ, R.GROUP, group),
    )
    driver = DRIVERS[client](user)
    assert driver.consume_group(topic, group) == TOPIC_AUTHORIZATION_FAILED
    assert topic in driver.list_topics()
    assert driver.produce(topic) == 0  # All still grants Write


# -- metadata ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_all_topics_metadata_hides_topics_the_user_may_not_describe(secured, client):
    shown, hidden, read_only = secured.topic(), secured.topic(), secured.topic()
    user = secured.user()
    secured.acls.add(
        acl(user.principal, O.DESCRIBE, R.TOPIC, shown),
        acl(user.principal, O.READ, R.TOPIC, read_only),  # Read implies Describe
    )
    listed = DRIVERS[client](user).list_topics()
    assert shown in listed and read_only in listed
    assert hidden not in listed


@pytest.mark.parametrize("client", CLIENTS)
def test_wildcard_principal_acl_applies_to_every_user(secured, client):
    topic = secured.topic()
    secured.acls.add(acl("User:*", O.DESCRIBE, R.TOPIC, topic))
    assert topic in DRIVERS[client](secured.user()).list_topics()


def test_unauthorized_topic_answers_topic_authorization_failed_whether_or_not_it_exists(secured):
    """Nothing leaks: a missing topic the user may not describe answers 29, not 3; with Describe it answers 3."""
    existing = secured.topic()
    missing = unique("missing")
    user = secured.user()
    with SaslWire(user) as wire:
        assert metadata_topic_error(wire, existing) == TOPIC_AUTHORIZATION_FAILED
        assert metadata_topic_error(wire, missing) == TOPIC_AUTHORIZATION_FAILED
        assert metadata_topic_error(wire, missing, allow_auto_create=True) == TOPIC_AUTHORIZATION_FAILED
    secured.acls.add(acl(user.principal, O.DESCRIBE, R.TOPIC, missing))
    with SaslWire(user) as wire:
        assert metadata_topic_error(wire, missing) == UNKNOWN_TOPIC_OR_PARTITION
        # auto-creation needs Create on the cluster or the topic as well
        assert metadata_topic_error(wire, missing, allow_auto_create=True) == TOPIC_AUTHORIZATION_FAILED
    assert missing not in secured_topics(secured)


def test_produce_to_an_unauthorized_missing_topic_answers_29_and_creates_nothing(secured):
    missing = unique("missing")
    user = secured.user()
    assert DRIVERS["kafkalog"](user).produce(missing) == TOPIC_AUTHORIZATION_FAILED
    assert missing not in secured_topics(secured)


def test_read_implies_describe_and_deny_is_not_implied(secured):
    read, denied = secured.topic(), secured.topic()
    user = secured.user()
    secured.acls.add(
        acl(user.principal, O.READ, R.TOPIC, read),
        acl(user.principal, O.DESCRIBE, R.TOPIC, denied),
        acl(user.principal, O.READ, R.TOPIC, denied, permission=DENY),
    )
    with SaslWire(user) as wire:
        assert metadata_topic_error(wire, read) == 0
        assert metadata_topic_error(wire, denied) == 0  # Deny Read does not deny Describe


def secured_topics(secured: Secured) -> list[str]:
    from spark_kafkalog.client import AdminClient

    with AdminClient(secured.admin.kafka_names()) as admin:
        return admin.list_topics()


# -- hosts -------------------------------------------------------------------------------------------------------


def test_host_specific_acl_applies_from_that_address_only(secured):
    """Clients connect from 127.0.0.1 unless bound elsewhere; 127.0.0.2 is the loopback too."""
    topic = secured.topic()
    user = secured.user()
    secured.acls.add(acl(user.principal, O.DESCRIBE, R.TOPIC, topic, host="127.0.0.2"))
    with SaslWire(user) as wire:
        assert metadata_topic_error(wire, topic) == TOPIC_AUTHORIZATION_FAILED
    with SaslWire(user, source_host="127.0.0.2") as wire:
        assert metadata_topic_error(wire, topic) == 0
    secured.acls.add(acl(user.principal, O.DESCRIBE, R.TOPIC, topic, host="127.0.0.2", permission=DENY))
    with SaslWire(user, source_host="127.0.0.2") as wire:
        assert metadata_topic_error(wire, topic) == TOPIC_AUTHORIZATION_FAILED


@pytest.mark.parametrize("client", CLIENTS)
def test_acl_for_the_clients_address_grants(secured, client):
    topic = secured.topic()
    user = secured.user()
    secured.acls.add(acl(user.principal, O.WRITE, R.TOPIC, topic, host="127.0.0.2"))
    driver = DRIVERS[client](user)
    assert driver.produce(topic) == TOPIC_AUTHORIZATION_FAILED
    secured.acls.add(acl(user.principal, O.WRITE, R.TOPIC, topic, host="127.0.0.1"))
    assert driver.produce(topic) == 0


# -- topics ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_create_topic_needs_create_on_the_topic_or_the_cluster(secured, client):
    user, cluster_user = secured.user(), secured.user()
    name = unique("created")
    assert DRIVERS[client](user).create_topic(name) == TOPIC_AUTHORIZATION_FAILED
    assert name not in secured_topics(secured)
    secured.acls.add(acl(user.principal, O.CREATE, R.TOPIC, name))
    assert DRIVERS[client](user).create_topic(name) == 0
    secured.acls.add(acl(cluster_user.principal, O.CREATE, R.CLUSTER, "kafka-cluster"))
    other = unique("created")
    assert DRIVERS[client](cluster_user).create_topic(other) == 0
    assert {name, other} <= set(secured_topics(secured))


@pytest.mark.parametrize("client", CLIENTS)
def test_delete_topic_needs_delete(secured, client):
    topic = secured.topic()
    user = secured.user()
    driver = DRIVERS[client](user)
    assert driver.delete_topic(topic) == TOPIC_AUTHORIZATION_FAILED
    assert topic in secured_topics(secured)
    secured.acls.add(acl(user.principal, O.DELETE, R.TOPIC, topic))
    assert driver.delete_topic(topic) == 0
    wait_until(lambda: topic not in secured_topics(secured), 15, f"{topic} to be deleted")


# -- transactions and idempotence ---------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_transactional_producer_needs_write_on_the_transactional_id_and_the_topic(secured, client):
    topic = secured.topic()
    user = secured.user()
    driver = DRIVERS[client](user)
    tid = unique("tid")
    secured.acls.add(acl(user.principal, O.WRITE, R.TOPIC, topic))
    assert driver.transactional_produce(tid, topic) == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    other = secured.topic()
    secured.acls.add(acl(user.principal, O.WRITE, R.TRANSACTIONAL_ID, tid))
    assert driver.transactional_produce(tid, other) == TOPIC_AUTHORIZATION_FAILED
    assert driver.transactional_produce(tid, topic) == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_idempotent_producer_with_write_on_one_topic_needs_no_idempotent_write(secured, client):
    """KIP-679: InitProducerId for an idempotent producer passes with IdempotentWrite on the cluster OR Write on
    any topic."""
    topic = secured.topic()
    user = secured.user()
    secured.acls.add(acl(user.principal, O.WRITE, R.TOPIC, topic))
    assert DRIVERS[client](user).idempotent_produce(topic) == 0


def init_producer_id_error(user: User) -> int:
    body = API_BY_KEY[ApiKey.INIT_PRODUCER_ID].Request(transactional_id=None, transaction_timeout_ms=60000)
    with SaslWire(user) as wire:
        return wire.call(ApiKey.INIT_PRODUCER_ID, 2, body).error_code


def test_idempotent_init_producer_id_without_any_write_is_a_cluster_authorization_failure(secured):
    describe_only, idempotent_write, prefixed_write = secured.user(), secured.user(), secured.user()
    topic = secured.topic()
    secured.acls.add(
        acl(describe_only.principal, O.DESCRIBE, R.TOPIC, topic),
        acl(idempotent_write.principal, O.IDEMPOTENT_WRITE, R.CLUSTER, "kafka-cluster"),
        acl(prefixed_write.principal, O.WRITE, R.TOPIC, unique("p"), pattern=PatternType.PREFIXED),
    )
    assert init_producer_id_error(describe_only) == CLUSTER_AUTHORIZATION_FAILED
    assert init_producer_id_error(idempotent_write) == 0
    assert init_producer_id_error(prefixed_write) == 0


def test_write_on_every_topic_denied_by_a_wildcard_deny_fails_init_producer_id(secured):
    """authorizeByResourceType: a literal ``*`` DENY dominates every ALLOW of that type."""
    user = secured.user()
    secured.acls.add(
        acl(user.principal, O.WRITE, R.TOPIC, secured.topic()),
        acl(user.principal, O.WRITE, R.TOPIC, "*", permission=DENY),
    )
    assert init_producer_id_error(user) == CLUSTER_AUTHORIZATION_FAILED


# -- allow.everyone.if.no.acl.found=true ---------------------------------------------------------------------------


def test_allow_everyone_if_no_acl_found(tmp_path_factory):
    """With the setting on, a resource without any ACL is open to all; one ACL on it closes it to the others."""
    s = start_secured(
        tmp_path_factory, f"memory:authz-everyone-{uuid.uuid4().hex[:8]}", **{"allow.everyone.if.no.acl.found": "true"}
    )
    try:
        open_topic, guarded = s.topic(), s.topic()
        user, owner = s.user(), s.user()
        s.acls.add(acl(owner.principal, O.WRITE, R.TOPIC, guarded))
        driver = DRIVERS["kafkalog"](user)
        assert driver.produce(open_topic) == 0
        assert driver.produce(guarded) == TOPIC_AUTHORIZATION_FAILED
        assert DRIVERS["kafkalog"](owner).produce(guarded) == 0
    finally:
        s.broker.stop()


# -- two brokers ---------------------------------------------------------------------------------------------------


def test_acl_changes_reach_the_other_broker_within_seconds(zookeeper, tmp_path):
    """An ACL created through broker 1 is enforced by broker 2 (a separate process) within seconds, and so is its
    deletion: both go through ZooKeeper's change notices."""
    from broker.embedded_cluster import EmbeddedCluster

    config = secured_config(listeners="SASL_PLAINTEXT://{host}:{port},INTERNAL://{host}:{port1}")
    admin_conf = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret";',
    }
    cluster = EmbeddedCluster(
        2,
        data_dir=tmp_path,
        zookeeper_connect=f"{zookeeper.connect_string}/authz2-{uuid.uuid4().hex[:8]}",
        broker_config=config,
        client_config=admin_conf,
    )
    cluster.start()
    try:
        b1, b2 = (f"{cluster.host}:{cluster.ports[b]}" for b in cluster.broker_ids)
        admin_on_1 = User(b1, "admin", PASSWORDS["admin"])
        from spark_kafkalog.client import AdminClient, NewTopic

        topic = unique("two")
        with AdminClient(admin_on_1.kafka_names()) as admin:
            admin.create_topics([NewTopic(topic, 2, 2)])
        user_on_2 = User(b2, "alice", PASSWORDS["alice"])

        def error_on_2() -> int:
            with SaslWire(user_on_2) as wire:
                return metadata_topic_error(wire, topic)

        assert error_on_2() == TOPIC_AUTHORIZATION_FAILED
        setter = AclSetter(admin_on_1)  # broker 2 is another process: poll its answers instead of its cache
        binding = acl("User:alice", O.DESCRIBE, R.TOPIC, topic)
        setter.add(binding)
        wait_until(lambda: error_on_2() == 0, 10, "broker 2 to allow alice after the ACL was created on broker 1")
        setter.remove(binding)
        wait_until(
            lambda: error_on_2() == TOPIC_AUTHORIZATION_FAILED,
            10,
            "broker 2 to deny alice after the ACL was deleted on broker 1",
        )
    finally:
        cluster.stop()


# -- every API over the wire ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_each_api_answers_kafkas_error_without_the_acl_and_passes_with_it(secured, case):
    """``api_cases``: the request as a user without ACLs answers the API's authorization error (and nothing
    else but 0); once the listed ACLs exist, no authorization error is left in the answer."""
    user = secured.user()
    names = Names(
        topic=secured.topic(),
        group=unique("g"),
        tid=unique("tid"),
        new_topic=unique("new"),
        principal=user.principal,
    )
    with SaslWire(user) as wire:
        denied = error_codes(wire.call(case.api_key, case.version, case.request(names)))
    assert case.denied in denied and set(denied) <= {0, case.denied}, denied
    secured.acls.add(*case.grants(names))
    with SaslWire(user) as wire:
        allowed = error_codes(wire.call(case.api_key, case.version, case.request(names)))
    assert not set(allowed) & AUTHORIZATION_FAILURES, allowed


def test_create_topics_hides_the_new_topics_configs_without_describe_configs(secured):
    """CreateTopics v5+: created (error 0) with Create alone, but TopicConfigErrorCode 29 and no configs."""
    user = secured.user()
    name = unique("new")
    secured.acls.add(acl(user.principal, O.CREATE, R.TOPIC, name))
    body = build(ApiKey.CREATE_TOPICS, 5, {"topics": [{"name": name, "num_partitions": 1, "replication_factor": 1}]})
    with SaslWire(user) as wire:
        (created,) = wire.call(ApiKey.CREATE_TOPICS, 5, body).topics
    assert (created.error_code, created.topic_config_error_code, created.configs) == (0, TOPIC_AUTHORIZATION_FAILED, [])
    assert name in secured_topics(secured)


def test_list_groups_shows_only_the_groups_the_user_may_describe(secured):
    """ListGroups without Describe on the cluster silently leaves out the groups the user may not describe."""
    from spark_kafkalog.client import AdminClient, TopicPartition
    from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata

    topic = secured.topic()
    shown, hidden = unique("g"), unique("g")
    with AdminClient(secured.admin.kafka_names()) as admin:
        for group in (shown, hidden):
            admin.alter_group_offsets(group, {TopicPartition(topic, 0): OffsetAndMetadata(1, "")})
    user = secured.user()
    secured.acls.add(acl(user.principal, O.DESCRIBE, R.GROUP, shown))
    with SaslWire(user) as wire:
        listed = {g.group_id for g in wire.call(ApiKey.LIST_GROUPS, 4, states_filter=[]).groups}
    assert shown in listed and hidden not in listed
    secured.acls.add(acl(user.principal, O.DESCRIBE, R.CLUSTER, "kafka-cluster"))
    with SaslWire(user) as wire:
        listed = {g.group_id for g in wire.call(ApiKey.LIST_GROUPS, 4, states_filter=[]).groups}
    assert {shown, hidden} <= listed


def bits(*operations: AclOperation) -> int:
    return sum(1 << int(op) for op in operations)


def test_authorized_operations_bitfields(secured):
    """Metadata v8+, DescribeGroups v3+ and DescribeCluster answer the operations the user may do as bits
    ``1 << operation code`` over the resource type's supported operations: Read brings Describe along."""
    from spark_kafkalog.client import AdminClient, TopicPartition
    from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata

    topic, group = secured.topic(), unique("g")
    with AdminClient(secured.admin.kafka_names()) as admin:  # the group exists, its coordinator (this broker) is up
        admin.alter_group_offsets(group, {TopicPartition(topic, 0): OffsetAndMetadata(1, "")})
    user = secured.user()
    secured.acls.add(
        acl(user.principal, O.READ, R.TOPIC, topic),
        acl(user.principal, O.READ, R.GROUP, group),
        acl(user.principal, O.DESCRIBE, R.CLUSTER, "kafka-cluster"),
    )
    M = API_BY_KEY[ApiKey.METADATA].Request
    with SaslWire(user) as wire:
        md = wire.call(
            ApiKey.METADATA,
            9,
            M(
                topics=[M.MetadataRequestTopic(name=topic)],
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=True,
            ),
        )
        groups = wire.call(ApiKey.DESCRIBE_GROUPS, 5, groups=[group], include_authorized_operations=True).groups
        cluster = wire.call(ApiKey.DESCRIBE_CLUSTER, 0, include_cluster_authorized_operations=True)
    assert md.topics[0].topic_authorized_operations == bits(O.READ, O.DESCRIBE)
    assert groups[0].authorized_operations == bits(O.READ, O.DESCRIBE)
    assert cluster.cluster_authorized_operations == bits(O.DESCRIBE)
    secured.acls.add(acl(user.principal, O.ALL, R.TOPIC, topic))
    with SaslWire(user) as wire:
        md = wire.call(
            ApiKey.METADATA,
            9,
            M(
                topics=[M.MetadataRequestTopic(name=topic)],
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=True,
            ),
        )
    everything = (O.READ, O.WRITE, O.CREATE, O.DELETE, O.ALTER, O.DESCRIBE, O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS)
    assert md.topics[0].topic_authorized_operations == bits(*everything)
