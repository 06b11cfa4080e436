"""Client quota entities: Kafka's entity paths (``users/<u>``, ``clients/<c>``, ``users/<u>/clients/<c>``, names
sanitized, ``<default>`` literal) and the checks an entity passes before it names a node."""

from __future__ import annotations

import pytest

from broker.cluster.quota_entities import (
    check_quota_entity,
    parse_quota_entity_path,
    quota_config_path,
    quota_entity,
    quota_entity_path,
    quota_keys_of,
)


@pytest.mark.parametrize(
    "entity, path",
    [
        ((("user", "alice"),), "users/alice"),
        ((("user", None),), "users/<default>"),
        ((("client-id", "app"),), "clients/app"),
        ((("client-id", None),), "clients/<default>"),
        ((("client-id", "app"), ("user", "alice")), "users/alice/clients/app"),
        ((("client-id", None), ("user", None)), "users/<default>/clients/<default>"),
        ((("client-id", "c*1"), ("user", "a@b.c")), "users/a%40b.c/clients/c%2A1"),
        ((("user", "x y/z"),), "users/x%20y%2Fz"),
    ],
)
def test_entity_paths_are_kafkas_and_parse_back(entity, path):
    assert quota_entity_path(entity) == path
    assert quota_config_path(entity) == f"/config/{path}"
    assert parse_quota_entity_path(path) == entity


def test_quota_entity_builds_sorted_entities_with_none_as_default():
    assert quota_entity(user="alice", client_id="app") == (("client-id", "app"), ("user", "alice"))
    assert quota_entity(has_user=True) == (("user", None),)
    assert quota_entity(client_id="c", has_user=True) == (("client-id", "c"), ("user", None))
    assert check_quota_entity([("user", "u"), ("client-id", None)]) == (("client-id", None), ("user", "u"))


@pytest.mark.parametrize(
    "pairs, message",
    [
        ([], "needs a user, a client-id or both"),
        ([("user", "a"), ("user", "b")], "twice"),
        ([("ip", "1.2.3.4")], "unknown quota entity type 'ip'"),
        ([("user", "")], "invalid user name ''"),
        ([("client-id", "<default>")], "None is the default entity"),
    ],
)
def test_invalid_entities_are_refused_naming_the_problem(pairs, message):
    with pytest.raises(ValueError, match=message):
        check_quota_entity(pairs)


@pytest.mark.parametrize(
    "path", ["topics/t", "brokers/1", "ips/1.2.3.4", "users", "users/a/clients", "users/a/ips/x", "clients/a/users/b"]
)
def test_other_entity_paths_are_not_quota_entities(path):
    assert parse_quota_entity_path(path) is None


def test_quota_keys_leave_scram_credentials_out():
    config = {"SCRAM-SHA-256": "salt=..", "producer_byte_rate": "1024", "request_percentage": "50.5"}
    assert quota_keys_of(config) == {"producer_byte_rate": "1024", "request_percentage": "50.5"}
