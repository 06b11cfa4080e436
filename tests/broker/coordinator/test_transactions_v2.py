"""Transactions v2 (KIP-890) over the wire against in-process brokers: EndTxn v5's epoch bump on every
transaction end, the move to a new producer id when the epoch is exhausted, retried EndTxns, the leader's
verification of transactional writes (a partition not added is refused; Produce v12 adds it; the coordinator on
another broker is asked with AddPartitionsToTxn v4), AddPartitionsToTxn v4 ``verify_only``, TxnOffsetCommit v5,
ApiVersions' ``transaction.version`` feature, and the ``__transaction_state`` records' v1 fields."""

from __future__ import annotations

import pytest

from broker.coordinator.offset_store import iter_log_records
from broker.coordinator.transaction_log import decode_txn_key, decode_txn_value
from broker.coordinator.txn_metadata import MAX_EPOCH
from broker.coordinator.txn_verification import Verification, clear_guard, produce_error, start_guard
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.conftest import start_brokers
from tests.waiting import wait_until

from ..requests import create, fetch_body, produce_body, unique
from ..txn_wire import (
    READ_COMMITTED,
    add_partitions,
    data_values,
    find_txn_coordinator,
    init_txn_producer,
    txn_batch,
)
from ..wire import Wire

K = ApiKey
E = ErrorCode


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, transaction_state_log_num_partitions=3)
    yield b
    b.stop()


@pytest.fixture()
def wire(broker):
    with Wire(broker.bootstrap_servers) as w:
        yield w


def produce_txn(w, tid, topic, pid, epoch, values, *, version=12, seq=0, partition=0):
    body = produce_body(topic, partition, txn_batch(pid, values, epoch=epoch, seq=seq), acks=-1)
    body.transactional_id = tid
    return w.call(K.PRODUCE, version, body).responses[0].partition_responses[0]


def end_txn(w, tid, pid, epoch, commit=True, version=5):
    R = API_BY_KEY[K.END_TXN].Request
    return w.call(K.END_TXN, version, R(transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit))


def end_txn_settled(w, tid, pid, epoch, commit=True, version=5):
    """EndTxn, retried while the previous transaction's markers are written (CONCURRENT_TRANSACTIONS)."""
    result = []

    def done():
        resp = end_txn(w, tid, pid, epoch, commit, version)
        result.append(resp)
        return resp.error_code != E.CONCURRENT_TRANSACTIONS

    wait_until(done, 10, "the answer")
    return result[-1]


def produce_settled(w, tid, topic, pid, epoch, values, **kw):
    """A transactional produce, retried while the verification cannot tell yet (NOT_ENOUGH_REPLICAS: the
    previous transaction's markers are still being written)."""
    result = []

    def done():
        r = produce_txn(w, tid, topic, pid, epoch, values, **kw)
        result.append(r)
        return r.error_code != E.NOT_ENOUGH_REPLICAS

    wait_until(done, 10, "the answer")
    return result[-1]


def committed_values(w, topic, partition=0):
    resp = w.call(K.FETCH, 12, fetch_body(topic, partition, 0, isolation=READ_COMMITTED))
    return data_values(resp.responses[0].partitions[0].records)


def txn_state(broker, tid):
    return broker.call(lambda: broker.broker.txn_coordinator.txns[tid])


# -- EndTxn v5: the epoch moves on every transaction end ------------------------------------------------------------
def test_end_txn_v5_bumps_the_epoch_on_every_transaction_and_markers_fence_the_old_epoch(broker, wire):
    topic, tid = unique(), unique()
    create(wire, topic)
    pid, epoch = init_txn_producer(wire, tid)
    for n in range(3):
        assert produce_settled(wire, tid, topic, pid, epoch + n, [f"v{n}".encode()]).error_code == E.NONE
        resp = end_txn_settled(wire, tid, pid, epoch + n, commit=True)
        assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (E.NONE, pid, epoch + n + 1)
    wait_until(lambda: committed_values(wire, topic) == [b"v0", b"v1", b"v2"], 10)
    # a late write of an ended transaction carries an epoch the markers already passed
    late = produce_txn(wire, tid, topic, pid, epoch + 1, [b"late"], seq=1)
    assert late.error_code == E.INVALID_PRODUCER_EPOCH


