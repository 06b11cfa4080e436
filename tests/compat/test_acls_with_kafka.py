"""ACLs shared with Apache Kafka 3.9 through ZooKeeper, both ways (issue 27's proof with the peers harness).

(a) ACLs kafkalog's AdminClient creates are Kafka's znodes with Kafka's JSON (``/kafka-acl/<Type>/<name>``,
    ``/kafka-acl-extended/prefixed/<Type>/<prefix>``), and Kafka 3.9's own ``kafka-acls --authorizer-properties
    zookeeper.connect=<zk>/<chroot> --list`` (``kafka.admin.AclCommand``, which reads them through Kafka's
    AclAuthorizer) lists them;
(b) ACLs Kafka 3.9's ``kafka-acls`` adds and removes through ZooKeeper are enforced by a running kafkalog broker on
    that chroot within seconds (its change notices);
(c) a Kafka 3.9 broker with ``AclAuthorizer`` started on the chroot and log dir of a kafkalog broker (the migration
    story, same ``broker.id``) enforces the ACLs kafkalog wrote;
(d) the oracle checked: the authorization matrix's per-API table (``api_cases``) and its other cases (clients,
    wire, bitfields; all but the ones needing a second broker or ``allow.everyone.if.no.acl.found=true``) run
    against a Kafka 3.9 broker with AclAuthorizer and the same users, so every code the kafkalog matrix asserts is
    Kafka's.

The kafkalog brokers authorize as ``tests/integration/security/secured_broker`` configures them (SASL_PLAINTEXT
with PLAIN users, ``super.users=User:admin;User:ANONYMOUS``); Kafka's broker gets the same users and super users.
"""

from __future__ import annotations

import itertools
import json
import uuid
from typing import Any

import pytest
from kazoo.client import KazooClient

from broker.server import EmbeddedBroker
from spark_kafkalog.security.acl import AclOperation, AclPermissionType, PatternType, ResourceType
from tests.integration.security import test_authorization_matrix as matrix  # its tests, run on Kafka here
from tests.integration.security.acl_clients import DRIVERS, AclSetter, SaslWire, User, acl, metadata_topic_error
from tests.integration.security.api_cases import CASES
from tests.integration.security.secured_broker import AUTHORIZER, JAAS, PASSWORDS, Secured, secured_config, unique
from tests.waiting import wait_until

from .kafka_broker import KafkaBroker
from .peers import KAFKA_39
from .tools import run_tool

pytestmark = pytest.mark.compat

O = AclOperation  # noqa: E741 (the tables read as Kafka's ACL lines)
R = ResourceType
DENY = AclPermissionType.DENY
TOPIC_AUTHORIZATION_FAILED = 29


def kafka_acls(connect: str, *args: str) -> str:
    """Kafka 3.9.1's ``kafka-acls.sh`` on the ZooKeeper path (``--authorizer-properties zookeeper.connect=...``)."""
    proc = run_tool(
        "kafka.admin.AclCommand", "--authorizer-properties", f"zookeeper.connect={connect}", *args, peer=KAFKA_39
    )
    return proc.stdout


def znode_json(connect: str, path: str) -> dict:
    zk = KazooClient(hosts=connect)
    zk.start(timeout=15)
    try:
        data, _ = zk.get(path)
        return json.loads(data)
    finally:
        zk.stop()
        zk.close()


def start_kafkalog(connect: str, log_dir, broker_id: int = 0) -> tuple[EmbeddedBroker, str]:
    config: dict[str, Any] = secured_config()
    broker = EmbeddedBroker(broker_id, zookeeper_connect=connect, log_dir=log_dir, **config)
    broker.start()
    assert broker.broker is not None
    return broker, f"127.0.0.1:{broker.broker.bound_ports['SASL_PLAINTEXT']}"


@pytest.fixture(scope="module")
def kafkalog_acl(zookeeper, tmp_path_factory):
    """A kafkalog broker that authorizes, on its own chroot: ``(broker, bootstrap, zookeeper.connect)``."""
    connect = f"{zookeeper.connect_string}/acl-compat-{uuid.uuid4().hex[:8]}"
    broker, bootstrap = start_kafkalog(connect, tmp_path_factory.mktemp("kafkalog-acl"))
    try:
        yield broker, bootstrap, connect
    finally:
        broker.stop()


