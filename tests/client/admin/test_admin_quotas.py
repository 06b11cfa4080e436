"""AdminClient.describe_client_quotas / alter_client_quotas against an in-process broker: what is written reaches
the registry and the broker's quota manager, describe filters, validate_only, and per-entity errors raised as one
AdminOperationError keyed by entity."""

from __future__ import annotations

import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client.admin import (
    AdminClient,
    AdminOperationError,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilterComponent,
    QuotaOp,
)
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

ALICE = ClientQuotaEntity.of(user="alice")
APP = ClientQuotaEntity.of(client_id="app")
ALICE_APP = ClientQuotaEntity.of(user="alice", client_id="app")
DEFAULT_CLIENT = ClientQuotaEntity.of(client_id=None)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0, zookeeper_connect=f"memory:quotas-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("quotas")
    ).start()
    yield b
    b.stop()


def alteration(entity: ClientQuotaEntity, **ops: float | None) -> ClientQuotaAlteration:
    return ClientQuotaAlteration(entity, tuple(QuotaOp(k, v) for k, v in ops.items()))


def test_entities_are_value_objects_sorted_by_type():
    assert ALICE_APP.entries == (("client-id", "app"), ("user", "alice"))
    assert ClientQuotaEntity.from_mapping({"user": "alice", "client-id": "app"}) == ALICE_APP
    assert str(ClientQuotaEntity.of(user=None, client_id="c")) == "client-id=c, user=<default>"
    assert ClientQuotaFilterComponent.of_default_entity("user") == ClientQuotaFilterComponent("user", 1, None)


def test_altered_quotas_are_described_stored_and_applied(broker):
    with AdminClient(broker.bootstrap_servers) as admin:
        admin.alter_client_quotas(
            [
                alteration(ALICE, producer_byte_rate=1048576),
                alteration(ALICE_APP, request_percentage=25.5),
                alteration(DEFAULT_CLIENT, consumer_byte_rate=2048),
            ]
        )
        assert admin.describe_client_quotas() == {
            ALICE: {"producer_byte_rate": 1048576.0},
            ALICE_APP: {"request_percentage": 25.5},
            DEFAULT_CLIENT: {"consumer_byte_rate": 2048.0},
        }
        users = [ClientQuotaFilterComponent.of_entity("user", "alice")]
        assert admin.describe_client_quotas(users, strict=True) == {ALICE: {"producer_byte_rate": 1048576.0}}
        assert admin.describe_client_quotas([ClientQuotaFilterComponent.of_default_entity("client-id")]) == {
            DEFAULT_CLIENT: {"consumer_byte_rate": 2048.0}
        }
        registry = broker.broker.registry
        assert registry.user_config("alice") == {"producer_byte_rate": "1048576"}
        assert registry.quota_config(ALICE_APP.entries) == {"request_percentage": "25.5"}

        admin.alter_client_quotas([alteration(ALICE, producer_byte_rate=None, consumer_byte_rate=10)])
        assert admin.describe_client_quotas([ClientQuotaFilterComponent.of_entity("user", "alice")], strict=True) == {
            ALICE: {"consumer_byte_rate": 10.0}
        }
        admin.alter_client_quotas([alteration(APP, producer_byte_rate=5)], validate_only=True)
        assert APP not in admin.describe_client_quotas()


def test_alter_reaches_the_quota_manager(broker, monkeypatch):
    updates: list[tuple] = []
    quotas = broker.broker.quotas
    real = quotas.update_entity

    def spy(entity, config) -> None:
        updates.append((entity, dict(config)))
        real(entity, config)

    monkeypatch.setattr(quotas, "update_entity", spy)
    with AdminClient(broker.bootstrap_servers) as admin:
        admin.alter_client_quotas([alteration(ClientQuotaEntity.of(client_id="fast"), producer_byte_rate=4096)])
    entity = (("client-id", "fast"),)
    wait_until(lambda: (entity, {"producer_byte_rate": "4096"}) in updates, 10, "the quota manager updated")


def test_per_entity_failures_raise_one_error_keyed_by_entity(broker):
    bad_key = ClientQuotaEntity.of(user="x")
    bad_value = ClientQuotaEntity.of(client_id="y")
    with AdminClient(broker.bootstrap_servers) as admin:
        with pytest.raises(AdminOperationError) as caught:
            admin.alter_client_quotas(
                [
                    alteration(bad_key, nonsense=1),
                    alteration(bad_value, producer_byte_rate=1.5),
                    alteration(ClientQuotaEntity.of(client_id="ok"), producer_byte_rate=100),
                ]
            )
        assert set(caught.value.errors) == {bad_key, bad_value}
        assert all(e.error_code == ErrorCode.INVALID_REQUEST for e in caught.value.errors.values())
        assert "Invalid configuration key nonsense" in str(caught.value.errors[bad_key])
        assert admin.describe_client_quotas([ClientQuotaFilterComponent.of_entity("client-id", "ok")], strict=True)
        with pytest.raises(KafkaClientError) as refused:
            admin.describe_client_quotas([ClientQuotaFilterComponent.of_entity_type("group")])
        assert refused.value.error_code == ErrorCode.UNSUPPORTED_VERSION