def test_a_retried_end_txn_v5_answers_the_new_epoch_again_and_an_older_epoch_is_fenced(broker, wire):
    topic, tid = unique(), unique()
    create(wire, topic)
    init_txn_producer(wire, tid)
    pid, epoch = init_txn_producer(wire, tid)  # epoch 1: epoch 0 is an older one
    assert produce_settled(wire, tid, topic, pid, epoch, [b"a"]).error_code == E.NONE
    first = end_txn(wire, tid, pid, epoch, commit=True)
    assert (first.error_code, first.producer_epoch) == (E.NONE, epoch + 1)
    retry = end_txn_settled(wire, tid, pid, epoch, commit=True)  # the response was "lost": same request again
    assert (retry.error_code, retry.producer_id, retry.producer_epoch) == (E.NONE, pid, epoch + 1)
    assert end_txn_settled(wire, tid, pid, epoch, commit=False).error_code == E.INVALID_TXN_STATE  # other outcome
    assert end_txn(wire, tid, pid, epoch - 1, commit=True).error_code == E.PRODUCER_FENCED
    assert end_txn(wire, tid, pid, epoch + 1, commit=True).error_code == E.INVALID_TXN_STATE  # nothing open
    aborted = end_txn(wire, tid, pid, epoch + 1, commit=False)  # a v2 abort of an empty transaction bumps too
    assert (aborted.error_code, aborted.producer_epoch) == (E.NONE, epoch + 2)


def test_end_txn_before_v5_keeps_the_epoch(broker, wire):
    topic, tid = unique(), unique()
    create(wire, topic)
    pid, epoch = init_txn_producer(wire, tid)
    assert add_partitions(wire, tid, pid, epoch, {topic: [0]}) == {(topic, 0): E.NONE}
    assert produce_txn(wire, tid, topic, pid, epoch, [b"x"], version=11).error_code == E.NONE
    resp = end_txn(wire, tid, pid, epoch, commit=True, version=4)
    assert resp.error_code == E.NONE
    assert end_txn_settled(wire, tid, pid, epoch, commit=True, version=4).error_code == E.NONE  # a retry
    assert txn_state(broker, tid).producer_epoch == epoch
    assert txn_state(broker, tid).client_transaction_version == 0


def test_an_exhausted_epoch_moves_to_a_new_producer_id_and_its_retry_is_recognised(broker, wire):
    topic, tid = unique(), unique()
    create(wire, topic)
    pid, _ = init_txn_producer(wire, tid)

    def exhaust():
        meta = broker.broker.txn_coordinator.txns[tid]
        meta.producer_epoch = MAX_EPOCH - 1

    broker.call(exhaust)
    epoch = MAX_EPOCH - 1
    assert produce_settled(wire, tid, topic, pid, epoch, [b"last"]).error_code == E.NONE
    resp = end_txn(wire, tid, pid, epoch, commit=True)
    assert resp.error_code == E.NONE and resp.producer_id != pid and resp.producer_epoch == 0
    new_pid = resp.producer_id
    retry = end_txn_settled(wire, tid, pid, epoch, commit=True)
    assert (retry.error_code, retry.producer_id, retry.producer_epoch) == (E.NONE, new_pid, 0)
    meta = txn_state(broker, tid)
    assert (meta.producer_id, meta.producer_epoch, meta.previous_producer_id) == (new_pid, 0, pid)
    wait_until(lambda: committed_values(wire, topic) == [b"last"], 10)
    # the new id carries on: a transaction at epoch 0
    assert produce_settled(wire, tid, topic, new_pid, 0, [b"next"]).error_code == E.NONE
    assert end_txn_settled(wire, tid, new_pid, 0).producer_epoch == 1


