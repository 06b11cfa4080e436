"""``ProducerData`` (kafka.javaapi.producer.ProducerData, Kafka 0.8): what the seeds' ``Producer`` sends, and what
its plug-ins (``plugins``: the callback handler's hooks, the event handler's batches) are given.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ProducerData"]


class ProducerData:
    """``ProducerData(topic, key, data)``: one message, or many with one key when ``data`` is a list or tuple.

    ``key`` and the values are objects for ``key.serializer.class`` and ``serializer.class``; ``None`` as key
    means no key (a random partition).
    """

    __slots__ = ("topic", "key", "data")

    def __init__(self, topic: str, key: Any = None, data: Any = None) -> None:
        if not isinstance(topic, str) or not topic:
            raise ValueError(f"ProducerData needs a non-empty topic name, got {topic!r}")
        self.topic = topic
        self.key = key
        self.data = data

    @property
    def messages(self) -> list[Any]:
        """The values, one per message."""
        return list(self.data) if isinstance(self.data, (list, tuple)) else [self.data]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProducerData):
            return NotImplemented
        return (self.topic, self.key, self.data) == (other.topic, other.key, other.data)

    def __repr__(self) -> str:
        return f"ProducerData(topic={self.topic!r}, key={self.key!r}, data={self.data!r})"
