"""``spark_kafkalog.client.errors``' authorization errors: the class, resource and operation each code and API give,
the message and the ``kafkalog acls`` command in it, the principal a client's security settings name, pickling."""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import pytest

from spark_kafkalog.client.errors import (
    AuthorizationError,
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    KafkaClientError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
    client_principal,
    error_for_code,
)
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import AclOperation, PatternType, ResourcePattern, ResourceType

O, R = AclOperation, ResourceType  # noqa: E741 (the table reads as Kafka's ACL vocabulary)


@pytest.mark.parametrize(
    ("code", "what", "kwargs", "cls", "operation", "resource"),
    [
        (29, "Fetch", {"topic": "orders"}, TopicAuthorizationFailedError, O.READ, (R.TOPIC, "orders")),
        (29, "Produce", {"topic": "orders"}, TopicAuthorizationFailedError, O.WRITE, (R.TOPIC, "orders")),
        (29, "Metadata", {"topic": "orders"}, TopicAuthorizationFailedError, O.DESCRIBE, (R.TOPIC, "orders")),
        (29, "OffsetCommit", {"topic": "t"}, TopicAuthorizationFailedError, O.READ, (R.TOPIC, "t")),
        (30, "FindCoordinator", {"resource_name": "g"}, GroupAuthorizationFailedError, O.DESCRIBE, (R.GROUP, "g")),
        (30, "JoinGroup", {"resource_name": "g"}, GroupAuthorizationFailedError, O.READ, (R.GROUP, "g")),
        (30, "OffsetDelete", {"resource_name": "g"}, GroupAuthorizationFailedError, O.DELETE, (R.GROUP, "g")),
        (31, "InitProducerId", {}, ClusterAuthorizationFailedError, O.IDEMPOTENT_WRITE, (R.CLUSTER, "kafka-cluster")),
        (31, "CreateAcls of x", {}, ClusterAuthorizationFailedError, O.ALTER, (R.CLUSTER, "kafka-cluster")),
        (53, "EndTxn", {"resource_name": "tx"}, TransactionalIdAuthorizationFailedError, O.WRITE, (R.TRANSACTIONAL_ID, "tx")),
        (53, "FindCoordinator", {"resource_name": "tx"}, TransactionalIdAuthorizationFailedError, O.DESCRIBE,
         (R.TRANSACTIONAL_ID, "tx")),
    ],
)  # fmt: skip
def test_error_for_code_gives_the_typed_error_with_the_apis_operation(code, what, kwargs, cls, operation, resource):
    error = error_for_code(code, what, **kwargs)
    assert type(error) is cls and isinstance(error, AuthorizationError) and isinstance(error, KafkaClientError)
    assert (error.error_code, error.retriable, error.operation) == (ErrorCode(code), False, operation)
    assert error.resource == ResourcePattern(resource[0], resource[1], PatternType.LITERAL)


def test_other_codes_keep_the_plain_error():
    error = error_for_code(ErrorCode.NOT_LEADER_OR_FOLLOWER, "Fetch", topic="t", partition=0)
    assert type(error) is KafkaClientError and error.retriable


def test_the_message_names_principal_resource_operation_and_the_grant():
    error = error_for_code(29, "Fetch", topic="orders", partition=3, broker="0 (h:9092)")
    assert isinstance(error, AuthorizationError)
    error.name_principal("User:bob")
    assert str(error) == (
        "Not authorized: principal User:bob may not READ topic 'orders' (TOPIC_AUTHORIZATION_FAILED, 29, in Fetch "
        "on broker 0 (h:9092)); grant it with: kafkalog acls --bootstrap-server <host:port> --add "
        "--allow-principal User:bob --operation Read --topic orders"
    )
    error.name_principal("User:mallory")  # the first name stays
    error.add_context("while reading orders-3")
    assert "principal User:bob may not" in str(error) and str(error).endswith("; while reading orders-3")


@pytest.mark.parametrize(
    ("code", "what", "kwargs", "grant"),
    [
        (30, "Heartbeat", {"resource_name": "g1"}, "--operation Read --group g1"),
        (53, "AddOffsetsToTxn", {"resource_name": "tx-1"}, "--operation Write --transactional-id tx-1"),
        (31, "ListGroups", {}, "--operation Describe --cluster"),
        (30, "SomeNewApi", {}, "--operation <operation> --group <name>"),
    ],
)
def test_the_grant_command_uses_kafka_acls_flags(code, what, kwargs, grant):
    error = error_for_code(code, what, **kwargs)
    assert isinstance(error, AuthorizationError)
    assert (
        error.grant_command()
        == f"kafkalog acls --bootstrap-server <host:port> --add --allow-principal User:<name> {grant}"
    )
    error.bootstrap_servers = "k1:9092,k2:9092"
    assert error.grant_command().startswith("kafkalog acls --bootstrap-server k1:9092,k2:9092 --add ")


def test_an_unknown_principal_is_described_not_invented():
    error = error_for_code(30, "JoinGroup", resource_name="g")
    assert "principal this client's principal may not READ group 'g'" in str(error)
    assert isinstance(error, AuthorizationError)
    error.name_principal(None, "User:<the DN of this client's TLS certificate>")
    assert error.principal is None
    assert "principal User:<the DN of this client's TLS certificate> may not READ" in str(error)


def test_authorization_errors_survive_pickling_with_their_fields():
    error = error_for_code(29, "Fetch", topic="orders", partition=1)
    assert isinstance(error, AuthorizationError)
    error.name_principal("User:bob")
    error.add_context("in a Spark task")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is TopicAuthorizationFailedError
    assert (copy.principal, copy.operation, copy.resource, copy.partition) == (
        "User:bob",
        O.READ,
        ResourcePattern(R.TOPIC, "orders", PatternType.LITERAL),
        1,
    )
    assert str(copy) == str(error)


def _security(protocol: str, *, username: str | None = None, mechanism: str = "PLAIN"):
    sasl = SimpleNamespace(username=username, mechanism=mechanism) if protocol.startswith("SASL") else None
    return SimpleNamespace(sasl=sasl, uses_tls=protocol in ("SSL", "SASL_SSL"))


@pytest.mark.parametrize(
    ("security", "settings", "principal", "hint_has"),
    [
        (_security("PLAINTEXT"), {}, "User:ANONYMOUS", "PLAINTEXT"),
        (_security("SASL_PLAINTEXT", username="bob"), {}, "User:bob", None),
        (_security("SASL_SSL", username="alice", mechanism="SCRAM-SHA-512"), {}, "User:alice", None),
        (_security("SASL_SSL", mechanism="OAUTHBEARER"), {}, None, "OAUTHBEARER token"),
        (_security("SSL"), {"ssl.truststore.location": "t.jks"}, "User:ANONYMOUS", "no TLS client certificate"),
        (_security("SSL"), {"ssl.keystore.location": "k.p12"}, None, "DN of this client's TLS certificate"),
        (_security("SSL"), {"ssl.certificate.location": "c.pem"}, None, "DN of this client's TLS certificate"),
    ],
)
def test_client_principal_is_what_the_broker_will_see(security, settings, principal, hint_has):
    got, hint = client_principal(security, settings)
    assert got == principal
    assert (hint is None) if hint_has is None else (hint is not None and hint_has in hint)