# -- verification ----------------------------------------------------------------------------------------------------
def test_a_transactional_write_to_a_partition_not_added_is_refused(broker, wire):
    topic, tid = unique(), unique()
    create(wire, topic, partitions=2)
    pid, epoch = init_txn_producer(wire, tid)
    assert add_partitions(wire, tid, pid, epoch, {topic: [0]}) == {(topic, 0): E.NONE}
    assert produce_txn(wire, tid, topic, pid, epoch, [b"in"], version=11, partition=0).error_code == E.NONE
    for version, error in ((9, E.INVALID_TXN_STATE), (10, E.INVALID_TXN_STATE), (11, E.TRANSACTION_ABORTABLE)):
        refused = produce_txn(wire, tid, topic, pid, epoch, [b"out"], version=version, partition=1)
        assert refused.error_code == error and "not added" in refused.error_message  # as Kafka 4.4 (tests/compat)
        assert refused.base_offset == -1 and refused.log_start_offset == -1
    R = API_BY_KEY[K.LIST_OFFSETS].Request
    lo = wire.call(
        K.LIST_OFFSETS,
        1,
        R(
            replica_id=-1,
            topics=[
                R.ListOffsetsTopic(
                    name=topic, partitions=[R.ListOffsetsTopic.ListOffsetsPartition(partition_index=1, timestamp=-1)]
                )
            ],
        ),
    )
    assert lo.topics[0].partitions[0].offset == 0  # nothing appended


def test_produce_v12_adds_the_partition_to_the_transaction(broker, wire):
    topic, tid = unique(), unique()
    create(wire, topic, partitions=2)
    pid, epoch = init_txn_producer(wire, tid)
    assert produce_txn(wire, tid, topic, pid, epoch, [b"p1"], partition=1).error_code == E.NONE
    meta = txn_state(broker, tid)
    assert meta.partitions == {(topic, 1)} and meta.client_transaction_version == 2
    # the same write below v12 from a fresh producer needs the add
    tid2 = unique()
    pid2, epoch2 = init_txn_producer(wire, tid2)
    assert produce_txn(wire, tid2, topic, pid2, epoch2, [b"x"], version=10).error_code == E.INVALID_TXN_STATE


def test_a_fenced_producer_is_refused_by_the_verification(broker, wire):
    topic, tid = unique(), unique()
    create(wire, topic)
    pid, old = init_txn_producer(wire, tid)
    _, new = init_txn_producer(wire, tid)
    resp = produce_txn(wire, tid, topic, pid, old, [b"zombie"])
    assert (resp.error_code, resp.log_start_offset) == (E.INVALID_PRODUCER_EPOCH, -1)
    assert txn_state(broker, tid).producer_epoch == new


def test_add_partitions_v4_verify_only_answers_without_adding(broker, wire):
    topic, tid = unique(), unique()
    create(wire, topic, partitions=2)
    pid, epoch = init_txn_producer(wire, tid)
    assert add_partitions(wire, tid, pid, epoch, {topic: [0]}) == {(topic, 0): E.NONE}
    R = API_BY_KEY[K.ADD_PARTITIONS_TO_TXN].Request
    Txn = R.AddPartitionsToTxnTransaction

    def verify(version, verify_only=True, epoch=epoch, txn_id=tid):
        body = R(
            transactions=[
                Txn(
                    transactional_id=txn_id,
                    producer_id=pid,
                    producer_epoch=epoch,
                    verify_only=verify_only,
                    topics=[Txn.AddPartitionsToTxnTopic(name=topic, partitions=[0, 1])],
                )
            ]
        )
        resp = wire.call(K.ADD_PARTITIONS_TO_TXN, version, body)
        assert resp.error_code == E.NONE
        (result,) = resp.results_by_transaction
        assert result.transactional_id == txn_id
        return {p.partition_index: p.partition_error_code for t in result.topic_results for p in t.results_by_partition}

    for version in (4, 5):
        assert verify(version) == {0: E.NONE, 1: E.INVALID_TXN_STATE}
        assert verify(version, epoch=epoch + 1) == {0: E.PRODUCER_FENCED, 1: E.PRODUCER_FENCED}
    assert txn_state(broker, tid).partitions == {(topic, 0)}
    assert verify(5, verify_only=False) == {0: E.NONE, 1: E.NONE}
    assert txn_state(broker, tid).partitions == {(topic, 0), (topic, 1)}


