"""Client quota manager. CONTRACT STUB (issue 27): signatures the handlers and the connection call; the
sensors and precedence are being written. With no quota configured every throttle time is 0."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["QuotaManager"]


class QuotaManager:
    def record_produce(self, principal: str, client_id: str | None, nbytes: int) -> int:
        """Record ``nbytes`` produced; the throttle time in ms (0 when within quota)."""
        return 0

    def record_fetch(self, principal: str, client_id: str | None, nbytes: int) -> int:
        """Record ``nbytes`` fetched; the throttle time in ms (0 when within quota)."""
        return 0

    def record_request_time(self, principal: str, client_id: str | None, seconds: float) -> int:
        """Record handler time for ``request_percentage``; the throttle time in ms."""
        return 0

    def update_entity(self, entity: tuple[tuple[str, str | None], ...], config: Mapping[str, str]) -> None:
        pass

    def replace_all(self, configs: Mapping[tuple[tuple[str, str | None], ...], Mapping[str, str]]) -> None:
        pass
