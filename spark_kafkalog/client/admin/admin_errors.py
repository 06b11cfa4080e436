"""``AdminOperationError``: the one exception an admin call raises for its failed items (topics, partitions,
resources, users, quota entities, ACL bindings), each with its own ``KafkaClientError``. Re-exported by
``spark_kafkalog.client.admin.admin`` and the package.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_kafkalog.client.errors import KafkaClientError

__all__ = ["AdminOperationError"]


class AdminOperationError(KafkaClientError):
    """One or more topics (or partitions) of an admin call failed; ``errors`` has each failure."""

    def __init__(self, what: str, errors: Mapping[Any, KafkaClientError]) -> None:
        self.errors = dict(errors)
        first = next(iter(self.errors.values()))
        lines = "; ".join(str(e) for e in self.errors.values())
        super().__init__(
            f"{what} failed for {len(self.errors)} of the requested items: {lines}",
            error_code=first.error_code,
            retriable=all(e.retriable for e in self.errors.values()),
            topic=first.topic,
            partition=first.partition,
        )
