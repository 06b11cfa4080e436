"""QuotaManager: recording, throttle times, shared sensors, updates and metrics figures, on a manual clock."""

from __future__ import annotations

import pytest

from broker.quotas.entity import entity_of
from broker.quotas.manager import QuotaManager


class Clock:
    def __init__(self) -> None:
        self.ms = 0

    def __call__(self) -> float:
        return self.ms / 1000


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def quotas(clock):
    return QuotaManager(clock=clock)


def test_no_quota_records_nothing(quotas):
    assert not (quotas.produce.enabled or quotas.fetch.enabled or quotas.request.enabled)
    assert quotas.record_produce("User:alice", "app", 10**9) == 0
    assert quotas.record_fetch("User:alice", "app", 10**9) == 0
    assert quotas.record_request_time("User:alice", "app", 100.0) == 0
    assert quotas.figures() == []


@pytest.mark.parametrize(
    ("steps", "throttles"),
    [
        # 1000 B/s over 10 s windows: 10 000 B at once is exactly the bound, 20 000 B twice it
        ([(0, 10_000)], [0]),
        ([(0, 20_000)], [10_000]),
        ([(0, 11_000)], [1000]),
        # 5 s later the elapsed window is still padded to 10 whole windows: 11 000 B over 10 s
        ([(0, 10_000), (5000, 1000)], [0, 1000]),
        # 12 s later the first sample has expired
        ([(0, 10_000), (12_000, 1000)], [0, 0]),
        # within one window: 10 000 + 5000 at 500 ms is 15 000 B over 10.5 s
        ([(0, 10_000), (500, 5000)], [0, 4500]),
    ],
)
def test_producer_byte_rate_throttle_times(quotas, clock, steps, throttles):
    quotas.set_quota("users/alice", producer_byte_rate=1000)
    got = []
    for at_ms, nbytes in steps:
        clock.ms = at_ms
        got.append(quotas.record_produce("User:alice", "app", nbytes))
    assert got == throttles


def test_a_user_quota_is_shared_by_its_client_ids_and_others_are_unaffected(quotas):
    quotas.set_quota("users/alice", producer_byte_rate=1000)
    assert quotas.record_produce("User:alice", "a", 6000) == 0
    assert quotas.record_produce("User:alice", "b", 6000) == 2000  # 12 000 B over 10 s: 1200 B/s
    assert quotas.record_produce("User:bob", "a", 10**6) == 0


def test_a_default_client_id_quota_gives_each_client_id_its_own_rate(quotas):
    quotas.set_quota("users/alice/clients/<default>", producer_byte_rate=1000)
    assert quotas.record_produce("User:alice", "a", 6000) == 0
    assert quotas.record_produce("User:alice", "b", 6000) == 0
    assert quotas.record_produce("User:alice", "a", 6000) == 2000


def test_types_are_independent(quotas):
    quotas.set_quota("clients/app", consumer_byte_rate=1000)
    assert not quotas.produce.enabled and quotas.fetch.enabled
    assert quotas.record_produce("User:alice", "app", 10**6) == 0
    assert quotas.record_fetch("User:alice", "app", 20_000) == 10_000


def test_a_throttled_fetch_is_unrecorded(quotas):
    quotas.set_quota("clients/app", consumer_byte_rate=1000)
    assert quotas.record_fetch("User:alice", "app", 20_000) == 10_000
    quotas.unrecord_fetch("User:alice", "app", 20_000)
    assert quotas.record_fetch("User:alice", "app", 5000) == 0


def test_request_percentage_throttle_is_capped_at_one_window(quotas, clock):
    quotas.set_quota("users/alice", request_percentage=10)
    assert quotas.record_request_time("User:alice", "app", 0.5) == 0  # 50 %·s over 10 s: 5 %
    assert quotas.record_request_time("User:alice", "app", 1.0) == 1000  # 15 %: 5000 ms, capped at 1 s