def test_the_coordinator_on_another_broker_is_asked_with_add_partitions_to_txn(tmp_path_factory):
    b0, b1 = start_brokers(2, tmp_path_factory, transaction_state_log_num_partitions=1)
    try:
        tid = unique()
        with Wire(b0.bootstrap_servers) as w:
            node = find_txn_coordinator(w, tid)  # one __transaction_state partition: its leader coordinates
        coordinator, other = (b0, b1) if node == b0.config.broker_id else (b1, b0)
        with Wire(coordinator.bootstrap_servers) as w0:
            pid, epoch = init_txn_producer(w0, tid)
            topic = unique()
            R = API_BY_KEY[K.CREATE_TOPICS].Request
            Topic = R.CreatableTopic
            w0.call(
                K.CREATE_TOPICS,
                4,
                R(
                    topics=[
                        Topic(
                            name=topic,
                            num_partitions=-1,
                            replication_factor=-1,
                            assignments=[
                                Topic.CreatableReplicaAssignment(partition_index=0, broker_ids=[other.config.broker_id])
                            ],
                        )
                    ],
                    timeout_ms=10000,
                ),
            )
            with Wire(other.bootstrap_servers) as w:
                wait_until(
                    lambda: other.call(lambda: other.broker.replica_manager.leader_partition(topic, 0)[0] is not None)
                )
                refused = produce_txn(w, tid, topic, pid, epoch, [b"x"], version=11)
                assert refused.error_code == E.TRANSACTION_ABORTABLE
                assert produce_txn(w, tid, topic, pid, epoch, [b"y"], version=12).error_code == E.NONE
                assert txn_state(coordinator, tid).partitions == {(topic, 0)}
                assert produce_txn(w, tid, topic, pid, epoch, [b"z"], version=11, seq=1).error_code == E.NONE
            with Wire(coordinator.bootstrap_servers) as wc:
                resp = end_txn(wc, tid, pid, epoch)
                assert (resp.error_code, resp.producer_epoch) == (E.NONE, epoch + 1)
    finally:
        b0.stop()
        b1.stop()


def test_txn_offset_commit_v5_adds_the_offsets_partition_and_v3_needs_add_offsets(broker, wire):
    tid, group = unique(), unique()
    pid, epoch = init_txn_producer(wire, tid)
    R = API_BY_KEY[K.TXN_OFFSET_COMMIT].Request
    topic = unique()
    create(wire, topic)

    def commit(version):
        body = R(
            transactional_id=tid,
            group_id=group,
            producer_id=pid,
            producer_epoch=epoch,
            topics=[
                R.TxnOffsetCommitRequestTopic(
                    name=topic,
                    partitions=[
                        R.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition(
                            partition_index=0, committed_offset=5, committed_metadata=""
                        )
                    ],
                )
            ],
        )
        FC = API_BY_KEY[K.FIND_COORDINATOR].Request
        wait_until(lambda: wire.call(K.FIND_COORDINATOR, 1, FC(key=group, key_type=0)).error_code == E.NONE)
        return wire.call(K.TXN_OFFSET_COMMIT, version, body).topics[0].partitions[0].error_code

    assert commit(3) == E.INVALID_TXN_STATE
    assert commit(5) == E.NONE
    assert any(t == "__consumer_offsets" for t, _ in txn_state(broker, tid).partitions)
    assert end_txn(wire, tid, pid, epoch).producer_epoch == epoch + 1


# -- ApiVersions and the log ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [3, 4])
def test_api_versions_finalizes_transaction_version_2(wire, version):
    resp = wire.call(K.API_VERSIONS, version, client_software_name="t", client_software_version="1")
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in resp.finalized_features}
    want = {"group.version": (1, 1), "share.version": (1, 1), "transaction.version": (2, 2)}
    assert finalized == want and resp.finalized_features_epoch >= 0
    supported = {f.name: (f.min_version, f.max_version) for f in resp.supported_features}
    both = {"group.version": (0, 1), "share.version": (0, 1), "transaction.version": (0, 2)}
    assert supported == (both if version >= 4 else {})  # KAFKA-17011: v3 omits min 0
    ranges = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert ranges[K.END_TXN] == (0, 5) and ranges[K.ADD_PARTITIONS_TO_TXN] == (0, 5) and ranges[K.PRODUCE][1] >= 12


