"""``AIOProducer``'s transactions run natively on its event loop (``aio.transactions.AsyncTransactionManager``)
against an in-process broker, with transactions v2 (``transaction.version=2``, the default) and without
(``0``: AddPartitionsToTxn and AddOffsetsToTxn): a coordinator that moves or loads mid-transaction
(``broker.faults``) is found again and the call retried, a second producer with the same transactional id
fences the first, offsets sent in a transaction become the group's committed offsets only on commit, an abort
hides the records from read_committed readers, a failed record makes the transaction abortable (the abort bumps
the epoch and the next one commits), and no thread is used (the blocking client is not touched).

Each test runs its coroutine with ``asyncio.run`` (the repository has no pytest-asyncio)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from spark_kafkalog.client import AdminClient, KafkaClientError, NewTopic, TopicPartition
from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.client.aio.producer import AIOProducer
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.producer.transactions import ProducerFencedError, TransactionError, TxnState
from tests.broker.conftest import start_brokers
from tests.confluent_read import confluent_values
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

T = TypeVar("T")
FAST: dict[str, Any] = {"retry_backoff_ms": 10, "retry_backoff_max_ms": 100, "linger_ms": 2}


def run(coro: Awaitable[T], timeout: float = 60.0) -> T:
    async def main() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(main())


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
    yield b
    b.stop()


def offers_v2(broker) -> bool:
    """Whether the broker finalizes ``transaction.version`` 2 (the fixture's parameter)."""
    return int(broker.broker.config["transaction.version"]) >= 2


def new_topic(broker, partitions: int = 2) -> str:
    name = f"aio-txn-{uuid.uuid4().hex[:8]}"
    with AdminClient(broker.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


def new_id() -> str:
    return f"aio-tid-{uuid.uuid4().hex[:8]}"


def read(broker, topic: str, isolation: str, expect: int, idle_s: float = 2.0) -> list[bytes]:
    return sorted(confluent_values(broker.bootstrap_servers, topic, isolation, expect, idle_s=idle_s, timeout_s=30))


def test_the_transaction_version_the_broker_offers_is_used(broker):
    async def main() -> bool:
        async with AIOProducer(broker.bootstrap_servers, transactional_id=new_id(), **FAST) as producer:
            await producer.init_transactions(30)
            assert producer._transactions is not None
            return producer._transactions.transactions_v2

    assert run(main()) is offers_v2(broker)


def test_a_coordinator_that_moves_or_loads_mid_transaction_is_found_again(broker):
    topic = new_topic(broker)
    group = f"g-{uuid.uuid4().hex[:6]}"
    tp = TopicPartition(topic, 0)
    v2 = offers_v2(broker)
    faults = broker.faults

    async def main() -> None:
        async with AIOProducer(broker.bootstrap_servers, transactional_id=new_id(), **FAST) as producer:
            await producer.init_transactions(30)
            with faults.track_requests() as log:
                moved = [faults.push_errors("TxnOffsetCommit", ["NOT_COORDINATOR"])]
                if not v2:
                    moved.append(faults.push_errors("AddPartitionsToTxn", ["NOT_COORDINATOR"]))
                    moved.append(faults.push_errors("AddOffsetsToTxn", ["COORDINATOR_NOT_AVAILABLE"]))
                loading = faults.push_errors("EndTxn", ["COORDINATOR_LOAD_IN_PROGRESS", "CONCURRENT_TRANSACTIONS"])
                producer.begin_transaction()
                sent = [await producer.send(topic, b"moved-%d" % i, partition=i % 2) for i in range(10)]
                await producer.send_offsets_to_transaction({tp: 5}, group, 30)
                await producer.commit_transaction(30)
                assert all(f.result().offset >= 0 for f in sent)
            for injection in (*moved, loading):
                assert injection.remaining == 0
            assert log.count("EndTxn") == 3  # two errors, then the commit
            assert log.count("TxnOffsetCommit") == 2
            if not v2:
                assert log.count("AddPartitionsToTxn") >= 2  # the failed one again (and a later partition's)
                assert log.count("AddOffsetsToTxn") == 2
            # every NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / LOAD_IN_PROGRESS sends it to FindCoordinator again
            assert log.count("FindCoordinator") >= (4 if not v2 else 2)

    run(main())
    assert read(broker, topic, "read_committed", 10) == sorted(b"moved-%d" % i for i in range(10))
    with AdminClient(broker.bootstrap_servers) as admin:
        assert GroupAdmin(admin.client).list_group_offsets(group)[tp].offset == 5


def test_a_second_producer_with_the_same_id_fences_the_first(broker):
    topic = new_topic(broker)
    tid = new_id()

    async def main() -> None:
        async with AIOProducer(broker.bootstrap_servers, transactional_id=tid, **FAST) as zombie:
            await zombie.init_transactions(30)
            zombie.begin_transaction()
            await zombie.send_and_wait(topic, b"zombie")
            async with AIOProducer(broker.bootstrap_servers, transactional_id=tid, **FAST) as successor:
                await successor.init_transactions(30)  # aborts the zombie's open transaction
                successor.begin_transaction()
                await successor.send(topic, b"successor")
                await successor.commit_transaction(30)
            with pytest.raises(ProducerFencedError, match="another producer with the same transactional.id"):
                await zombie.commit_transaction(30)
            assert zombie._transactions is not None and zombie._transactions.state is TxnState.FATAL_ERROR
            with pytest.raises(ProducerFencedError):
                zombie.begin_transaction()
            with pytest.raises(ProducerFencedError):
                await zombie.abort_transaction(30)

    run(main())
    assert read(broker, topic, "read_committed", 1) == [b"successor"]


def test_offsets_sent_in_a_transaction_become_the_groups_on_commit_only(broker):
    topic = new_topic(broker, partitions=1)
    group = f"g-{uuid.uuid4().hex[:6]}"
    tp = TopicPartition(topic, 0)

    with AdminClient(broker.bootstrap_servers) as admin:
        groups = GroupAdmin(admin.client)

        async def main() -> None:
            async with AIOProducer(broker.bootstrap_servers, transactional_id=new_id(), **FAST) as producer:
                await producer.init_transactions(30)
                producer.begin_transaction()
                await producer.send(topic, b"x")
                await producer.send_offsets_to_transaction({tp: 7}, group, 30)
                await producer.abort_transaction(30)
                assert groups.list_group_offsets(group).get(tp) is None
                producer.begin_transaction()
                await producer.send(topic, b"y")
                await producer.send_offsets_to_transaction({(topic, 0): 42}, group, 30)
                await producer.commit_transaction(30)

        run(main())
        wait_until(lambda: groups.list_group_offsets(group).get(tp) is not None, 10, "the transaction's offset")
        assert groups.list_group_offsets(group)[tp].offset == 42


def test_an_abort_hides_the_records_from_read_committed_readers_without_a_thread(broker, monkeypatch):
    topic = new_topic(broker)
    started: list[threading.Thread] = []
    original_start = threading.Thread.start
    main_thread = threading.current_thread()

    def recording_start(thread: threading.Thread) -> None:
        if threading.current_thread() is main_thread:  # the loop's thread (the broker's own threads are not)
            started.append(thread)
        original_start(thread)

    def no_thread(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a transaction call used asyncio.to_thread")

    def no_blocking_client(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a transaction call used the blocking KafkaClient")

    async def main() -> None:
        async with AIOProducer(broker.bootstrap_servers, transactional_id=new_id(), **FAST) as producer:
            threads = threading.active_count()
            with monkeypatch.context() as patch:
                patch.setattr(threading.Thread, "start", recording_start)
                patch.setattr(asyncio, "to_thread", no_thread)
                patch.setattr(KafkaClient, "send_request", no_blocking_client)
                await producer.init_transactions(30)
                producer.begin_transaction()
                aborted = [await producer.send(topic, b"aborted-%d" % i, partition=i % 2) for i in range(10)]
                await producer.flush(30)
                assert all(f.result().offset >= 0 for f in aborted)
                await producer.abort_transaction(30)
                producer.begin_transaction()
                unsent = await producer.send(topic, b"aborted-unsent")
                await producer.abort_transaction(30)
                with pytest.raises(TransactionError):
                    await unsent
                producer.begin_transaction()
                for i in range(5):
                    await producer.send(topic, b"committed-%d" % i, partition=i % 2)
                await producer.commit_transaction(30)
            assert started == []
            assert threading.active_count() == threads

    run(main())
    committed = sorted(b"committed-%d" % i for i in range(5))
    assert read(broker, topic, "read_committed", 5) == committed
    everything = read(broker, topic, "read_uncommitted", 15)
    assert sorted(v for v in everything if v.startswith(b"aborted-")) == sorted(b"aborted-%d" % i for i in range(10))


def test_an_abortable_error_is_aborted_and_the_next_transaction_commits(broker):
    topic = new_topic(broker, partitions=1)

    async def main() -> None:
        async with AIOProducer(broker.bootstrap_servers, transactional_id=new_id(), **FAST) as producer:
            await producer.init_transactions(30)
            txn = producer._transactions
            assert txn is not None
            producer.begin_transaction()
            with broker.faults.push_errors("Produce", ["TOPIC_AUTHORIZATION_FAILED"], topic=topic):
                failed = await producer.send(topic, b"refused")
                with pytest.raises(KafkaClientError):
                    await failed
            assert txn.state is TxnState.ABORTABLE_ERROR
            with pytest.raises(TransactionError) as refused:
                await producer.commit_transaction(30)
            assert refused.value.abortable
            epoch = producer._sender.idempotence.producer_epoch
            await producer.abort_transaction(30)  # the sequence gap makes it bump the epoch (InitProducerId)
            assert producer._sender.idempotence.producer_epoch > epoch
            assert txn.state is TxnState.READY
            producer.begin_transaction()
            await producer.send(topic, b"after")
            await producer.commit_transaction(30)

    run(main())
    assert read(broker, topic, "read_committed", 1) == [b"after"]