def new_topic(bootstrap: str, prefix: str = "acl") -> str:
    from spark_kafkalog.client import AdminClient, NewTopic

    name = unique(prefix)
    with AdminClient(User(bootstrap, "admin", PASSWORDS["admin"]).kafka_names()) as admin:
        admin.create_topics([NewTopic(name, 1, 1)])
    return name


# -- (a) kafkalog writes, Kafka reads ----------------------------------------------------------------------------


def test_acls_kafkalog_creates_are_kafkas_znodes_and_kafka_acls_lists_them(kafkalog_acl):
    broker, bootstrap, connect = kafkalog_acl
    topic, group_prefix, tid = unique("t"), unique("g"), unique("tid")
    setter = AclSetter(User(bootstrap, "admin", PASSWORDS["admin"]), [broker.broker.authorizer])
    setter.add(
        acl("User:alice", O.READ, R.TOPIC, topic),
        acl("User:bob", O.DESCRIBE_CONFIGS, R.TOPIC, topic, host="127.0.0.2", permission=DENY),
        acl("User:alice", O.READ, R.GROUP, group_prefix, pattern=PatternType.PREFIXED),
        acl("User:alice", O.WRITE, R.TRANSACTIONAL_ID, tid),
        acl("User:alice", O.IDEMPOTENT_WRITE, R.CLUSTER, "kafka-cluster"),
    )
    topic_node = znode_json(connect, f"/kafka-acl/Topic/{topic}")
    assert topic_node["version"] == 1
    assert sorted(topic_node["acls"], key=lambda a: a["principal"]) == [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"},
        {"principal": "User:bob", "permissionType": "Deny", "operation": "DescribeConfigs", "host": "127.0.0.2"},
    ]
    assert znode_json(connect, f"/kafka-acl-extended/prefixed/Group/{group_prefix}") == {
        "version": 1,
        "acls": [{"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"}],
    }
    assert znode_json(connect, f"/kafka-acl/TransactionalId/{tid}")["acls"] == [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Write", "host": "*"}
    ]
    cluster_acls = znode_json(connect, "/kafka-acl/Cluster/kafka-cluster")["acls"]
    assert {"principal": "User:alice", "permissionType": "Allow", "operation": "IdempotentWrite", "host": "*"} in (
        cluster_acls
    )

    listed = kafka_acls(connect, "--list", "--topic", topic)
    assert f"ResourcePattern(resourceType=TOPIC, name={topic}, patternType=LITERAL)" in listed
    assert "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in listed
    assert "(principal=User:bob, host=127.0.0.2, operation=DESCRIBE_CONFIGS, permissionType=DENY)" in listed
    listed = kafka_acls(connect, "--list", "--resource-pattern-type", "prefixed", "--group", group_prefix)
    assert f"ResourcePattern(resourceType=GROUP, name={group_prefix}, patternType=PREFIXED)" in listed
    assert "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in listed
    listed = kafka_acls(connect, "--list", "--transactional-id", tid)
    assert "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)" in listed
    assert "operation=IDEMPOTENT_WRITE" in kafka_acls(connect, "--list", "--cluster")


# -- (b) Kafka writes, kafkalog enforces ---------------------------------------------------------------------------


def test_acls_kafka_acls_adds_through_zookeeper_are_enforced_by_kafkalog(kafkalog_acl):
    _broker, bootstrap, connect = kafkalog_acl
    topic = new_topic(bootstrap)
    prefix = unique("pre")
    prefixed = new_topic(bootstrap, prefix)
    alice = User(bootstrap, "alice", PASSWORDS["alice"])
    bob = User(bootstrap, "bob", PASSWORDS["bob"])
    driver = DRIVERS["kafkalog"]
    assert driver(alice).produce(topic) == TOPIC_AUTHORIZATION_FAILED

    kafka_acls(connect, "--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", topic)
    wait_until(lambda: driver(alice).produce(topic) == 0, 20, "kafkalog to let alice write after kafka-acls --add")

    kafka_acls(
        connect, "--add", "--allow-principal", "User:bob", "--producer", "--resource-pattern-type", "prefixed",
        "--topic", prefix,
    )  # fmt: skip
    wait_until(lambda: driver(bob).produce(prefixed) == 0, 20, "kafkalog to apply kafka-acls' prefixed --producer")
    assert driver(bob).produce(topic) == TOPIC_AUTHORIZATION_FAILED

    kafka_acls(connect, "--add", "--deny-principal", "User:alice", "--operation", "Describe", "--topic", topic)
    wait_until(
        lambda: driver(alice).produce(topic) == TOPIC_AUTHORIZATION_FAILED, 20, "kafkalog to apply kafka-acls' DENY"
    )
    with SaslWire(alice) as wire:
        assert metadata_topic_error(wire, topic) == TOPIC_AUTHORIZATION_FAILED

    kafka_acls(
        connect, "--remove", "--force", "--deny-principal", "User:alice", "--operation", "Describe", "--topic", topic
    )
    wait_until(lambda: driver(alice).produce(topic) == 0, 20, "kafkalog to apply kafka-acls --remove")


