"""``PollingMember``: one kafkalog ``Consumer`` group member polling in a thread of its own, for the tests that run
kafkalog's consumer against a real broker (Apache Kafka in tests/compat, kafkalog in tests/integration).

``owned`` is its current assignment, ``records`` every (topic, partition, offset, value) it read, ``events`` the
rebalance callbacks it got, in order; ``member_id`` and ``epoch`` its KIP-848 identity (group.protocol=consumer).
``stop()`` closes the consumer in its thread (leaving the group) and re-raises what the thread met.
"""

from __future__ import annotations

import threading
from typing import Any

from spark_kafkalog.client import Consumer, TopicPartition


class PollingMember:
    def __init__(
        self, bootstrap: str, group: str, topics: tuple[str, ...] = (), pattern: str | None = None, **config: Any
    ) -> None:
        self.settings: dict[str, Any] = {
            "group_id": group,
            "group_protocol": "consumer",
            "auto_offset_reset": "earliest",
            "fetch_max_wait_ms": 100,
            **config,
        }
        self.bootstrap, self.topics, self.pattern = bootstrap, topics, pattern
        self.owned: set[TopicPartition] = set()
        self.records: list[tuple[str, int, int, bytes]] = []
        self.events: list[tuple[str, tuple[TopicPartition, ...]]] = []
        self.errors: list[BaseException] = []
        self.subscribed: set[str] = set()  # Consumer.subscription() after the last poll
        self.member_id: str | None = None
        self.epoch = -1
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self._ready.wait(30)

    # the listener (called on the member's own thread from poll and close)
    def on_partitions_revoked(self, partitions: list[TopicPartition]) -> None:
        self.events.append(("revoked", tuple(partitions)))

    def on_partitions_assigned(self, partitions: list[TopicPartition]) -> None:
        self.events.append(("assigned", tuple(partitions)))

    def on_partitions_lost(self, partitions: list[TopicPartition]) -> None:
        self.events.append(("lost", tuple(partitions)))

    def _run(self) -> None:
        try:
            with Consumer(self.bootstrap, **self.settings) as consumer:
                consumer.subscribe(self.topics, pattern=self.pattern, listener=self)
                self._ready.set()
                while not self._stop.is_set():
                    batch = consumer.poll(200)
                    with self._lock:
                        self.records += [(r.topic, r.partition, r.offset, r.value) for r in batch]
                        self.owned = set(consumer.assignment())
                        self.subscribed = consumer.subscription()
                        identity = consumer.group_metadata()
                        self.member_id, self.epoch = identity.member_id, identity.generation_id
        except BaseException as e:  # re-raised by stop()
            self.errors.append(e)
        finally:
            self._ready.set()

    def snapshot(self) -> set[TopicPartition]:
        """The current assignment; raises what the member's thread met (so waits fail at once)."""
        self._check()
        with self._lock:
            return set(self.owned)

    def read(self) -> list[tuple[str, int, int, bytes]]:
        self._check()
        with self._lock:
            return list(self.records)

    def _check(self) -> None:
        if self.errors and self.thread.is_alive() is False:
            raise self.errors[0]

    def stop(self, timeout: float = 30) -> None:
        self._stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the member did not close"
        if self.errors:
            raise self.errors[0]


def is_split(members: list[PollingMember], partitions: set[TopicPartition]) -> bool:
    """Every member owns a non-empty share; the shares are disjoint and cover ``partitions``."""
    owned = [m.snapshot() for m in members]
    return all(owned) and sum(len(s) for s in owned) == len(partitions) and set().union(*owned) == partitions
