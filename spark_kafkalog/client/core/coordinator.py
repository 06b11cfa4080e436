"""FindCoordinator requests and answers (pure), shared by the blocking and asyncio clients.

Versions: v0-3 ask for one ``key`` (``key_type`` from v1: 0 = group, 1 = transactional id); v4+ (KIP-699)
ask for a list of ``coordinator_keys`` and answer one entry per key in ``coordinators``. The answer's error
(``COORDINATOR_NOT_AVAILABLE`` while the coordinator loads, ``NOT_COORDINATOR``, authorization errors) is
returned with the node, for the caller to raise in its own words.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from spark_kafkalog.client.errors import AUTHORIZATION_ERRORS, KafkaClientError, error_for_code
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

__all__ = [
    "FIND_BATCHED_FROM",
    "GROUP_KEY_TYPE",
    "TRANSACTION_KEY_TYPE",
    "FoundCoordinator",
    "coordinator_error",
    "find_coordinator_request",
    "parse_find_coordinator",
]

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
FIND_BATCHED_FROM = 4  # FindCoordinator v4+: coordinator_keys / coordinators (KIP-699)

_FIND_COORDINATOR = API_BY_KEY[int(ApiKey.FIND_COORDINATOR)]


class FoundCoordinator(NamedTuple):
    error_code: int
    error_message: str | None
    node_id: int


def find_coordinator_request(version: int, key: str, key_type: int = GROUP_KEY_TYPE) -> Any:
    """The FindCoordinator body for ``key`` at ``version``."""
    R = _FIND_COORDINATOR.Request
    if version >= FIND_BATCHED_FROM:
        return R(key_type=key_type, coordinator_keys=[key])
    return R(key=key, key_type=key_type)


def parse_find_coordinator(version: int, response: Any, key: str) -> FoundCoordinator:
    """The answer for ``key``; a v4+ answer that does not name exactly ``key`` raises ``KafkaClientError``."""
    if version >= FIND_BATCHED_FROM:
        if len(response.coordinators) != 1 or response.coordinators[0].key != key:
            raise KafkaClientError(f"FindCoordinator v{version} for {key!r} answered another key set")
        found = response.coordinators[0]
    else:
        found = response
    return FoundCoordinator(int(found.error_code), found.error_message, int(found.node_id))


def coordinator_error(found: FoundCoordinator, key: str) -> KafkaClientError:
    """The error of an answer with an error code: an authorization error names what it says, the others the
    key (``COORDINATOR_NOT_AVAILABLE`` and ``NOT_COORDINATOR`` are retriable)."""
    code = found.error_code
    detail = found.error_message if code in AUTHORIZATION_ERRORS else f"{key!r}: {found.error_message}"
    return error_for_code(code, "FindCoordinator", detail=detail, resource_name=key)
