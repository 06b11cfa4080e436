"""DescribeClientQuotas (48) and AlterClientQuotas (49) called directly on the services of an unstarted broker
over an in-process registry: what AlterClientQuotas writes, the entities each DescribeClientQuotas filter selects
(exact / default / any specified, strict), validate_only, the error tables (Kafka's ZooKeeper-mode answers), and
CLUSTER_AUTHORIZATION_FAILED without DescribeConfigs / AlterConfigs on the cluster."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.config_admin.client_quotas import format_value
from broker.handlers import alter_client_quotas as alter
from broker.handlers import describe_client_quotas as describe
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

from ..services_builder import build_services, request_context
from .acl_services import Secured

AlterRequest = API_BY_KEY[alter.API_KEY].Request
DescribeRequest = API_BY_KEY[describe.API_KEY].Request
EXACT, DEFAULT, SPECIFIED = 0, 1, 2


@pytest.fixture
def registry():
    view = MemoryRegistryStore().view()
    view.start()
    yield view
    view.close()


@pytest.fixture
def services(tmp_path, registry):
    return build_services(tmp_path, registry=registry)


def call(services, module, version=1, **fields):
    body = API_BY_KEY[module.API_KEY].Request(**fields)
    return asyncio.run(module.handle(request_context(services, module.API_KEY, version), body))


def entry(entity: Mapping[str, str | None], ops: Mapping[str, float | None]):
    E = AlterRequest.EntryData
    return E(
        entity=[E.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
        ops=[E.OpData(key=k, value=0.0 if v is None else v, remove=v is None) for k, v in ops.items()],
    )


def altered(services, *entries, validate_only=False, version=1):
    response = call(services, alter, version, entries=list(entries), validate_only=validate_only)
    return [(e.error_code, e.error_message) for e in response.entries]


def described(services, *components, strict=False, version=1):
    C = DescribeRequest.ComponentData
    comps = [C(entity_type=t, match_type=m, match=n) for t, m, n in components]
    response = call(services, describe, version, components=comps, strict=strict)
    if response.error_code:
        return response.error_code, response.error_message, response.entries
    return {
        tuple((e.entity_type, e.entity_name) for e in x.entity): {v.key: v.value for v in x.values}
        for x in response.entries
    }


ALICE, APP = {"user": "alice"}, {"client-id": "app"}
SEEDED = {
    (("user", "alice"),): {"producer_byte_rate": 1024.0},
    (("user", None),): {"consumer_byte_rate": 10.0},
    (("client-id", "app"),): {"request_percentage": 50.5},
    (("client-id", None),): {"producer_byte_rate": 7.0},
    (("client-id", "app"), ("user", "alice")): {"controller_mutation_rate": 3.0},
    (("client-id", None), ("user", "bob")): {"consumer_byte_rate": 4.0},
}


@pytest.fixture
def seeded(services, registry):
    results = altered(
        services,
        entry(ALICE, {"producer_byte_rate": 1024}),
        entry({"user": None}, {"consumer_byte_rate": 10}),
        entry(APP, {"request_percentage": 50.5}),
        entry({"client-id": None}, {"producer_byte_rate": 7}),
        entry({"user": "alice", "client-id": "app"}, {"controller_mutation_rate": 3}),
        entry({"client-id": None, "user": "bob"}, {"consumer_byte_rate": 4}),
    )
    assert results == [(ErrorCode.NONE, None)] * 6
    registry.alter_user_config("carol", {"SCRAM-SHA-256": "salt=x"})  # credentials only: no quota entity
    return services


def test_alter_writes_each_entity_with_kafkas_value_texts_and_keeps_credentials(services, registry):
    registry.alter_user_config("alice", {"SCRAM-SHA-512": "salt=y"})
    assert altered(services, entry(ALICE, {"producer_byte_rate": 1048576.0, "request_percentage": 50})) == [(0, None)]
    assert registry.user_config("alice") == {
        "SCRAM-SHA-512": "salt=y",
        "producer_byte_rate": "1048576",
        "request_percentage": "50.0",
    }
    assert altered(services, entry(ALICE, {"producer_byte_rate": None, "consumer_byte_rate": 2e6})) == [(0, None)]
    assert registry.user_config("alice") == {
        "SCRAM-SHA-512": "salt=y",
        "request_percentage": "50.0",
        "consumer_byte_rate": "2000000",
    }
    seq, _ = registry.config_changes_since(-1)
    altered(services, entry({"user": "a@b", "client-id": None}, {"request_percentage": 1}))
    assert registry.config_changes_since(seq)[1] == ["users/a%40b/clients/<default>"]


def test_validate_only_checks_but_writes_nothing(services, registry):
    results = altered(
        services, entry(APP, {"producer_byte_rate": 5}), entry(APP, {"nope": 1}), validate_only=True, version=0
    )
    assert results == [(0, None), (ErrorCode.INVALID_REQUEST, "Invalid configuration key nope")]
    assert registry.quota_configs() == {}


@pytest.mark.parametrize(
    "entity, ops, message",
    [
        ({}, {"producer_byte_rate": 1}, "Invalid empty client quota entity"),
        ({"user": ""}, {"producer_byte_rate": 1}, "Empty user not supported"),
        ({"group": "g"}, {"producer_byte_rate": 1}, "Unhandled client quota entity type: group"),
        ({"ip": "1.2.3.4", "user": "a"}, {"producer_byte_rate": 1}, "IP entity should not be combined"),
        ({"ip": "1.2.3.4"}, {"connection_creation_rate": 1}, "does not support ip quota entities"),
        (APP, {"SCRAM-SHA-256": 1}, "Invalid configuration key SCRAM-SHA-256"),
        (APP, {"producer_byte_rate": 1.5}, "producer_byte_rate must be a Long value"),
        (APP, {"consumer_byte_rate": -1}, "must be a positive number"),
        (APP, {"request_percentage": 0}, "must be a positive number"),
        (APP, {"request_percentage": float("nan")}, "must be a positive number"),
    ],
)
def test_refused_entries_get_invalid_request_and_write_nothing(services, registry, entity, ops, message):
    [(code, text)] = altered(services, entry(entity, ops))
    assert code == ErrorCode.INVALID_REQUEST and message in text
    assert registry.quota_configs() == {} and registry.config_changes_since(-1) == (-1, None)


def test_one_bad_entry_does_not_stop_the_others_and_entities_come_back_as_sent(services, registry):
    response = call(services, alter, entries=[entry(APP, {"bad": 1}), entry({"user": None}, {"request_percentage": 9})])
    assert [(e.error_code, [(x.entity_type, x.entity_name) for x in e.entity]) for e in response.entries] == [
        (ErrorCode.INVALID_REQUEST, [("client-id", "app")]),
        (ErrorCode.NONE, [("user", None)]),
    ]
    assert registry.quota_configs() == {(("user", None),): {"request_percentage": "9.0"}}


def test_removing_every_key_removes_the_entity_from_descriptions(seeded):
    assert altered(seeded, entry(APP, {"request_percentage": None, "never-set": None})) == [(0, None)]
    assert (("client-id", "app"),) not in described(seeded)


@pytest.mark.parametrize(
    "components, strict, expected",
    [
        ([], False, list(SEEDED)),
        ([], True, []),
        ([("user", EXACT, "alice")], False, [(("user", "alice"),), (("client-id", "app"), ("user", "alice"))]),
        ([("user", EXACT, "alice")], True, [(("user", "alice"),)]),
        ([("user", DEFAULT, None)], True, [(("user", None),)]),
        ([("user", SPECIFIED, None)], True, [(("user", "alice"),), (("user", None),)]),
        (
            [("user", SPECIFIED, None)],
            False,
            [
                (("user", "alice"),),
                (("user", None),),
                (("client-id", "app"), ("user", "alice")),
                (("client-id", None), ("user", "bob")),
            ],
        ),
        ([("client-id", DEFAULT, None)], False, [(("client-id", None),), (("client-id", None), ("user", "bob"))]),
        ([("client-id", EXACT, "app"), ("user", EXACT, "alice")], True, [(("client-id", "app"), ("user", "alice"))]),
        ([("client-id", SPECIFIED, None), ("user", EXACT, "bob")], False, [(("client-id", None), ("user", "bob"))]),
        ([("user", EXACT, "nobody")], False, []),
        ([("user", EXACT, "carol")], False, []),
        ([("ip", SPECIFIED, None)], False, []),
    ],
)
def test_describe_filters_select_as_kafka_does(seeded, components, strict, expected):
    assert described(seeded, *components, strict=strict) == {e: SEEDED[e] for e in expected}


@pytest.mark.parametrize(
    "components, code, message",
    [
        ([("", SPECIFIED, None)], ErrorCode.INVALID_REQUEST, "Unexpected empty filter component entity type"),
        ([("user", DEFAULT, None), ("user", EXACT, "a")], ErrorCode.INVALID_REQUEST, "Duplicate user filter"),
        ([("user", EXACT, None)], ErrorCode.INVALID_REQUEST, "Unexpected null match"),
        ([("user", 7, None)], ErrorCode.INVALID_REQUEST, "Unexpected match type 7"),
        ([("ip", SPECIFIED, None), ("user", SPECIFIED, None)], ErrorCode.INVALID_REQUEST, "IP filter component"),
        ([("group", SPECIFIED, None)], ErrorCode.UNSUPPORTED_VERSION, "Custom entity type 'group' not supported"),
    ],
)
def test_refused_filters_answer_one_error_and_null_entries(seeded, components, code, message):
    got_code, got_message, entries = described(seeded, *components, version=0)
    assert got_code == code and message in got_message and entries is None


def test_without_the_cluster_acls_bob_gets_cluster_authorization_failed(tmp_path, registry):
    s = Secured(tmp_path, registry)
    response = s.call(describe, 1, components=[], strict=False)
    assert (response.error_code, response.entries) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    body = AlterRequest(entries=[entry(ALICE, {"producer_byte_rate": 1}), entry(APP, {"bad": 1})], validate_only=False)
    assert [e.error_code for e in s.send(alter, 1, body).entries] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED] * 2
    assert registry.quota_configs() == {}

    s.grant(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER)  # describe only: still no alter
    assert s.call(describe, 1, components=[], strict=False).error_code == ErrorCode.NONE
    assert [e.error_code for e in s.send(alter, 1, body).entries] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED] * 2

    s.grant(AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER)
    assert [e.error_code for e in s.send(alter, 1, body).entries] == [ErrorCode.NONE, ErrorCode.INVALID_REQUEST]
    assert registry.quota_configs() == {(("user", "alice"),): {"producer_byte_rate": "1"}}


@pytest.mark.parametrize(
    "key, value, text",
    [
        ("producer_byte_rate", 1048576.0, "1048576"),
        ("consumer_byte_rate", 5.0000001, "5"),
        ("request_percentage", 50.0, "50.0"),
        ("controller_mutation_rate", 0.5, "0.5"),
    ],
)
def test_values_are_stored_as_kafka_stores_them(key, value, text):
    assert format_value(key, value) == text