# -- (c) Kafka's broker on kafkalog's ZooKeeper data ---------------------------------------------------------------


KAFKA_AUTHORIZING = {
    "authorizer.class.name": AUTHORIZER,
    "super.users": "User:admin;User:ANONYMOUS",
    "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.num.partitions": "1",
}


def topics_led(admin: User, topics: list[str]) -> bool:
    """Whether Metadata from ``admin``'s broker shows every one of ``topics`` with a leader for each partition."""
    from spark_kafkalog.client import AdminClient

    try:
        with AdminClient(admin.kafka_names()) as client:
            described = client.describe_topics(topics)
    except Exception:
        return False
    return all(p.leader >= 0 for d in described.values() for p in d.partitions) and set(described) == set(topics)


def test_kafka_broker_on_kafkalogs_chroot_enforces_the_acls_kafkalog_wrote(zookeeper, tmp_path):
    connect = f"{zookeeper.connect_string}/acl-migrate-{uuid.uuid4().hex[:8]}"
    log_dir = tmp_path / "logs"
    broker, bootstrap = start_kafkalog(connect, log_dir, broker_id=7)
    try:
        written, denied_topic = new_topic(bootstrap), new_topic(bootstrap)
        prefix = unique("pre")
        prefixed = new_topic(bootstrap, prefix)
        assert broker.broker is not None
        AclSetter(User(bootstrap, "admin", PASSWORDS["admin"]), [broker.broker.authorizer]).add(
            acl("User:alice", O.WRITE, R.TOPIC, written),
            acl("User:alice", O.ALL, R.TOPIC, denied_topic),
            acl("User:alice", O.WRITE, R.TOPIC, denied_topic, permission=DENY),
            acl("User:bob", O.WRITE, R.TOPIC, prefix, pattern=PatternType.PREFIXED),
        )
    finally:
        broker.stop()

    kafka = KafkaBroker(
        KAFKA_39,
        tmp_path / "kafka",
        zookeeper_connect=connect,
        broker_id=7,
        log_dir=log_dir,
        listeners={"SASL_PLAINTEXT": "SASL_PLAINTEXT"},
        extra=KAFKA_AUTHORIZING,
    )
    kafka.start()
    try:
        on_kafka = kafka.listener_bootstrap("SASL_PLAINTEXT")
        # A fresh Kafka broker serves Metadata before its controller's UpdateMetadata lists the topics; asked about
        # a topic it does not know yet, it takes the auto-create path and denies Create (29): wait for the topics.
        wait_until(
            lambda: topics_led(User(on_kafka, "admin", PASSWORDS["admin"]), [written, denied_topic, prefixed]),
            60,
            "Kafka's broker to lead the topics kafkalog created",
        )
        alice = DRIVERS["confluent-kafka"](User(on_kafka, "alice", PASSWORDS["alice"]))
        bob = DRIVERS["confluent-kafka"](User(on_kafka, "bob", PASSWORDS["bob"]))
        assert alice.produce(written) == 0
        assert alice.produce(denied_topic) == TOPIC_AUTHORIZATION_FAILED  # DENY Write beats ALLOW All
        assert written in alice.list_topics() and denied_topic in alice.list_topics()
        assert bob.produce(prefixed) == 0
        assert bob.produce(written) == TOPIC_AUTHORIZATION_FAILED
        assert prefixed in bob.list_topics() and written not in bob.list_topics()
    finally:
        kafka.stop()


# -- the same matrix against Kafka 3.9 (the oracle checked) --------------------------------------------------------


