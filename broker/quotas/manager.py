"""Client quota manager (Kafka's ``ClientQuotaManager`` / ``ClientRequestQuotaManager``): byte-rate and
request-percentage quotas per user / client-id entity, answering throttle times.

One ``ClientQuotas`` per ``QuotaType``: Produce (``producer_byte_rate``, bytes/s), Fetch
(``consumer_byte_rate``, bytes/s) and Request (``request_percentage``: handler time as % of one thread, the
value recorded being seconds × 100). Each holds the bounds of the entities configured for its key
(``update_entity`` / ``replace_all``, called by whoever stores them), and a ``SampledRate`` per sensor key
(``broker.quotas.entity.resolve``: one per resolved entity, shared by all connections and client ids that
resolve to it). Recording adds the value, measures the rate and, over the bound, returns the throttle time
``(observed − bound) / bound × elapsed window`` (``broker.quotas.sensor``); Request throttle times are capped
at one window (``quota.window.size.seconds``), as Kafka's. The caller answers at once carrying the throttle
time and mutes the connection for it (KIP-219; ``RequestContext.throttle``).

A type with no entity configured is off: ``enabled`` is False, nothing is recorded and every throttle time
is 0 (handlers test ``quotas.produce.enabled`` first, so the fast paths allocate nothing). Resolutions are
cached per (principal, client id) until the next quota change; sensors idle for an hour are dropped.

Concurrency: recording and updates run on the broker's event loop; ``figures`` may be called from the metrics
thread (it copies what it reads and changes nothing).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from broker.metrics import QuotaFigure

from .entity import QuotaEntity, QuotaType, check_entity, entity_of, keyed, limit, quota_user, resolve
from .sensor import SampledRate, throttle_time_ms

if TYPE_CHECKING:
    from broker.config import BrokerConfig

__all__ = ["ClientQuotas", "QuotaFigure", "QuotaManager"]

log = logging.getLogger("kafkalog.quotas")

_INACTIVE_MS = 3600 * 1000  # Kafka's InactiveSensorExpirationTimeSeconds
_SWEEP_EVERY_MS = 60 * 1000
_MAX_CACHED = 10_000  # (principal, client id) resolutions kept before the cache starts over


class _Sensor:
    __slots__ = ("rate", "throttle", "bound")

    def __init__(self, num_samples: int, window_ms: int, bound: float | None) -> None:
        self.rate = SampledRate(num_samples, window_ms)
        self.throttle = SampledRate(num_samples, window_ms)
        self.bound = bound


class ClientQuotas:
    """The quotas of one ``QuotaType``; ``clock_ms`` is monotonic integer milliseconds."""

    def __init__(
        self,
        quota_type: QuotaType,
        num_samples: int,
        window_ms: int,
        clock_ms: Callable[[], int],
        max_throttle_ms: int | None = None,
    ) -> None:
        self.quota_type = quota_type
        self.num_samples = num_samples
        self.window_ms = window_ms
        self.max_throttle_ms = max_throttle_ms
        self._clock_ms = clock_ms
        self._entities: dict[QuotaEntity, float] = {}
        self._bounds: dict[tuple[str | None, str | None], float] = {}
        self._sensors: dict[tuple[str, str], _Sensor] = {}
        self._resolved: dict[tuple[str, str], _Sensor] = {}
        self._last_sweep_ms = 0
        self.enabled = False

    # -- configuration -------------------------------------------------------------------------------
    def set_bound(self, entity: QuotaEntity, bound: float | None) -> None:
        """Set (None: remove) the bound of ``entity``; existing sensors take their new bounds, keeping samples."""
        if bound is None:
            self._entities.pop(entity, None)
        else:
            self._entities[entity] = bound
        self._reconfigure()

    def replace_all(self, bounds: Mapping[QuotaEntity, float]) -> None:
        self._entities = dict(bounds)
        self._reconfigure()

    def bounds(self) -> dict[QuotaEntity, float]:
        return dict(self._entities)

    def _reconfigure(self) -> None:
        self._bounds = keyed(self._entities)
        self.enabled = bool(self._entities)
        self._resolved.clear()
        for (user, client_id), sensor in self._sensors.items():
            sensor.bound = limit(self._bounds, user, client_id)

    # -- recording -----------------------------------------------------------------------------------
    def sensor(self, principal: str, client_id: str | None) -> _Sensor:
        """The sensor of this principal and client id (created on first use)."""
        cached = self._resolved.get((principal, client_id or ""))
        if cached is not None:
            return cached
        cid = client_id or ""
        key, bound = resolve(self._bounds, quota_user(principal), cid)
        sensor = self._sensors.get(key)
        if sensor is None:
            self._sweep()
            sensor = self._sensors[key] = _Sensor(self.num_samples, self.window_ms, bound)
        if len(self._resolved) >= _MAX_CACHED:
            self._resolved.clear()
        self._resolved[(principal, cid)] = sensor
        return sensor

    def record(self, principal: str, client_id: str | None, value: float) -> int:
        """Record ``value`` now; the throttle time in ms (0 within the quota or with none configured)."""
        if not self.enabled:
            return 0
        sensor = self.sensor(principal, client_id)
        now = self._clock_ms()
        sensor.rate.record(value, now)
        bound = sensor.bound
        if bound is None:
            return 0
        observed = sensor.rate.rate(now)
        if observed <= bound:
            return 0
        ms = throttle_time_ms(observed, bound, sensor.rate.window_size_ms(now))
        if self.max_throttle_ms is not None:
            ms = min(ms, self.max_throttle_ms)
        if ms > 0:
            sensor.throttle.record(ms, now)
        return ms

    def unrecord(self, principal: str, client_id: str | None, value: float) -> None:
        """Take back a recorded ``value`` (a throttled Fetch answers empty), without a quota check."""
        if self.enabled:
            self.sensor(principal, client_id).rate.record(-value, self._clock_ms())

    def _sweep(self) -> None:
        now = self._clock_ms()
        if now - self._last_sweep_ms < _SWEEP_EVERY_MS:
            return
        self._last_sweep_ms = now
        idle = [k for k, s in self._sensors.items() if now - s.rate.last_record_ms >= _INACTIVE_MS]
        if idle:
            for k in idle:
                del self._sensors[k]
            self._resolved.clear()

    def figures(self) -> list[QuotaFigure]:
        now = self._clock_ms()
        qt = self.quota_type
        return [
            QuotaFigure(
                qt.group, qt.rate_metric, user, client_id, s.rate.peek_rate(now), s.throttle.peek_average(now), s.bound
            )
            for (user, client_id), s in list(self._sensors.items())
        ]


class QuotaManager:
    """The broker's client quotas: one ``ClientQuotas`` each for ``produce``, ``fetch`` and ``request``.

    ``QuotaManager(num_samples=11, window_s=1, clock=time.monotonic)``; ``clock`` returns seconds.
    """

    def __init__(self, *, num_samples: int = 11, window_s: int = 1, clock: Callable[[], float] = time.monotonic):
        window_ms = window_s * 1000

        def clock_ms() -> int:
            return int(clock() * 1000 + 0.5)

        self.produce = ClientQuotas(QuotaType.PRODUCE, num_samples, window_ms, clock_ms)
        self.fetch = ClientQuotas(QuotaType.FETCH, num_samples, window_ms, clock_ms)
        self.request = ClientQuotas(QuotaType.REQUEST, num_samples, window_ms, clock_ms, max_throttle_ms=window_ms)
        self._by_type = {q.quota_type: q for q in (self.produce, self.fetch, self.request)}

    @classmethod
    def from_config(cls, config: BrokerConfig, clock: Callable[[], float] = time.monotonic) -> QuotaManager:
        """From ``quota.window.num`` and ``quota.window.size.seconds``."""
        return cls(num_samples=config["quota.window.num"], window_s=config["quota.window.size.seconds"], clock=clock)

    # -- recording (the handlers and the connection) --------------------------------------------------
    def record_produce(self, principal: str, client_id: str | None, nbytes: int) -> int:
        """Record ``nbytes`` produced; the throttle time in ms (0 when within quota)."""
        return self.produce.record(principal, client_id, nbytes)

    def record_fetch(self, principal: str, client_id: str | None, nbytes: int) -> int:
        """Record ``nbytes`` fetched; the throttle time in ms (0 when within quota)."""
        return self.fetch.record(principal, client_id, nbytes)

    def unrecord_fetch(self, principal: str, client_id: str | None, nbytes: int) -> None:
        """Take back ``nbytes`` of a throttled Fetch, which answers empty."""
        self.fetch.unrecord(principal, client_id, nbytes)

    def fetch_max_bytes(self, principal: str, client_id: str | None) -> int | None:
        """The most a consumer may fetch at once: its ``consumer_byte_rate`` × the measured window less the
        current sample (Kafka's ``getMaxValueInQuotaWindow``: more would be throttled whatever came before); None
        without a quota."""
        quotas = self.fetch
        if not quotas.enabled:
            return None
        bound = quotas.sensor(principal, client_id).bound
        if bound is None:
            return None
        return max(int(bound * (quotas.num_samples - 1) * quotas.window_ms / 1000), 1)

    def record_request_time(self, principal: str, client_id: str | None, seconds: float) -> int:
        """Record handler time for ``request_percentage``; the throttle time in ms (at most one window)."""
        return self.request.record(principal, client_id, seconds * 100.0)

    # -- configuration (whoever stores the entities' configs) ----------------------------------------
    def update_entity(self, entity: QuotaEntity, config: Mapping[str, str]) -> None:
        """Set ``entity``'s quotas to ``config`` (Kafka's keys; a key absent removes that quota; other keys,
        e.g. SCRAM credentials on a user node, are ignored). ValueError for a bad entity or value."""
        entity = check_entity(entity)
        parsed = _parse(entity, config)
        for quota_type, quotas in self._by_type.items():
            quotas.set_bound(entity, parsed.get(quota_type))
        log.info("quotas of %s: %s", _describe(entity), {t.config_key: v for t, v in parsed.items()} or "none")

    def replace_all(self, configs: Mapping[QuotaEntity, Mapping[str, str]]) -> None:
        """Replace every entity's quotas with ``configs`` (a full reload). An entity or value that cannot be used is
        logged and left out; the others apply."""
        per_type: dict[QuotaType, dict[QuotaEntity, float]] = {t: {} for t in self._by_type}
        for entity, config in configs.items():
            try:
                entity = check_entity(entity)
                parsed = _parse(entity, config)
            except ValueError as e:
                log.error("quotas of %r left out: %s", entity, e)
                continue
            for quota_type, bound in parsed.items():
                per_type[quota_type][entity] = bound
        for quota_type, quotas in self._by_type.items():
            quotas.replace_all(per_type[quota_type])

    def set_quota(self, path: str, **quotas: float) -> None:
        """Test and notebook convenience: ``set_quota("users/alice", producer_byte_rate=1048576)``."""
        self.update_entity(entity_of(path), {k: str(v) for k, v in quotas.items()})

    def figures(self) -> list[QuotaFigure]:
        """Every sensor's rate, mean throttle time and bound (the metrics thread may call this)."""
        return [f for q in (self.produce, self.fetch, self.request) for f in q.figures()]


def _parse(entity: QuotaEntity, config: Mapping[str, str]) -> dict[QuotaType, float]:
    out = {}
    for quota_type in QuotaType:
        raw = config.get(quota_type.config_key)
        if raw is None:
            continue
        try:
            bound = float(raw)
        except ValueError:
            raise ValueError(f"quota {quota_type.config_key}={raw!r} of {_describe(entity)} is not a number") from None
        if not bound > 0:
            raise ValueError(f"quota {quota_type.config_key}={raw!r} of {_describe(entity)} must be positive")
        out[quota_type] = bound
    return out


def _describe(entity: QuotaEntity) -> str:
    segment = {"user": "users", "client-id": "clients"}
    return "/".join(f"{segment[t]}/{'<default>' if n is None else n}" for t, n in sorted(entity, reverse=True))
