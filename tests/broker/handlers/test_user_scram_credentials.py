"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51) called directly on the services of an
unstarted broker over an in-process registry: what each writes to the user entity configs, and their error
tables (Kafka 3.9's ZooKeeper-mode answers)."""

from __future__ import annotations

import asyncio

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.handlers import alter_user_scram_credentials as alter
from broker.handlers import describe_user_scram_credentials as describe
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism

from ..services_builder import build_services, request_context

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
AlterRequest = API_BY_KEY[alter.API_KEY].Request
Upsert, Delete = AlterRequest.ScramCredentialUpsertion, AlterRequest.ScramCredentialDeletion


class Controller:
    def __init__(self, active: bool) -> None:
        self.is_active = active


@pytest.fixture
def registry():
    view = MemoryRegistryStore().view()
    view.start()
    yield view
    view.close()


@pytest.fixture
def services(tmp_path, registry):
    return build_services(tmp_path, registry=registry, controller=Controller(True))


def call(services, module, **fields):
    body = API_BY_KEY[module.API_KEY].Request(**fields)
    return asyncio.run(module.handle(request_context(services, module.API_KEY, 0), body))


def upsert(name, mech=SHA256, password="pw", iterations=4096, salt=b"salt-1", **override):
    """An upsertion as a client makes it (the salted password computed here); ``override`` replaces fields."""
    fields = dict(
        name=name,
        mechanism=mech.wire_type,
        iterations=iterations,
        salt=salt,
        salted_password=mech.salted_password(password, salt, iterations),
    )
    fields.update(override)
    return Upsert(**fields)


def results(resp) -> dict[str, int]:
    return {r.user: r.error_code for r in resp.results}


def store(registry, user, **credentials: ScramCredential):
    registry.alter_user_config(user, {k.replace("_", "-"): c.to_kafka_string() for k, c in credentials.items()})


# -- AlterUserScramCredentials -------------------------------------------------------------------------


def test_upsertion_stores_kafkas_credential_string_and_keeps_the_users_other_keys(services, registry):
    registry.alter_user_config("alice", {"producer_byte_rate": "1024"})
    resp = call(services, alter, upsertions=[upsert("alice", SHA512, "alice-secret", 8192, b"salty")])
    assert [(r.user, r.error_code, r.error_message) for r in resp.results] == [("alice", ErrorCode.NONE, None)]
    config = registry.user_config("alice")
    expected = ScramCredential.from_password(SHA512, "alice-secret", 8192, b"salty")
    assert config == {"producer_byte_rate": "1024", "SCRAM-SHA-512": expected.to_kafka_string()}
    assert registry.config_changes_since(0)[1] == ["users/alice"]


def test_deletion_removes_only_that_mechanism_and_names_the_user_in_the_notification(services, registry):
    store(registry, "a@b", SCRAM_SHA_256=ScramCredential.from_password(SHA256, "x"))
    store(registry, "a@b", SCRAM_SHA_512=ScramCredential.from_password(SHA512, "x"))
    seq, _ = registry.config_changes_since(-1)
    resp = call(services, alter, deletions=[Delete(name="a@b", mechanism=1)])
    assert results(resp) == {"a@b": ErrorCode.NONE}
    assert set(registry.user_config("a@b")) == {"SCRAM-SHA-512"}
    assert registry.config_changes_since(seq)[1] == ["users/a%40b"]


@pytest.mark.parametrize(
    "deletions, upsertions, code",
    [
        ([], [upsert("")], ErrorCode.UNACCEPTABLE_CREDENTIAL),
        ([Delete(name="", mechanism=1)], [], ErrorCode.UNACCEPTABLE_CREDENTIAL),
        ([], [upsert("bob", mechanism=3)], ErrorCode.UNSUPPORTED_SASL_MECHANISM),
        ([], [upsert("bob", mechanism=0)], ErrorCode.UNSUPPORTED_SASL_MECHANISM),
        ([Delete(name="bob", mechanism=3)], [], ErrorCode.UNSUPPORTED_SASL_MECHANISM),
        ([], [upsert("bob", iterations=4095)], ErrorCode.UNACCEPTABLE_CREDENTIAL),
        ([], [upsert("bob", iterations=16385)], ErrorCode.UNACCEPTABLE_CREDENTIAL),
        ([], [upsert("bob", salt=b"")], ErrorCode.UNACCEPTABLE_CREDENTIAL),
        ([], [upsert("bob", salted_password=b"short")], ErrorCode.UNACCEPTABLE_CREDENTIAL),
        ([], [upsert("bob", SHA512, salted_password=bytes(32))], ErrorCode.UNACCEPTABLE_CREDENTIAL),
        ([Delete(name="bob", mechanism=1)], [upsert("bob")], ErrorCode.DUPLICATE_RESOURCE),
        ([], [upsert("bob"), upsert("bob", password="other")], ErrorCode.DUPLICATE_RESOURCE),
        ([Delete(name="bob", mechanism=2), Delete(name="bob", mechanism=2)], [], ErrorCode.DUPLICATE_RESOURCE),
        ([Delete(name="bob", mechanism=2)], [], ErrorCode.RESOURCE_NOT_FOUND),
        ([Delete(name="nobody", mechanism=1)], [], ErrorCode.RESOURCE_NOT_FOUND),
    ],
)
def test_alter_error_table_leaves_the_failing_user_unchanged(services, registry, deletions, upsertions, code):
    store(registry, "bob", SCRAM_SHA_256=ScramCredential.from_password(SHA256, "bob-secret", salt=b"b"))
    before = registry.user_configs()
    resp = call(services, alter, deletions=deletions, upsertions=[*upsertions, upsert("carol")])
    user = (deletions or upsertions)[0].name
    assert results(resp) == {user: code, "carol": ErrorCode.NONE}
    assert [r.user for r in resp.results] == [user, "carol"]
    failed = next(r for r in resp.results if r.user == user)
    assert failed.error_message
    after = registry.user_configs()
    assert "SCRAM-SHA-256" in after.pop("carol")
    assert after == before


def test_alter_on_a_broker_that_is_not_the_controller_answers_not_controller_per_user(tmp_path, registry):
    services = build_services(tmp_path, registry=registry, controller=Controller(False))
    resp = call(
        services,
        alter,
        deletions=[Delete(name="zed", mechanism=1)],
        upsertions=[upsert("amy"), upsert("zed", SHA512), upsert("amy", SHA512)],
    )
    assert [(r.user, r.error_code) for r in resp.results] == [
        ("amy", ErrorCode.NOT_CONTROLLER),
        ("zed", ErrorCode.NOT_CONTROLLER),
    ]
    assert registry.user_configs() == {}


def test_upsertion_and_deletion_of_different_mechanisms_of_one_user_in_one_request(services, registry):
    store(registry, "dan", SCRAM_SHA_256=ScramCredential.from_password(SHA256, "old"))
    resp = call(services, alter, deletions=[Delete(name="dan", mechanism=1)], upsertions=[upsert("dan", SHA512)])
    assert results(resp) == {"dan": ErrorCode.NONE}
    assert set(registry.user_config("dan")) == {"SCRAM-SHA-512"}


# -- DescribeUserScramCredentials ----------------------------------------------------------------------


def described(resp) -> dict[str, tuple[int, list[tuple[int, int]]]]:
    return {r.user: (r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos]) for r in resp.results}


