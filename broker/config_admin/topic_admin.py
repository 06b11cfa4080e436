"""Topic administration shared by CreateTopics, Metadata auto-creation, CreatePartitions and DeleteTopics.

Any broker may create a topic. Creation runs in three steps so that nothing is written for a request that
breaks a limit:

1. ``check_request_size`` refuses a request whose topics ask for more than ``max.partitions.per.request``
   new partitions in total, as a whole. Then ``plan_topic`` / ``plan_partitions`` validate each topic
   (name, existence, configs, replication factor, partition count, assignment, assignment size) and
   spread its new partitions over the live brokers (``assign_replicas``) into a ``TopicPlan``.
2. ``admit`` checks the plans against ``max.broker.partitions`` (replicas per broker, counting existing
   topics, plans admitted earlier in the request and writes of this broker its metadata does not show
   yet) and reserves the admitted plans' replicas so that concurrent requests count them.
3. ``write`` stores an admitted plan in the registry: a new topic's configuration and assignment in one
   transaction, new partitions as one compare-and-set of the assignment node. Either is a single ZooKeeper
   request of at most ``MAX_ASSIGNMENT_BYTES``, checked in step 1 (Kafka's layout keeps a topic's whole
   assignment in one znode, so it cannot be split; the bound keeps it far below ``jute.maxbuffer``). An
   unreachable registry is answered REQUEST_TIMED_OUT rather than by closing the connection.

The controller then creates each partition's state (leader, ISR) and every broker opens its logs when its
watches report the change. ``wait_for`` / ``has_leaders`` let a caller wait until this broker's metadata
shows a leader for every partition. Deletion marks the topic under ``/admin/delete_topics``; the
controller removes it.

Replication factor: at least 1 and at most the number of live brokers (INVALID_REPLICATION_FACTOR
otherwise); an explicit assignment gives every partition the same number of distinct, live replicas.

Errors are ``TopicAdminError(error_code, message)`` with Kafka's error codes. Registry calls block, so
every coroutine here runs them in the broker's executor. Event-loop only.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.protocol.topic_name import topic_name_problem

from ..cluster.registry import (
    ClusterRegistry,
    RegistryUnavailableError,
    StaleStateError,
    TopicAssignment,
    TopicExistsError,
    new_topic_id,
)
from ..config import ConfigError
from ..metadata.cache import assign_replicas

if TYPE_CHECKING:
    from ..config import BrokerConfig
    from ..log import LogConfig
    from ..metadata.cache import MetadataCache

MAX_ASSIGNMENT_BYTES = 512 * 1024
"""Largest topic assignment (plus configuration) written to ZooKeeper in one request: half of ZooKeeper's
default ``jute.maxbuffer`` (1 MiB), beyond which the server drops the connection and the session with it."""
RESERVATION_TTL_S = 60.0
"""How long a written plan is counted by ``admit`` while this broker's metadata does not show it yet."""


class TopicAdminError(Exception):
    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


def validate_topic_name(name: str) -> None:
    """INVALID_TOPIC_EXCEPTION unless ``name`` is a legal Kafka topic name (``spark_kafkalog.protocol.topic_name``)."""
    problem = topic_name_problem(name)
    if problem is not None:
        shown = name if len(name) <= 60 else f"{name[:40]}...({len(name)} characters)"
        raise TopicAdminError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"invalid topic name {shown!r}: {problem}")


@dataclass
class TopicPlan:
    """What one topic's creation (``existing == 0``) or partition increase would write, validated.

    ``replicas`` holds only the new partitions (partition id -> replica broker ids, preferred first);
    ``overrides`` are the topic-level configs of a new topic.
    """

    name: str
    replicas: dict[int, tuple[int, ...]]
    topic_id: uuid.UUID
    overrides: dict[str, str] = field(default_factory=dict)
    existing: int = 0
    _token: int | None = field(default=None, repr=False, compare=False)

    @property
    def new_partitions(self) -> int:
        return len(self.replicas)

    @property
    def replication_factor(self) -> int:
        return len(next(iter(self.replicas.values())))


@dataclass
class _Reservation:
    name: str
    replicas: dict[int, tuple[int, ...]]
    expires: float


