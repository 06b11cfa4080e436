"""The rules a ``FaultInjector`` holds, and how a request matches them: pure and lock-free (the injector
serialises access). Names to values: ``resolve_api`` ("Produce", 0, ``ApiKey.PRODUCE``) and ``resolve_error``
(``"NOT_LEADER_OR_FOLLOWER"``, 6, ``ErrorCode.NOT_LEADER_OR_FOLLOWER``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from spark_kafkalog.protocol import API_BY_KEY, ApiSpec, ErrorCode

from .error_responses import PartitionMatch, is_partitioned

_BY_NAME = {api.name.lower(): api for api in API_BY_KEY.values()}


def resolve_api(api: str | int) -> ApiSpec:
    """The declared API named ``api`` (Kafka's name, any case, e.g. ``"Produce"``) or with that key."""
    if isinstance(api, str):
        spec = _BY_NAME.get(api.replace("_", "").lower())
        if spec is None:
            raise ValueError(f"unknown API {api!r} (expected a Kafka API name such as 'Produce' or 'Fetch')")
        return spec
    spec = API_BY_KEY.get(int(api))
    if spec is None:
        raise ValueError(f"unknown API key {api}")
    return spec


def resolve_error(error: str | int) -> ErrorCode:
    """The error code ``error`` names: an int16 code, or Kafka's name (any case, e.g.
    ``"not_leader_or_follower"``); 0 / ``"NONE"`` means no error."""
    if isinstance(error, str):
        try:
            return getattr(ErrorCode, error.strip().upper())
        except AttributeError:
            raise ValueError(f"unknown Kafka error name {error!r}") from None
    code = int(error)
    if not -(1 << 15) <= code < (1 << 15):
        raise ValueError(f"error code {code} is not an int16")
    return ErrorCode(code)


@dataclass
class ErrorRule:
    """``push_errors``: the next ``len(errors)`` matching requests of ``api_key`` get these (code, rtt_ms) in order;
    with ``match`` only the matching partitions of a request fail, and only requests holding one count."""

    api_key: int
    errors: deque[tuple[ErrorCode, int]]
    match: PartitionMatch | None = None

    @classmethod
    def build(
        cls,
        api: str | int,
        errors: Iterable[str | int] | str | int,
        *,
        topic: str | None = None,
        partition: int | None = None,
        rtt_ms: int | Iterable[int] = 0,
    ) -> ErrorRule:
        spec = resolve_api(api)
        codes = [resolve_error(e) for e in ([errors] if isinstance(errors, (str, int)) else errors)]
        if not codes:
            raise ValueError("push_errors needs at least one error")
        rtts = [int(rtt_ms)] * len(codes) if isinstance(rtt_ms, int) else [int(r) for r in rtt_ms]
        if len(rtts) != len(codes):
            raise ValueError(f"{len(rtts)} rtt_ms values for {len(codes)} errors")
        if any(r < 0 for r in rtts):
            raise ValueError("rtt_ms must not be negative")
        match = None
        if topic is not None:
            if not is_partitioned(spec):
                raise ValueError(f"{spec.name} requests have no topic partitions: push errors without topic")
            match = PartitionMatch(topic, partition)
        elif partition is not None:
            raise ValueError("a partition needs its topic")
        return cls(spec.key, deque(zip(codes, rtts, strict=True)), match)

    def describe(self) -> str:
        api = API_BY_KEY[self.api_key].name
        where = ""
        if self.match is not None:
            where = f" for {self.match.topic}" + ("" if self.match.partition is None else f"-{self.match.partition}")
        errors = ", ".join(e.name + (f" (+{r} ms)" if r else "") for e, r in self.errors)
        return f"errors on the next {len(self.errors)} {api} request(s){where}: {errors}"


@dataclass
class DelayRule:
    """``set_rtt`` / ``delay_connections``: responses of ``api_key`` (every API when None) to ``client_id``
    (every client when None) are sent ``ms`` later."""

    ms: int
    api_key: int | None = None
    client_id: str | None = None

    def applies(self, api_key: int, client_id: str | None) -> bool:
        return (self.api_key is None or self.api_key == api_key) and (
            self.client_id is None or self.client_id == client_id
        )

    def describe(self) -> str:
        api = "every API" if self.api_key is None else API_BY_KEY[self.api_key].name
        who = "" if self.client_id is None else f" to client {self.client_id!r}"
        return f"{self.ms} ms added to responses of {api}{who}"


@dataclass
class VersionRule:
    """``set_api_version``: ``api_key`` is advertised in ApiVersions as ``min_version``-``max_version`` (within what
    the broker serves), or left out when ``min_version`` is -1; a request outside that range is answered with
    UNSUPPORTED_VERSION (its handler does not run)."""

    api_key: int
    min_version: int
    max_version: int

    @property
    def disabled(self) -> bool:
        return self.min_version < 0

    def allows(self, version: int) -> bool:
        return not self.disabled and self.min_version <= version <= self.max_version

    def narrow(self, lo: int, hi: int) -> tuple[int, int] | None:
        """The advertised range given the served ``lo``-``hi``: None when disabled or the ranges do not meet."""
        if self.disabled:
            return None
        lo, hi = max(lo, self.min_version), min(hi, self.max_version)
        return (lo, hi) if lo <= hi else None

    def describe(self) -> str:
        api = API_BY_KEY[self.api_key].name
        if self.disabled:
            return f"{api} not offered (left out of ApiVersions, refused with UNSUPPORTED_VERSION)"
        return f"{api} offered at versions {self.min_version}-{self.max_version} only"


@dataclass
class TrackedRequest:
    """One request seen while tracking: Kafka's API name, version, client id, and wall-clock time (s)."""

    api: str
    version: int
    client_id: str | None
    time: float

    def __iter__(self):  # unpacks as (api, version, client_id, time)
        return iter((self.api, self.version, self.client_id, self.time))


@dataclass
class TrackRule:
    """``track_requests``: every request is appended to ``requests``."""

    requests: list[TrackedRequest] = field(default_factory=list)

    def describe(self) -> str:
        return f"tracking requests ({len(self.requests)} so far)"
