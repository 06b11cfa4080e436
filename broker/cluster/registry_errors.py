"""The errors every ``ClusterRegistry`` method may raise (re-exported by ``broker.cluster.registry``).

``RegistryError`` is the base; ``RegistryUnavailableError`` means no usable session with the store (the effect of
the call is then unknown), ``StaleStateError`` a lost compare-and-set. Plain exception classes: no state shared.
"""

from __future__ import annotations

__all__ = [
    "RegistryError",
    "BrokerIdInUseError",
    "TopicExistsError",
    "NoSuchTopicError",
    "StaleStateError",
    "RegistryUnavailableError",
]


class RegistryError(Exception):
    """Base of every registry failure."""


class BrokerIdInUseError(RegistryError):
    """``/brokers/ids/<id>`` is already held by another live broker (a duplicate ``broker.id``)."""

    def __init__(self, broker_id: int, holder: str | None, detail: str = "") -> None:
        self.broker_id = broker_id
        self.holder = holder
        where = f" by {holder}" if holder else ""
        detail = f" ({detail})" if detail else ""
        super().__init__(
            f"broker.id {broker_id} is already registered{where}{detail}; each broker needs a unique broker.id"
        )


class TopicExistsError(RegistryError):
    """The topic (assignment or config node) already exists."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        super().__init__(f"topic {topic!r} already exists")


class NoSuchTopicError(RegistryError):
    """The topic has no assignment node."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        super().__init__(f"topic {topic!r} does not exist")


class StaleStateError(RegistryError):
    """A compare-and-set lost: the node changed (or appeared) since it was read."""


class RegistryUnavailableError(RegistryError):
    """No usable session with the backing store (disconnected, expired or closed)."""