class TopicAdmin:
    """Dependencies: the broker's config and metadata cache, the registry it writes to,
    ``log_config_for(topic overrides)`` to validate topic configs, ``run_blocking`` for registry writes."""

    def __init__(
        self,
        config: BrokerConfig,
        metadata: MetadataCache,
        registry: ClusterRegistry,
        log_config_for: Callable[[Mapping[str, str]], LogConfig],
        run_blocking: Callable[..., Awaitable[Any]],
    ) -> None:
        self.config = config
        self.metadata = metadata
        self.registry = registry
        self.log_config_for = log_config_for
        self.run_blocking = run_blocking
        self._reservations: dict[int, _Reservation] = {}
        self._tokens = itertools.count()

    # -- step 1: plan one topic -----------------------------------------------------------------------
    def plan_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        config: Mapping[str, str | None] | None = None,
        assignments: Mapping[int, list[int]] | None = None,
    ) -> TopicPlan:
        """Validate the creation of ``name`` (-1: the broker's ``num.partitions`` / ``default.replication.factor``)."""
        validate_topic_name(name)
        if name in self.metadata.topics:
            raise TopicAdminError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        overrides = {k: v for k, v in (config or {}).items() if v is not None}
        try:
            self.log_config_for(overrides)
        except ConfigError as e:
            raise TopicAdminError(ErrorCode.INVALID_CONFIG, str(e)) from None
        live = sorted(self.metadata.brokers)
        if assignments:
            if num_partitions not in (-1, len(assignments)) or replication_factor != -1:
                raise TopicAdminError(
                    ErrorCode.INVALID_REQUEST,
                    "give either replica assignments or num_partitions and replication_factor, not both",
                )
            self._check_request_limit(name, len(assignments))
            replicas = _check_assignment(assignments, live, first_partition=0)
        else:
            n = self.config["num.partitions"] if num_partitions == -1 else num_partitions
            rf = self.config["default.replication.factor"] if replication_factor == -1 else replication_factor
            if n < 1:
                raise TopicAdminError(ErrorCode.INVALID_PARTITIONS, f"number of partitions must be at least 1, not {n}")
            _check_replication_factor(rf, live)
            self._check_request_limit(name, n)
            replicas = {p: tuple(r) for p, r in assign_replicas(live, n, rf, racks=self._racks()).items()}
        plan = TopicPlan(name, replicas, new_topic_id(), overrides)
        _check_assignment_size(name, replicas, plan.topic_id, overrides)
        return plan

    def plan_partitions(self, name: str, count: int, assignments: list[list[int]] | None = None) -> TopicPlan:
        """Validate growing topic ``name`` to ``count`` partitions (``assignments``: one replica list per new one)."""
        t = self.metadata.topics.get(name)
        if t is None:
            raise TopicAdminError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        current = t.num_partitions
        if count <= current:
            raise TopicAdminError(
                ErrorCode.INVALID_PARTITIONS,
                f"topic {name!r} has {current} partitions; the new count must be larger, not {count}",
            )
        self._check_request_limit(name, count - current)
        live = sorted(self.metadata.brokers)
        if assignments is not None:
            if len(assignments) != count - current:
                raise TopicAdminError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"{len(assignments)} assignments given for {count - current} new partitions",
                )
            new = _check_assignment(dict(enumerate(assignments, start=current)), live, first_partition=current)
        else:
            rf = len(next(iter(t.replicas.values())))
            _check_replication_factor(rf, live, topic=name)
            placed = assign_replicas(live, count - current, rf, start_partition=current, racks=self._racks())
            new = {p: tuple(r) for p, r in placed.items()}
        _check_assignment_size(name, {**{p: tuple(r) for p, r in t.replicas.items()}, **new}, t.topic_id, t.config)
        return TopicPlan(name, new, t.topic_id, existing=current)

    def _racks(self) -> dict[int, str | None]:
        """``broker.rack`` of every live broker, from its registration (placement is rack-aware when all have one)."""
        return {b: info.rack for b, info in self.metadata.brokers.items()}

    def _check_request_limit(self, name: str, n: int) -> None:
        limit = self.config["max.partitions.per.request"]
        if n > limit:
            raise TopicAdminError(
                ErrorCode.INVALID_PARTITIONS,
                f"topic {name!r} asks for {n} new partitions, more than max.partitions.per.request={limit}; "
                f"ask for fewer or raise max.partitions.per.request on the broker",
            )

    # -- step 2: admit the plans of one request -------------------------------------------------------
    def check_request_size(self, new_partitions: Iterable[int]) -> TopicAdminError | None:
        """INVALID_PARTITIONS when a request's topics ask for more than ``max.partitions.per.request`` new
        partitions in total (counts below 1 are ignored: planning refuses them). Run before planning, so
        that an oversized request is refused as a whole and nothing of it is created."""
        counts = [n for n in new_partitions if n > 0]
        total, limit = sum(counts), self.config["max.partitions.per.request"]
        if total <= limit:
            return None
        return TopicAdminError(
            ErrorCode.INVALID_PARTITIONS,
            f"the request asks for {total} new partitions over {len(counts)} topics, more than "
            f"max.partitions.per.request={limit}; nothing was created: send fewer partitions per request "
            f"or raise max.partitions.per.request on the broker",
        )

    def requested_partitions(self, num_partitions: int, assignments: Mapping | None = None) -> int:
        """How many partitions a CreateTopics entry asks for (-1: the broker's ``num.partitions``)."""
        if assignments:
            return len(assignments)
        return self.config["num.partitions"] if num_partitions == -1 else num_partitions

    def admit(self, plans: Iterable[TopicPlan | None], *, reserve: bool = True) -> list[TopicAdminError | None]:
        """Check the request's plans against ``max.broker.partitions``; one error (or None) per plan, in order.

        ``None`` entries (topics that failed planning) are skipped and answered None. Each plan in order is
        refused (POLICY_VIOLATION) when it would put more than ``max.broker.partitions`` replicas on a
        broker, counting existing topics and the plans admitted before it. With ``reserve``, admitted plans
        are counted by later ``admit`` calls until this broker's metadata shows them (``release`` undoes it
        when the write fails).
        """
        plans = list(plans)
        errors: list[TopicAdminError | None] = [None] * len(plans)
        cfg = self.config
        broker_limit = cfg["max.broker.partitions"]
        held = self._replicas_per_broker()
        for i, plan in enumerate(plans):
            if plan is None:
                continue
            adding = Counter(r for reps in plan.replicas.values() for r in reps)
            over = sorted(bid for bid, n in adding.items() if held[bid] + n > broker_limit)
            if over:
                bid = over[0]
                errors[i] = TopicAdminError(
                    ErrorCode.POLICY_VIOLATION,
                    f"topic {plan.name!r} would add {adding[bid]} partition replicas to broker {bid}, which holds "
                    f"{held[bid]} already: more than max.broker.partitions={broker_limit}; refused: ask for fewer "
                    f"partitions, add brokers, or raise max.broker.partitions",
                )
                continue
            held.update(adding)
            if reserve:
                plan._token = next(self._tokens)
                self._reservations[plan._token] = _Reservation(
                    plan.name, dict(plan.replicas), time.monotonic() + RESERVATION_TTL_S
                )
        return errors

    def release(self, plan: TopicPlan) -> None:
        """Stop counting an admitted plan (its write failed)."""
        if plan._token is not None:
            self._reservations.pop(plan._token, None)
            plan._token = None

    def _replicas_per_broker(self) -> Counter:
        """Replicas per broker id: every topic in this broker's metadata plus reservations it does not show yet."""
        held: Counter = Counter()
        topics = self.metadata.topics
        for t in topics.values():
            for reps in t.replicas.values():
                held.update(reps)
        now = time.monotonic()
        for token, r in list(self._reservations.items()):
            shown = topics.get(r.name)
            unseen = [planned for p, planned in r.replicas.items() if shown is None or p not in shown.replicas]
            if not unseen or now > r.expires:
                del self._reservations[token]
                continue
            for planned in unseen:
                held.update(planned)
        return held

    # -- step 3: write --------------------------------------------------------------------------------
    async def write(self, plan: TopicPlan) -> None:
        """Store an admitted plan: a new topic (TOPIC_ALREADY_EXISTS if it appeared meanwhile) or its new partitions."""
        try:
            if plan.existing == 0:
                await self.run_blocking(
                    self.registry.create_topic, TopicAssignment(plan.name, plan.replicas, plan.topic_id), plan.overrides
                )
            else:
                await self.run_blocking(self.registry.add_partitions, plan.name, plan.replicas)
        except TopicExistsError:
            self.release(plan)
            raise TopicAdminError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {plan.name!r} already exists") from None
        except (StaleStateError, ValueError) as e:
            self.release(plan)
            raise TopicAdminError(
                ErrorCode.INVALID_PARTITIONS,
                f"topic {plan.name!r} changed while partitions were added ({e}); try again",
            ) from None
        except RegistryUnavailableError as e:
            self.release(plan)
            raise TopicAdminError(
                ErrorCode.REQUEST_TIMED_OUT,
                f"the cluster registry is unavailable ({e}); topic {plan.name!r} may or may not have been changed",
            ) from None
        except BaseException:
            self.release(plan)
            raise

    # -- single-topic conveniences ----------------------------------------------------------------------
    async def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        config: Mapping[str, str | None] | None = None,
        assignments: Mapping[int, list[int]] | None = None,
        *,
        validate_only: bool = False,
    ) -> TopicPlan:
        """Plan, admit and (unless ``validate_only``) write one topic; returns its plan."""
        plan = self.plan_topic(name, num_partitions, replication_factor, config, assignments)
        (error,) = self.admit([plan], reserve=not validate_only)
        if error is not None:
            raise error
        if not validate_only:
            await self.write(plan)
        return plan

    async def create_partitions(
        self, name: str, count: int, assignments: list[list[int]] | None = None, *, validate_only: bool = False
    ) -> TopicPlan:
        """Plan, admit and (unless ``validate_only``) write new partitions of one topic."""
        plan = self.plan_partitions(name, count, assignments)
        (error,) = self.admit([plan], reserve=not validate_only)
        if error is not None:
            raise error
        if not validate_only:
            await self.write(plan)
        return plan

    async def delete_topic(self, name: str) -> None:
        if not self.config["delete.topic.enable"]:
            raise TopicAdminError(ErrorCode.TOPIC_DELETION_DISABLED, "delete.topic.enable is false on this broker")
        if name not in self.metadata.topics:
            raise TopicAdminError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        await self.run_blocking(self.registry.mark_topic_for_deletion, name)

    async def apply(self, plans: list[TopicPlan | None], *, validate_only: bool) -> list[TopicAdminError | None]:
        """Admit a request's plans as a whole, then write each admitted one unless ``validate_only``.

        One entry per plan, in order: the error that refused or failed it, or None (``None`` plans, which
        failed planning, are answered None and left to the caller's own error).
        """
        errors = self.admit(plans, reserve=not validate_only)
        for i, (plan, error) in enumerate(zip(plans, errors, strict=True)):
            if plan is None or error is not None or validate_only:
                continue
            try:
                await self.write(plan)
            except TopicAdminError as e:
                errors[i] = e
        return errors

    async def without_leaders(self, topics: list[tuple[str, int]], timeout_ms: int) -> set[str]:
        """Wait up to ``timeout_ms`` for every ``(topic, partition count)`` to have leaders; the topics still
        without them (all of them are checked once even with ``timeout_ms`` <= 0)."""
        if timeout_ms > 0:
            await self.wait_for(lambda: all(self.has_leaders(n, k) for n, k in topics), timeout_ms / 1000)
        return {n for n, k in topics if not self.has_leaders(n, k)}

    async def wait_for(self, condition, timeout_s: float) -> bool:
        """Poll this broker's metadata until ``condition()`` holds; False on timeout."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    def has_leaders(self, name: str, num_partitions: int | None = None) -> bool:
        t = self.metadata.topics.get(name)
        if t is None or (num_partitions is not None and t.num_partitions < num_partitions):
            return False
        return all(t.leader(p) >= 0 for p in t.replicas)


def _check_replication_factor(rf: int, live: list[int], *, topic: str | None = None) -> None:
    if rf < 1:
        raise TopicAdminError(ErrorCode.INVALID_REPLICATION_FACTOR, f"replication factor must be at least 1, not {rf}")
    if rf > len(live):
        raise TopicAdminError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"replication factor {rf} is larger than the number of live brokers ({len(live)})",
        )


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
        raise TopicAdminError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT, "every partition needs the same, non-zero number of replicas"
        )
    out = {}
    for p, reps in assignments.items():
        if len(set(reps)) != len(reps):
            raise TopicAdminError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"partition {p} lists a broker twice: {list(reps)}"
            )
        unknown = [r for r in reps if r not in live]
        if unknown:
            raise TopicAdminError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"partition {p} names brokers that are not live: {unknown}"
            )
        out[p] = tuple(reps)
    return out


def _check_assignment_size(
    name: str, replicas: Mapping[int, tuple[int, ...]], topic_id: uuid.UUID, config: Mapping[str, str]
) -> None:
    """POLICY_VIOLATION when the topic's assignment and config would not fit one safe ZooKeeper request."""
    size = len(TopicAssignment(name, replicas, topic_id).to_json()) + len(json.dumps(dict(config)))
    if size > MAX_ASSIGNMENT_BYTES:
        raise TopicAdminError(
            ErrorCode.POLICY_VIOLATION,
            f"the assignment of topic {name!r} ({len(replicas)} partitions) would take {size} bytes in ZooKeeper, "
            f"more than the {MAX_ASSIGNMENT_BYTES} bytes one request may carry safely; use fewer partitions",
        )