def test_api_versions_at_transaction_version_0_finalizes_nothing(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, transaction_version=0)
    try:
        with Wire(b.bootstrap_servers) as w:
            resp = w.call(K.API_VERSIONS, 4, client_software_name="t", client_software_version="1")
            assert [f.name for f in resp.finalized_features] == ["group.version", "share.version"]
            assert [f.name for f in resp.supported_features] == [
                "group.version",
                "share.version",
                "transaction.version",
            ]
    finally:
        b.stop()


def test_transaction_state_records_are_value_v1_with_the_v2_fields(broker, wire):
    topic, tid = unique(), unique()
    create(wire, topic)
    pid, epoch = init_txn_producer(wire, tid)
    assert produce_settled(wire, tid, topic, pid, epoch, [b"r"]).error_code == E.NONE
    assert end_txn(wire, tid, pid, epoch).error_code == E.NONE
    wait_until(lambda: txn_state(broker, tid).state.display == "CompleteCommit", 10)
    coordinator = broker.broker.txn_coordinator
    p = coordinator.partition_of(tid)
    log = broker.call(lambda: broker.broker.replica_manager.leader_partition("__transaction_state", p)[0].log)
    values = [
        (bytes(v[:2]), decode_txn_value(v))
        for k, v in broker.call(lambda: list(iter_log_records(log)))
        if v is not None and decode_txn_key(k) == tid
    ]
    assert {version for version, _ in values} == {b"\x00\x01"}
    states = [(v.status, v.producer_epoch, v.client_transaction_version) for _, v in values]
    assert states[-3:] == [(1, epoch, 2), (2, epoch + 1, 2), (4, epoch + 1, 2)]  # Ongoing, PrepareCommit, Complete
    assert all(v.previous_producer_id == pid and v.next_producer_id == -1 for _, v in values[1:])


class _Partition:
    """Stands for a ``Partition`` as a guard key."""


def test_a_marker_landing_during_a_verification_voids_it_and_the_write_is_retried():
    part = _Partition()
    outcome = Verification(guards={("t", 0): (7, start_guard(part, 7))})
    assert outcome.refusal(("t", 0), part) is None
    clear_guard(part, 8)  # another producer's marker
    assert outcome.refusal(("t", 0), part) is None
    clear_guard(part, 7)
    code, message = outcome.refusal(("t", 0), part)
    assert code == E.NOT_ENOUGH_REPLICAS and "retry" in message  # retriable: the next attempt verifies again
    outcome.errors[("t", 1)] = (E.INVALID_TXN_STATE, "the partition was not added to the transaction")
    assert outcome.refusal(("t", 1), part) == (E.INVALID_TXN_STATE, "the partition was not added to the transaction")


@pytest.mark.parametrize(
    "code, version, answered",
    [
        (E.INVALID_TXN_STATE, 10, E.INVALID_TXN_STATE),
        (E.INVALID_TXN_STATE, 11, E.TRANSACTION_ABORTABLE),
        (E.PRODUCER_FENCED, 12, E.INVALID_PRODUCER_EPOCH),
        (E.CONCURRENT_TRANSACTIONS, 12, E.NOT_ENOUGH_REPLICAS),
        (E.COORDINATOR_NOT_AVAILABLE, 9, E.NOT_ENOUGH_REPLICAS),
        (E.NOT_COORDINATOR, 9, E.NOT_ENOUGH_REPLICAS),
        (E.NETWORK_EXCEPTION, 11, E.NOT_ENOUGH_REPLICAS),
        (E.TRANSACTION_ABORTABLE, 10, E.INVALID_TXN_STATE),
        (E.INVALID_PRODUCER_ID_MAPPING, 12, E.INVALID_PRODUCER_ID_MAPPING),
    ],
)
def test_coordinator_errors_as_the_producer_gets_them(code, version, answered):
    assert produce_error(code, version)[0] == answered
