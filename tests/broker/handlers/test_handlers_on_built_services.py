"""Handlers called directly with the services of an unstarted broker (tests/broker/services_builder.py): the
answers that depend on a part's state (the controller not active, the broker stopping), with fakes where the
test needs a part in a state an unstarted broker cannot be in."""

from __future__ import annotations

import asyncio

from broker.cluster.registry import BrokerInfo
from broker.handlers import (
    api_versions,
    controlled_shutdown,
    find_coordinator,
    list_groups,
    list_partition_reassignments,
    list_transactions,
)
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ..services_builder import build_services, request_context


def call(services, module, version, **fields):
    body = API_BY_KEY[module.API_KEY].Request(**fields)
    return asyncio.run(module.handle(request_context(services, module.API_KEY, version), body))


class ActiveController:
    """A controller that holds ``/controller`` and finds broker 2 still leading ``t-0``."""

    is_active = True

    def __init__(self) -> None:
        self.asked: list[int] = []

    async def controlled_shutdown(self, broker_id):
        self.asked.append(broker_id)
        return [("t", 0)]


def test_controlled_shutdown_on_a_broker_that_is_not_the_controller_answers_not_controller(tmp_path):
    resp = call(build_services(tmp_path), controlled_shutdown, 3, broker_id=2, broker_epoch=-1)
    assert (resp.error_code, resp.remaining_partitions) == (ErrorCode.NOT_CONTROLLER, [])


def test_controlled_shutdown_on_the_controller_answers_what_the_broker_still_leads(tmp_path):
    controller = ActiveController()
    services = build_services(tmp_path, controller=controller)
    unknown = call(services, controlled_shutdown, 3, broker_id=2, broker_epoch=-1)
    assert unknown.error_code == ErrorCode.BROKER_NOT_AVAILABLE and controller.asked == []
    services.metadata.set_brokers({2: BrokerInfo(2, "127.0.0.1", 9092)})
    resp = call(services, controlled_shutdown, 3, broker_id=2, broker_epoch=-1)
    assert resp.error_code == ErrorCode.NONE and controller.asked == [2]
    assert [(r.topic_name, r.partition_index) for r in resp.remaining_partitions] == [("t", 0)]


def test_list_reassignments_on_a_broker_that_is_not_the_controller_answers_not_controller(tmp_path):
    resp = call(build_services(tmp_path), list_partition_reassignments, 0, timeout_ms=1000, topics=None)
    assert resp.error_code == ErrorCode.NOT_CONTROLLER


def test_find_coordinator_on_a_stopping_broker_answers_coordinator_not_available(tmp_path):
    services = build_services(tmp_path, is_stopping=lambda: True)
    for key_type in (0, 1):  # a group, a transactional id
        resp = call(services, find_coordinator, 3, key="k", key_type=key_type)
        assert (resp.error_code, resp.node_id) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)


def test_coordinators_that_coordinate_nothing_list_nothing(tmp_path):
    services = build_services(tmp_path)
    groups = call(services, list_groups, 4, states_filter=[])
    assert (groups.error_code, groups.groups) == (ErrorCode.NONE, [])
    txns = call(services, list_transactions, 0, state_filters=["Ongoing", "Bogus"], producer_id_filters=[])
    assert (txns.error_code, txns.unknown_state_filters, txns.transaction_states) == (ErrorCode.NONE, ["Bogus"], [])


def test_api_versions_answers_from_the_served_handlers(tmp_path):
    resp = call(build_services(tmp_path), api_versions, 3, client_software_name="t", client_software_version="1")
    served = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert resp.error_code == ErrorCode.NONE
    assert served[ApiKey.CONTROLLED_SHUTDOWN] == controlled_shutdown.VERSIONS
