"""The controller's leader elections on request (ElectLeaders, KIP-183 and KIP-460; `kafka-leader-election`).

``elect`` takes an election type and the partitions to elect (None: every partition of every topic) and
returns ``{(topic, partition): (error code, message)}``, applying Kafka's rules per partition:

* a topic or partition the controller does not know: UNKNOWN_TOPIC_OR_PARTITION; a topic being deleted:
  INVALID_TOPIC_EXCEPTION (Kafka's ZooKeeper-mode controller);
* preferred (``PREFERRED``): the first assigned replica becomes leader when it is live (not in a controlled
  shutdown) and in the ISR (``election.preferred_election``); it already leads: ELECTION_NOT_NEEDED; it
  cannot: PREFERRED_LEADER_NOT_AVAILABLE with the reason;
* unclean (``UNCLEAN``): a partition whose leader is live needs nothing (ELECTION_NOT_NEEDED); otherwise the
  first live in-sync replica, else the first live replica even outside the ISR, whatever
  ``unclean.leader.election.enable`` says (``election.offline_election`` with ``unclean``; records only the
  old ISR had are lost, logged as a warning); no live replica: ELIGIBLE_LEADERS_NOT_AVAILABLE;
* with every partition asked for (None), the partitions that need no election are left out of the result,
  as Kafka 4.x's controller answers.

Each election is a compare-and-set write of the partition state with a new leader epoch, retried on a
concurrent change; the brokers learn the new leader from their watches. Concurrency: runs on the controller's
task only (``Controller.elect_leaders`` queues it); registry calls go through the controller's ``run_blocking``.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable
from typing import Any

from spark_kafkalog.protocol import ErrorCode

from . import election
from .registry import NoSuchTopicError, PartitionState

log = logging.getLogger("kafkalog.controller")

_ATTEMPTS = 5

ElectionResult = tuple[int, "str | None"]
"""(error code, error message) of one partition of an ElectLeaders request."""


class ElectionType(enum.IntEnum):
    """ElectLeaders' ``election_type`` (Kafka's ``org.apache.kafka.common.ElectionType``)."""

    PREFERRED = 0
    UNCLEAN = 1


class Elections:
    """Leader elections on behalf of ``controller``, a ``broker.cluster.controller.Controller`` (see the module
    docstring; not imported here: the controller imports this module)."""

    def __init__(self, controller: Any) -> None:
        self.c = controller

    async def elect(
        self, election_type: ElectionType, partitions: Iterable[tuple[str, int]] | None
    ) -> dict[tuple[str, int], ElectionResult]:
        every = partitions is None
        if partitions is None:
            partitions = [
                (name, p)
                for name, assignment in sorted(self.c.topics.items())
                if name not in self.c.deletions
                for p in sorted(assignment.partitions)
            ]
        results: dict[tuple[str, int], ElectionResult] = {}
        for topic, p in partitions:
            if (topic, p) in results:
                continue
            result = await self._elect_one(election_type, topic, p)
            if every and result[0] == ErrorCode.ELECTION_NOT_NEEDED:
                continue
            results[(topic, p)] = result
        return results

    async def _elect_one(self, election_type: ElectionType, topic: str, p: int) -> ElectionResult:
        assignment = self.c.topics.get(topic)
        if assignment is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
        if p not in assignment.partitions:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{p}"
        if topic in self.c.deletions:
            return ErrorCode.INVALID_TOPIC_EXCEPTION, "The topic is being deleted"
        replicas = tuple(assignment.partitions[p])
        registry = self.c.registry
        for _ in range(_ATTEMPTS):
            try:
                state: PartitionState | None = await self.c.run_blocking(registry.partition_state, topic, p)
            except NoSuchTopicError:
                return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
            if state is None:  # the controller has not created its state yet
                code = (
                    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
                    if election_type == ElectionType.PREFERRED
                    else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
                )
                return code, f"Failed to elect leader for partition {topic}-{p}: it has no leader state yet"
            live = self.c.live_not_stopping()
            if election_type == ElectionType.PREFERRED:
                preferred = replicas[0]
                if state.leader == preferred:
                    return ErrorCode.ELECTION_NOT_NEEDED, None
                chosen = election.preferred_election(replicas, state.leader, state.isr, live)
                if chosen is None:
                    why = "is not live" if preferred not in live else f"is not in the ISR {list(state.isr)}"
                    return (
                        ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                        f"Failed to elect leader for partition {topic}-{p}: preferred replica {preferred} {why}",
                    )
            else:
                if state.leader >= 0 and state.leader in self.c.live:
                    return ErrorCode.ELECTION_NOT_NEEDED, None
                chosen = election.offline_election(replicas, state.isr, live, unclean=True)
                if chosen.leader < 0:
                    return (
                        ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                        f"Failed to elect leader for partition {topic}-{p}: none of its replicas {list(replicas)} "
                        "is live",
                    )
            if await self.c.write_election(topic, p, state, chosen):
                if chosen.unclean:
                    log.warning(
                        "%s-%d: unclean leader election requested: %d was not in the ISR %s; records only the "
                        "old ISR had are lost",
                        topic,
                        p,
                        chosen.leader,
                        list(state.isr),
                    )
                return ErrorCode.NONE, None
        return ErrorCode.UNKNOWN_SERVER_ERROR, f"{topic}-{p}: the partition state kept changing during the election"
