"""Quota entities and Kafka's precedence (DefaultQuotaCallback): which entity's bound applies, and which
clients share a rate (the sensor key)."""

from __future__ import annotations

import pytest

from broker.quotas.entity import QuotaType, check_entity, entity_of, keyed, quota_user, resolve

LEVELS = [
    "users/alice/clients/app",
    "users/alice/clients/<default>",
    "users/alice",
    "users/<default>/clients/app",
    "users/<default>/clients/<default>",
    "users/<default>",
    "clients/app",
    "clients/<default>",
]


@pytest.mark.parametrize("most_specific", range(len(LEVELS)))
def test_the_most_specific_configured_entity_wins(most_specific):
    """Every level from ``most_specific`` down is configured (bound = its rank + 1): that level's bound applies."""
    configured = {entity_of(path): float(rank + 1) for rank, path in enumerate(LEVELS) if rank >= most_specific}
    _, bound = resolve(keyed(configured), "alice", "app")
    assert bound == most_specific + 1


@pytest.mark.parametrize(
    ("configured", "user", "client_id", "key", "bound"),
    [
        # a user quota is shared by all the user's client ids
        (["users/alice"], "alice", "app", ("alice", ""), 1.0),
        (["users/alice"], "alice", "other", ("alice", ""), 1.0),
        # a default client id under a user: one rate per client id
        (["users/alice/clients/<default>"], "alice", "app", ("alice", "app"), 1.0),
        # the user default applies to each user separately
        (["users/<default>"], "bob", "app", ("bob", ""), 1.0),
        (["users/<default>/clients/<default>"], "bob", "x", ("bob", "x"), 1.0),
        # client-id quotas: shared by every user of that client id
        (["clients/app"], "alice", "app", ("", "app"), 1.0),
        (["clients/<default>"], "alice", "other", ("", "other"), 1.0),
        # nothing applies: no bound
        (["users/alice"], "bob", "app", ("", "app"), None),
        (["users/alice/clients/app"], "alice", "other", ("", "other"), None),
        (["clients/app"], "alice", "other", ("", "other"), None),
        # a user's own quota beats a default user + client id quota
        (["users/alice", "users/<default>/clients/app"], "alice", "app", ("alice", ""), 1.0),
        (["users/alice", "users/<default>/clients/app"], "bob", "app", ("bob", "app"), 2.0),
    ],
)
def test_resolution_and_the_shared_sensor_key(configured, user, client_id, key, bound):
    bounds = keyed({entity_of(p): float(i + 1) for i, p in enumerate(configured)})
    assert resolve(bounds, user, client_id) == (key, bound)


@pytest.mark.parametrize(
    ("path", "entity"),
    [
        ("users/alice", (("user", "alice"),)),
        ("clients/<default>", (("client-id", None),)),
        ("users/alice/clients/app", (("client-id", "app"), ("user", "alice"))),
        ("users/<default>/clients/<default>", (("client-id", None), ("user", None))),
    ],
)
def test_entity_paths(path, entity):
    assert entity_of(path) == entity


@pytest.mark.parametrize(
    "entity",
    [(), (("user", "a"), ("user", "b")), (("ip", "1.2.3.4"),), (("user", ""),), (("user", "<default>"),)],
)
def test_bad_entities_are_refused(entity):
    with pytest.raises(ValueError, match="quota entity|name"):
        check_entity(entity)


def test_bad_entity_path_is_refused():
    with pytest.raises(ValueError, match="users/<u>"):
        entity_of("topics/t")


def test_quota_user_and_types():
    assert quota_user("User:alice") == "alice"
    assert quota_user("User:CN=a:b") == "CN=a:b"
    assert [t.config_key for t in QuotaType] == ["producer_byte_rate", "consumer_byte_rate", "request_percentage"]