def test_updates_apply_to_existing_sensors_and_removal_switches_quotas_off(quotas):
    entity = entity_of("users/alice")
    quotas.update_entity(entity, {"producer_byte_rate": "1000"})
    assert quotas.record_produce("User:alice", "app", 15_000) == 5000
    quotas.update_entity(entity, {"producer_byte_rate": "3000"})  # samples kept, bound raised
    assert quotas.record_produce("User:alice", "app", 0) == 0
    quotas.update_entity(entity, {"producer_byte_rate": "1000", "SCRAM-SHA-256": "salt=...,iterations=4096"})
    assert quotas.record_produce("User:alice", "app", 0) == 5000
    quotas.update_entity(entity, {})
    assert not quotas.produce.enabled
    assert quotas.record_produce("User:alice", "app", 10**6) == 0


def test_replace_all_reloads_every_entity(quotas):
    quotas.set_quota("users/alice", producer_byte_rate=1000)
    quotas.replace_all({entity_of("users/bob"): {"producer_byte_rate": "1000", "consumer_byte_rate": "1000"}})
    assert quotas.record_produce("User:alice", "app", 10**6) == 0
    assert quotas.record_produce("User:bob", "app", 20_000) == 10_000
    assert quotas.fetch.bounds() == {entity_of("users/bob"): 1000.0}


@pytest.mark.parametrize(("value", "message"), [("fast", "not a number"), ("0", "positive"), ("-5", "positive")])
def test_bad_quota_values_are_refused(quotas, value, message):
    with pytest.raises(ValueError, match=message):
        quotas.update_entity(entity_of("users/alice"), {"producer_byte_rate": value})


def test_figures_name_the_sensor_and_its_rates(quotas):
    quotas.set_quota("users/alice", producer_byte_rate=1000)
    quotas.record_produce("User:alice", "app", 20_000)
    (fig,) = quotas.figures()
    assert (fig.group, fig.rate_metric, fig.user, fig.client_id, fig.bound) == (
        "Produce",
        "byte-rate",
        "alice",
        "",
        1000,
    )
    assert fig.rate == pytest.approx(2000.0)
    assert fig.throttle_time_ms == pytest.approx(10_000.0)


def test_from_config_reads_the_windows():
    from broker.config import BrokerConfig

    config = BrokerConfig.from_properties(
        {
            "broker.id": "0",
            "log.dirs": "/tmp/x",
            "zookeeper.connect": "memory:x",
            "quota.window.num": "5",
            "quota.window.size.seconds": "2",
        }
    )
    q = QuotaManager.from_config(config)
    assert (q.produce.num_samples, q.produce.window_ms, q.request.max_throttle_ms) == (5, 2000, 2000)


def test_replace_all_leaves_out_only_the_entities_it_cannot_use(quotas):
    quotas.replace_all(
        {
            entity_of("users/alice"): {"producer_byte_rate": "lots"},
            (("ip", "10.0.0.1"),): {"producer_byte_rate": "1000"},
            entity_of("users/bob"): {"producer_byte_rate": "1000.0"},
        }
    )
    assert quotas.produce.bounds() == {entity_of("users/bob"): 1000.0}


def test_the_metrics_endpoint_names_sensors_as_kafka_does(quotas):
    from prometheus_client import generate_latest

    from broker.metrics import BrokerMetrics

    metrics = BrokerMetrics()
    metrics.watch_quotas(quotas.figures)
    quotas.set_quota("users/alice/clients/<default>", consumer_byte_rate=1000, request_percentage=50)
    quotas.record_fetch("User:alice", "app", 20_000)
    quotas.record_request_time("User:alice", "app", 0.5)
    text = generate_latest(metrics.registry).decode()
    assert 'kafka_server_fetch_byte_rate{client_id="app",user="alice"} 2000.0' in text
    assert 'kafka_server_fetch_throttle_time{client_id="app",user="alice"} 10000.0' in text
    assert 'kafka_server_request_request_time{client_id="app",user="alice"} 5.0' in text
    assert 'kafka_server_request_throttle_time{client_id="app",user="alice"} 0.0' in text
    assert "kafka_server_produce_" not in text  # no Produce quota: nothing measured
