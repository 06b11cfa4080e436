"""ElectLeaders (43) on built services: Alter on the cluster (CLUSTER_AUTHORIZATION_FAILED at the top level and
for every partition named, none when all were asked for), an unknown election type, and NOT_CONTROLLER from a
broker that is not the controller. Elections themselves: tests/broker/cluster/test_controller_elections.py and
tests/integration/admin/test_leader_election.py."""

from __future__ import annotations

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.handlers import elect_leaders
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode

from .acl_services import Op, Rt, Secured

E = ErrorCode
R = API_BY_KEY[elect_leaders.API_KEY].Request


@pytest.fixture
def sec(tmp_path):
    view = MemoryRegistryStore().view()
    view.start()
    s = Secured(tmp_path, view)
    s.topic("t", 2)
    yield s
    view.close()


def elect(sec, partitions, election_type=0, version=2):
    named = None if partitions is None else [R.TopicPartitions(topic=t, partitions=ps) for t, ps in partitions.items()]
    return sec.send(elect_leaders, version, R(election_type=election_type, topic_partitions=named))


def results(resp):
    return {(t.topic, p.partition_id): p.error_code for t in resp.replica_election_results for p in t.partition_result}


def test_without_alter_on_the_cluster_every_named_partition_is_refused(sec):
    resp = elect(sec, {"t": [0, 1]})
    assert resp.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert results(resp) == {("t", 0): E.CLUSTER_AUTHORIZATION_FAILED, ("t", 1): E.CLUSTER_AUTHORIZATION_FAILED}
    every = elect(sec, None)
    assert (every.error_code, every.replica_election_results) == (E.CLUSTER_AUTHORIZATION_FAILED, [])


def test_a_broker_that_is_not_the_controller_answers_not_controller(sec):
    sec.grant(Op.ALTER, Rt.CLUSTER)
    resp = elect(sec, {"t": [0]})
    assert (resp.error_code, results(resp)) == (E.NOT_CONTROLLER, {("t", 0): E.NOT_CONTROLLER})
    v0 = elect(sec, {"t": [1]}, version=0)
    assert results(v0) == {("t", 1): E.NOT_CONTROLLER}


def test_an_unknown_election_type_is_an_invalid_request(sec):
    sec.grant(Op.ALTER, Rt.CLUSTER)
    resp = elect(sec, {"t": [0]}, election_type=2)
    assert (resp.error_code, results(resp)) == (E.INVALID_REQUEST, {("t", 0): E.INVALID_REQUEST})
    assert "Unknown election type 2" in resp.replica_election_results[0].partition_result[0].error_message


def test_an_empty_partition_list_elects_nothing(sec):
    sec.grant(Op.ALTER, Rt.CLUSTER)
    resp = elect(sec, {})
    assert (resp.error_code, resp.replica_election_results) == (E.NONE, [])
