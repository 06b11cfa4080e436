"""``ConsumerViews``: the synchronous, I/O-free methods of a consumer - its assignment, pause and resume, seek, the
subscription and the group identity - mixed into the blocking ``Consumer`` and the asyncio ``AIOConsumer`` alike.

Both keep their partitions in an ``AssignmentState`` (``_state``) and their group driver in ``_coordinator``
(``ConsumerCoordinator``/``MembershipManager`` or their asyncio twins), whose ``member`` is the sans-IO
``GroupMember`` (classic) or ``ConsumerMembership`` (KIP-848).

Not thread-safe: called from the polling thread (or the consumer's event loop).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.assignment_state import AssignmentState
from spark_kafkalog.client.consumer.consumer_membership import ConsumerMembership
from spark_kafkalog.client.consumer.group_membership import GroupMember
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import TopicPartition

__all__ = ["ConsumerGroupMetadata", "ConsumerViews"]


@dataclass(frozen=True)
class ConsumerGroupMetadata:
    """Java's ``ConsumerGroupMetadata``: the consumer's group identity now (``Consumer.group_metadata()``), for
    ``Producer.send_offsets_to_transaction``. ``generation_id`` is the classic generation or the KIP-848 member epoch
    (-1 outside the group)."""

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


class _GroupDriver(Protocol):
    @property
    def member(self) -> GroupMember | ConsumerMembership: ...


class ConsumerViews:
    """See the module docstring."""

    config: ClientConfig
    _state: AssignmentState
    _coordinator: Any  # a _GroupDriver or None
    _regex: str | None

    @property
    def _auto_commits(self) -> bool:
        return self.config.group_id is not None and self.config.enable_auto_commit and bool(self._state.positions)

    def _group(self) -> str:
        if self.config.group_id is None:
            raise KafkaClientError("committed offsets need a group.id", retriable=False)
        return self.config.group_id

    def group_metadata(self) -> ConsumerGroupMetadata:
        """The group identity now: group id, generation (classic) or member epoch (consumer protocol), member id."""
        group = self._group()
        driver: _GroupDriver | None = self._coordinator
        if driver is None:
            return ConsumerGroupMetadata(group, group_instance_id=self.config.group_instance_id)
        generation, member_id, instance_id = driver.member.commit_identity()
        return ConsumerGroupMetadata(group, generation, member_id, instance_id)

    def subscription(self) -> set[str]:
        """The topics subscribed to (patterns resolved against the last metadata; with the consumer protocol, whose
        coordinator resolves patterns, the topics named plus those of the assignment)."""
        driver: _GroupDriver | None = self._coordinator
        if driver is None:
            return set()
        member = driver.member
        if isinstance(member, ConsumerMembership) and self._regex is not None:
            return set(member.subscription) | {tp.topic for tp in member.owned}
        return set(member.subscription)

    def assignment(self) -> list[TopicPartition]:
        return list(self._state.assigned)

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Stop fetching ``partitions`` (assigned ones) until ``resume``; the group membership is unaffected."""
        self._state.pause(partitions)

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        self._state.resume(partitions)

    def paused(self) -> set[TopicPartition]:
        return set(self._state.paused)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """The next ``poll`` returns ``tp``'s records from ``offset`` (>= 0; ``tp`` must be assigned)."""
        self._state.seek(tp, offset)