@pytest.fixture(scope="module")
def kafka_acl(zookeeper, tmp_path_factory):
    """A Kafka 3.9 broker with AclAuthorizer and the same SASL_PLAINTEXT users and super users, as a ``Secured``."""
    connect = f"{zookeeper.connect_string}/kafka39-acl-{uuid.uuid4().hex[:8]}"
    kafka = KafkaBroker(
        KAFKA_39,
        tmp_path_factory.mktemp("kafka-3.9.1-acl"),
        zookeeper_connect=connect,
        listeners={"SASL_PLAINTEXT": "SASL_PLAINTEXT"},
        extra={**KAFKA_AUTHORIZING, "auto.create.topics.enable": "true"},
    )
    kafka.start()
    try:
        bootstrap = kafka.listener_bootstrap("SASL_PLAINTEXT")
        # Kafka's CreateAcls updates the answering broker's ACL cache before it answers: nothing to wait for
        yield Secured(kafka, bootstrap, AclSetter(User(bootstrap, "admin", PASSWORDS["admin"])), itertools.count())
    finally:
        kafka.stop()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_kafka_answers_each_api_as_the_matrix_expects(kafka_acl, case):
    """``tests/integration/security/api_cases`` against Kafka 3.9: the codes the kafkalog matrix asserts are
    Kafka's."""
    matrix.test_each_api_answers_kafkas_error_without_the_acl_and_passes_with_it(kafka_acl, case)


@pytest.mark.parametrize("client", sorted(DRIVERS))
def test_kafka_answers_group_consumers_as_the_matrix_expects(kafka_acl, client):
    matrix.test_consume_with_a_group_needs_read_on_the_group_and_the_topic(kafka_acl, client)


@pytest.mark.parametrize("client", sorted(DRIVERS))
def test_kafka_answers_transactional_producers_as_the_matrix_expects(kafka_acl, client):
    matrix.test_transactional_producer_needs_write_on_the_transactional_id_and_the_topic(kafka_acl, client)


@pytest.mark.parametrize("client", sorted(DRIVERS))
def test_kafka_answers_topic_admin_as_the_matrix_expects(kafka_acl, client):
    matrix.test_create_topic_needs_create_on_the_topic_or_the_cluster(kafka_acl, client)
    matrix.test_delete_topic_needs_delete(kafka_acl, client)


def test_kafka_answers_authorized_operations_as_the_matrix_expects(kafka_acl):
    matrix.test_authorized_operations_bitfields(kafka_acl)


WIRE_CASES = [
    "test_unauthorized_topic_answers_topic_authorization_failed_whether_or_not_it_exists",
    "test_produce_to_an_unauthorized_missing_topic_answers_29_and_creates_nothing",
    "test_read_implies_describe_and_deny_is_not_implied",
    "test_host_specific_acl_applies_from_that_address_only",
    "test_idempotent_init_producer_id_without_any_write_is_a_cluster_authorization_failure",
    "test_write_on_every_topic_denied_by_a_wildcard_deny_fails_init_producer_id",
    "test_list_groups_shows_only_the_groups_the_user_may_describe",
    "test_create_topics_hides_the_new_topics_configs_without_describe_configs",
    "test_allow_everyone_if_no_acl_found_is_off_by_default",
]
CLIENT_CASES = [
    "test_produce_needs_write_and_describe_alone_is_not_enough",
    "test_wildcard_topic_acl_grants_every_topic",
    "test_prefixed_acl_grants_the_names_it_prefixes_only",
    "test_deny_read_beats_allow_all_but_leaves_describe",
    "test_all_topics_metadata_hides_topics_the_user_may_not_describe",
    "test_wildcard_principal_acl_applies_to_every_user",
    "test_acl_for_the_clients_address_grants",
    "test_idempotent_producer_with_write_on_one_topic_needs_no_idempotent_write",
    "test_super_user_needs_no_acl",
]


@pytest.mark.parametrize("name", WIRE_CASES)
def test_kafka_answers_the_matrixs_wire_cases_alike(kafka_acl, name):
    getattr(matrix, name)(kafka_acl)


@pytest.mark.parametrize("client", sorted(DRIVERS))
@pytest.mark.parametrize("name", CLIENT_CASES)
def test_kafka_answers_the_matrixs_client_cases_alike(kafka_acl, name, client):
    getattr(matrix, name)(kafka_acl, client)
