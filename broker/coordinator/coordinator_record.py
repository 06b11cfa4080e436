"""A group coordinator record as the coordinator keeps it before encoding (Kafka's ``CoordinatorRecord``).

``GroupRecord`` pairs a record key with its value (``None``: a tombstone) and checks that the value is of the
class its key pairs with. Each kind of group declares its own subclass with ``KIND`` (for messages) and
``VALUE_CLASSES`` (key class -> value class): ``consumer.records.CoordinatorRecord`` (types 3-8, 16) and
``share.records.ShareGroupRecord`` (types 10-15). Immutable, thread-safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Generic, Protocol, Self, TypeVar


class GroupRecordKey(Protocol):
    RECORD_TYPE: ClassVar[int]

    @property
    def group_id(self) -> str: ...


K = TypeVar("K", bound=GroupRecordKey)
V = TypeVar("V")


@dataclass(frozen=True)
class GroupRecord(Generic[K, V]):
    """One group record: ``key`` and its ``value``, or ``None`` for a tombstone. A value must be of the class
    its key pairs with (``VALUE_CLASSES``)."""

    KIND: ClassVar[str]
    VALUE_CLASSES: ClassVar[Mapping[type, type]]

    key: K
    value: V | None

    def __post_init__(self) -> None:
        expected = self.VALUE_CLASSES.get(type(self.key))
        if expected is None:
            raise TypeError(f"{type(self.key).__name__} is not a {self.KIND} record key")
        if self.value is not None and type(self.value) is not expected:
            raise TypeError(
                f"{type(self.key).__name__} pairs with {expected.__name__}, not {type(self.value).__name__}"
            )

    @property
    def record_type(self) -> int:
        return self.key.RECORD_TYPE

    @property
    def group_id(self) -> str:
        return self.key.group_id

    @property
    def is_tombstone(self) -> bool:
        return self.value is None

    @classmethod
    def tombstone(cls, key: K) -> Self:
        return cls(key, None)
