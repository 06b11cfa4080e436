"""The project's transactional producer picks transactions v2 (KIP-890 part 2) when the broker finalizes
``transaction.version`` 2, and the old protocol at level 0: either way commits are read and aborts are not,
offsets sent in a transaction become the group's on commit; under v2 the producer epoch moves on every
transaction end (EndTxn v5's answer), no AddPartitionsToTxn/AddOffsetsToTxn is sent, and the coordinator
records the transaction as a v2 one."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.client import AdminClient, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.protocol import ApiKey
from tests.broker.conftest import start_brokers
from tests.confluent_read import confluent_values
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=[2, 0], ids=["transaction.version=2", "transaction.version=0"])
def broker(request, tmp_path_factory):
    (b,) = start_brokers(
        1,
        tmp_path_factory,
        transaction_state_log_num_partitions=3,
        offsets_topic_num_partitions=3,
        group_initial_rebalance_delay_ms=0,
        transaction_version=request.param,
    )
    b.transaction_version = request.param
    yield b
    b.stop()


def _topic(broker, partitions=2) -> str:
    name = f"tv2-{uuid.uuid4().hex[:8]}"
    with AdminClient(broker.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


class _CountingRequests:
    """Counts the requests a KafkaClient sends, by API key (wrapping ``send_request``)."""

    def __init__(self, client) -> None:
        self.counts: dict[int, int] = {}
        self.versions: dict[int, set[int]] = {}
        original = client.send_request

        def send_request(api_key, body, **kw):
            version, response = original(api_key, body, **kw)
            self.counts[api_key] = self.counts.get(api_key, 0) + 1
            self.versions.setdefault(api_key, set()).add(version)
            return version, response

        client.send_request = send_request


def test_the_producer_uses_v2_when_the_broker_finalizes_it_and_commits_and_aborts_either_way(broker):
    topic = _topic(broker)
    v2 = broker.transaction_version >= 2
    tid = f"t-{uuid.uuid4().hex[:6]}"
    with Producer(broker.bootstrap_servers, transactional_id=tid, linger_ms=1) as producer:
        producer.init_transactions(30)
        txn = producer._transactions
        assert txn is not None and txn.transactions_v2 is v2
        requests = _CountingRequests(txn.client)
        epochs = [producer.transaction_identity[2]]
        for n in range(3):
            producer.begin_transaction()
            for i in range(5):
                producer.send(topic, b"c%d-%d" % (n, i), b"k%d" % i)
            producer.commit_transaction(30)
            epochs.append(producer.transaction_identity[2])
        producer.begin_transaction()
        producer.send(topic, b"aborted")
        producer.flush(30)
        producer.abort_transaction(30)
        epochs.append(producer.transaction_identity[2])
        producer.begin_transaction()
        producer.commit_transaction(30)  # nothing sent: no EndTxn, the epoch stays
        epochs.append(producer.transaction_identity[2])
    first = epochs[0]
    assert epochs == ([first + n for n in range(5)] + [first + 4] if v2 else [first] * 6)
    assert requests.versions[ApiKey.END_TXN] == ({5} if v2 else {4})
    assert (ApiKey.ADD_PARTITIONS_TO_TXN in requests.counts) is not v2
    expected = sorted(b"c%d-%d" % (n, i) for n in range(3) for i in range(5))
    got = confluent_values(broker.bootstrap_servers, topic, "read_committed", len(expected), timeout_s=30)
    assert sorted(got) == expected
    meta = broker.call(lambda: broker.broker.txn_coordinator.txns[tid])
    assert meta.client_transaction_version == (2 if v2 else 0)


def test_offsets_sent_in_a_transaction_become_the_groups_on_commit_only(broker):
    topic = _topic(broker, partitions=1)
    group = f"g-{uuid.uuid4().hex[:6]}"
    tp = TopicPartition(topic, 0)
    v2 = broker.transaction_version >= 2
    with (
        Producer(broker.bootstrap_servers, transactional_id=f"t-{uuid.uuid4().hex[:6]}", linger_ms=1) as producer,
        AdminClient(broker.bootstrap_servers) as admin,
    ):
        producer.init_transactions(30)
        requests = _CountingRequests(producer._transactions.client)
        groups = GroupAdmin(admin.client)
        producer.begin_transaction()
        producer.send(topic, b"x")
        producer.send_offsets_to_transaction({tp: 7}, group)
        producer.abort_transaction(30)
        assert groups.list_group_offsets(group).get(tp) is None
        producer.begin_transaction()
        producer.send_offsets_to_transaction({tp: 42}, group)  # offsets only: the transaction still ends
        producer.commit_transaction(30)
        wait_until(lambda: groups.list_group_offsets(group).get(tp) is not None, 10, "the transaction's offset")
        assert groups.list_group_offsets(group)[tp].offset == 42
    assert (ApiKey.ADD_OFFSETS_TO_TXN in requests.counts) is not v2
    assert requests.versions[ApiKey.TXN_OFFSET_COMMIT] == ({5} if v2 else {4})  # v5 adds the group's partition