@pytest.mark.parametrize("users", [None, []])
def test_describe_all_lists_users_with_credentials_sorted_with_their_mechanisms(services, registry, users):
    store(registry, "zoe", SCRAM_SHA_512=ScramCredential.from_password(SHA512, "z", 8192))
    store(registry, "zoe", SCRAM_SHA_256=ScramCredential.from_password(SHA256, "z", 4096))
    store(registry, "al", SCRAM_SHA_256=ScramCredential.from_password(SHA256, "a", 5000))
    registry.alter_user_config("quota-only", {"producer_byte_rate": "10"})
    resp = call(services, describe, users=users)
    assert resp.error_code == ErrorCode.NONE
    assert [r.user for r in resp.results] == ["al", "zoe"]
    assert described(resp) == {"al": (0, [(1, 5000)]), "zoe": (0, [(1, 4096), (2, 8192)])}


def test_describe_named_users_error_table(services, registry):
    store(registry, "al", SCRAM_SHA_256=ScramCredential.from_password(SHA256, "a", 4096))
    registry.alter_user_config("quota-only", {"producer_byte_rate": "10"})
    registry.alter_user_config("broken", {"SCRAM-SHA-256": "salt=AAAA,iterations=4096"})
    Name = API_BY_KEY[describe.API_KEY].Request.UserName
    names = ["al", "dup", "nobody", "dup", "", "quota-only", "broken"]
    resp = call(services, describe, users=[Name(name=n) for n in names])
    assert resp.error_code == ErrorCode.NONE
    assert [(r.user, r.error_code) for r in resp.results] == [
        ("al", ErrorCode.NONE),
        ("dup", ErrorCode.DUPLICATE_RESOURCE),
        ("nobody", ErrorCode.RESOURCE_NOT_FOUND),
        ("", ErrorCode.RESOURCE_NOT_FOUND),
        ("quota-only", ErrorCode.RESOURCE_NOT_FOUND),
        ("broken", ErrorCode.UNKNOWN_SERVER_ERROR),
    ]
    assert described(resp)["al"] == (0, [(1, 4096)])
    assert all(r.error_message for r in resp.results if r.error_code)
    broken = resp.results[-1].error_message
    assert "AAAA" not in broken


def test_describe_with_the_registry_unreachable_answers_a_top_level_error(tmp_path):
    closed = MemoryRegistryStore().view()  # never started: every call raises RegistryUnavailableError
    resp = call(build_services(tmp_path, registry=closed), describe, users=None)
    assert resp.error_code == ErrorCode.UNKNOWN_SERVER_ERROR and resp.results == [] and resp.error_message
