"""Topic administration shared by CreateTopics, Metadata auto-creation, CreatePartitions and DeleteTopics.

Any broker may create a topic: it validates the request, spreads replicas over the live brokers
(``assign_replicas``), and writes the configuration and assignment to the registry in one transaction.
The controller then creates each partition's state (leader, ISR) and every broker opens its logs when
its watches report the new topic. ``wait_for_leaders`` lets a caller wait until this broker's metadata
shows a leader for every partition. Deletion marks the topic under ``/admin/delete_topics``; the
controller removes it.

Errors are ``TopicAdminError(error_code, message)`` with Kafka's error codes. Registry calls block, so
every coroutine here runs them in the broker's executor. Event-loop only.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from typing import TYPE_CHECKING, Mapping

from spark_kafkalog.protocol import ErrorCode

from .config import ConfigError
from .metadata_cache import assign_replicas

if TYPE_CHECKING:
    from .server import Broker

_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")
MAX_NAME_LENGTH = 249


class TopicAdminError(Exception):
    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


def validate_topic_name(name: str) -> None:
    if not name:
        raise TopicAdminError(ErrorCode.INVALID_TOPIC_EXCEPTION, "topic name is empty")
    if name in (".", ".."):
        raise TopicAdminError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"topic name cannot be {name!r}")
    if len(name) > MAX_NAME_LENGTH:
        raise TopicAdminError(
            ErrorCode.INVALID_TOPIC_EXCEPTION, f"topic name is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}"
        )
    if not _LEGAL.fullmatch(name):
        raise TopicAdminError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"topic name {name!r} has characters other than ASCII letters, digits, '.', '_' and '-'",
        )


class TopicAdmin:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    async def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        config: Mapping[str, str | None] | None = None,
        assignments: Mapping[int, list[int]] | None = None,
        *,
        validate_only: bool = False,
    ) -> tuple[uuid.UUID, dict[int, tuple[int, ...]], dict[str, str]]:
        """Validate and create a topic; returns its id, assignment and topic-level config overrides."""
        from .cluster.registry import TopicAssignment, TopicExistsError

        b = self.broker
        validate_topic_name(name)
        if name in b.metadata.topics:
            raise TopicAdminError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        overrides = {k: v for k, v in (config or {}).items() if v is not None}
        try:
            b.default_log_config.with_topic_overrides(overrides)
        except ConfigError as e:
            raise TopicAdminError(ErrorCode.INVALID_CONFIG, str(e)) from None
        live = sorted(b.metadata.brokers)
        if assignments:
            if num_partitions not in (-1, len(assignments)) or replication_factor != -1:
                raise TopicAdminError(
                    ErrorCode.INVALID_REQUEST,
                    "give either replica assignments or num_partitions and replication_factor, not both",
                )
            replicas = _check_assignment(assignments, live, first_partition=0)
        else:
            n = b.config["num.partitions"] if num_partitions == -1 else num_partitions
            rf = b.config["default.replication.factor"] if replication_factor == -1 else replication_factor
            if n < 1:
                raise TopicAdminError(ErrorCode.INVALID_PARTITIONS, f"number of partitions must be at least 1, not {n}")
            if rf < 1:
                raise TopicAdminError(
                    ErrorCode.INVALID_REPLICATION_FACTOR, f"replication factor must be at least 1, not {rf}"
                )
            if rf > len(live):
                raise TopicAdminError(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"replication factor {rf} is larger than the number of live brokers ({len(live)})",
                )
            replicas = {p: tuple(r) for p, r in assign_replicas(live, n, rf).items()}
        topic_id = uuid.uuid4()
        if validate_only:
            return topic_id, replicas, overrides
        try:
            await b.run_blocking(b.registry.create_topic, TopicAssignment(name, replicas, topic_id), overrides)
        except TopicExistsError:
            raise TopicAdminError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists") from None
        return topic_id, replicas, overrides

    async def create_partitions(
        self, name: str, count: int, assignments: list[list[int]] | None = None, *, validate_only: bool = False
    ) -> None:
        b = self.broker
        t = b.metadata.topics.get(name)
        if t is None:
            raise TopicAdminError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        current = t.num_partitions
        if count <= current:
            raise TopicAdminError(
                ErrorCode.INVALID_PARTITIONS, f"topic {name!r} has {current} partitions; the new count must be larger, not {count}"
            )
        live = sorted(b.metadata.brokers)
        if assignments is not None:
            if len(assignments) != count - current:
                raise TopicAdminError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"{len(assignments)} assignments given for {count - current} new partitions",
                )
            new = _check_assignment(dict(enumerate(assignments, start=current)), live, first_partition=current)
        else:
            rf = len(next(iter(t.replicas.values())))
            if rf > len(live):
                raise TopicAdminError(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"replication factor {rf} is larger than the number of live brokers ({len(live)})",
                )
            new = {p: tuple(r) for p, r in assign_replicas(live, count - current, rf, start_partition=current).items()}
        if not validate_only:
            await b.run_blocking(b.registry.add_partitions, name, new)

    async def delete_topic(self, name: str) -> None:
        b = self.broker
        if not b.config["delete.topic.enable"]:
            raise TopicAdminError(ErrorCode.TOPIC_DELETION_DISABLED, "delete.topic.enable is false on this broker")
        if name not in b.metadata.topics:
            raise TopicAdminError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        await b.run_blocking(b.registry.mark_topic_for_deletion, name)

    async def wait_for(self, condition, timeout_s: float) -> bool:
        """Poll this broker's metadata until ``condition()`` holds; False on timeout."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    def has_leaders(self, name: str, num_partitions: int | None = None) -> bool:
        t = self.broker.metadata.topics.get(name)
        if t is None or (num_partitions is not None and t.num_partitions < num_partitions):
            return False
        return all(t.leader(p) >= 0 for p in t.replicas)


def _check_assignment(
    assignments: Mapping[int, list[int]], live: list[int], *, first_partition: int
) -> dict[int, tuple[int, ...]]:
    parts = sorted(assignments)
    if parts != list(range(first_partition, first_partition + len(parts))):
        raise TopicAdminError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"partitions {parts} are not consecutive from {first_partition}",
        )
    sizes = {len(r) for r in assignments.values()}
    if len(sizes) != 1 or 0 in sizes:
        raise TopicAdminError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "every partition needs the same, non-zero number of replicas")
    out = {}
    for p, reps in assignments.items():
        if len(set(reps)) != len(reps):
            raise TopicAdminError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"partition {p} lists a broker twice: {list(reps)}")
        unknown = [r for r in reps if r not in live]
        if unknown:
            raise TopicAdminError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"partition {p} names brokers that are not live: {unknown}")
        out[p] = tuple(reps)
    return out
