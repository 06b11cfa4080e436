"""Helpers for replication tests: in-process brokers on one ``memory:`` registry, restartable by id."""

from __future__ import annotations

import uuid

from broker.cluster.registry import TopicAssignment
from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import ApiKey

from ..requests import batch, produce_body
from ..wire import Wire


class Cluster:
    def __init__(self, n: int, tmp_path_factory, **overrides) -> None:
        self.name = f"memory:repl-{uuid.uuid4().hex[:8]}"
        self.overrides = overrides
        self.dirs = {i: tmp_path_factory.mktemp(f"broker{i}") for i in range(n)}
        self.brokers: dict[int, EmbeddedBroker] = {}
        for i in range(n):
            self.start(i)

    def start(self, i: int) -> EmbeddedBroker:
        b = EmbeddedBroker(i, zookeeper_connect=self.name, log_dir=self.dirs[i], **self.overrides).start()
        self.brokers[i] = b
        return b

    def stop(self, i: int) -> None:
        self.brokers.pop(i).stop()

    def close(self) -> None:
        for i in list(self.brokers):
            self.stop(i)

    def any(self) -> EmbeddedBroker:
        return next(iter(self.brokers.values()))

    def create_topic(self, name: str, replicas: dict[int, tuple[int, ...]], config: dict[str, str] | None = None):
        b = self.any()
        b.call(
            lambda: b.broker.run_blocking(b.broker.registry.create_topic, TopicAssignment(name, replicas), config or {})
        )

    def state(self, topic: str, p: int = 0):
        b = self.any()
        return b.call(lambda: b.broker.run_blocking(b.broker.registry.partition_state, topic, p))

    def set_state(self, topic: str, state, p: int = 0):
        """Compare-and-set the partition state (as the controller writes it)."""
        b = self.any()
        return b.call(lambda: b.broker.run_blocking(b.broker.registry.update_partition_state, topic, p, state))

    def pause_fetching(self, i: int, topic: str, p: int = 0) -> None:
        """Broker ``i`` stops copying the partition (a follower that is alive but no longer keeps up);
        a restart of the broker or a new leader epoch makes it follow again."""
        from broker.replication.partition import TopicPartition

        rm = self.brokers[i].broker.replica_manager
        self.brokers[i].call(lambda: rm.fetchers.remove(TopicPartition(topic, p)))

    def partition(self, i: int, topic: str, p: int = 0):
        return self.brokers[i].broker.replica_manager.get_partition(topic, p)

    def log_bytes(self, i: int, topic: str, p: int = 0) -> bytes:
        """Every batch of broker ``i``'s replica, as stored."""
        b = self.brokers[i]

        def read():
            from spark_kafkalog.records import iter_batches

            plog = self.partition(i, topic, p).log
            out, offset = [], plog.log_start_offset
            while offset < plog.log_end_offset:
                data = plog.read(offset, 1 << 30, max_offset=None, min_one_batch=True)
                chunk = bytes(data.records.read_bytes())
                out.append(chunk)
                offset = max(b.last_offset for b in iter_batches(chunk)) + 1
            return b"".join(out)

        return b.call(read)

    def offsets(self, i: int, topic: str, p: int = 0) -> tuple[int, int]:
        """(log end offset, high watermark) of broker ``i``'s replica."""
        b = self.brokers[i]
        return b.call(lambda: (lambda pl: (pl.log_end_offset, pl.high_watermark))(self.partition(i, topic, p).log))

    def produce(self, i: int, topic: str, values, *, acks: int = -1, p: int = 0):
        with Wire(self.brokers[i].bootstrap_servers) as w:
            resp = w.call(ApiKey.PRODUCE, 9, produce_body(topic, p, batch(values), acks))
        return resp.responses[0].partition_responses[0]
