"""``FaultInjector``: a broker's request-path faults - pushed error codes, response delays, dropped connections
- and request tracking, for tests of clients' retry and failover paths (docs/fault-injection.md).

Concurrency contract: every public method may be called from any thread (a test's thread while the broker
serves on its event-loop thread); rules live behind one lock. The connection calls ``intercept`` on the
broker's loop for each request only while ``live`` is True (one attribute read otherwise), so an idle injector
costs the request path nothing. ``drop_connections`` runs on the broker's loop (waiting for it from another
thread). Every injection and its undo are logged at INFO on ``kafkalog.faults``.

What a request meets, in this order: request tracking records it; the first live whole-request error rule of
its API consumes its next error (the request is not executed and is answered with the error in every error
field; Produce with acks=0 is not answered); else each per-partition rule whose partitions the request holds
consumes its next error: those partition entries are taken out of the request before the handler runs (for
the read-only APIs - Fetch, ListOffsets, OffsetFetch, OffsetForLeaderEpoch, Metadata, DescribeProducers -
the handler sees the whole request) and their answers are replaced by error entries. An error code 0 (NONE)
lets its request through untouched. The response is then sent later by the error's ``rtt_ms`` plus every
matching ``set_rtt`` / ``delay_connections`` delay (they add up); delayed responses keep their connection's
order.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ApiSpec, ErrorCode, Message

from .error_responses import (
    count_partitions,
    error_response,
    merge_responses,
    partition_error_response,
    split_request,
)
from .rules import DelayRule, ErrorRule, TrackedRequest, TrackRule, VersionRule, resolve_api

if TYPE_CHECKING:
    from spark_kafkalog.protocol import Request

    from .control import FaultControlServer

log = logging.getLogger("kafkalog.faults")

READ_ONLY_APIS = frozenset(
    {
        ApiKey.FETCH,
        ApiKey.LIST_OFFSETS,
        ApiKey.OFFSET_FETCH,
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        ApiKey.METADATA,
        ApiKey.DESCRIBE_PRODUCERS,
    }
)
"""Per-partition faults on these run the whole request and replace the failed partitions' answers (a Fetch
partition left out of a request would leave its fetch session)."""

Rule = ErrorRule | DelayRule | TrackRule | VersionRule
RequestContext = Any
"""A handler's ``broker.api.RequestContext`` (not imported: ``broker.services`` imports this package); the injector
reads ``ctx.services.metadata.topic_by_id``, ``ctx.services.handlers.version_ranges()`` and
``ctx.services.fetch_sessions``."""


class Injection:
    """One live fault: a context manager whose exit undoes it; ``undo()`` is idempotent.

    ``remaining`` counts the errors still to be answered (None for faults that are not counted);
    ``active`` is False once undone or used up.
    """

    def __init__(self, owner: FaultInjector, injection_id: int, rule: Rule) -> None:
        self._owner = owner
        self.id = injection_id
        self.rule = rule

    @property
    def description(self) -> str:
        with self._owner._lock:
            return self.rule.describe()

    @property
    def remaining(self) -> int | None:
        if not isinstance(self.rule, ErrorRule):
            return None
        with self._owner._lock:
            return len(self.rule.errors)

    @property
    def active(self) -> bool:
        with self._owner._lock:
            return self.id in self._owner._injections

    def undo(self) -> None:
        self._owner._undo(self)

    def __enter__(self) -> Injection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} #{self.id}: {self.description}{'' if self.active else ' (ended)'}>"


class RequestLog(Injection):
    """``track_requests()``: the requests this broker received while it was active; ``requests`` is a copy of
    (api name, version, client id, time) records, kept after the log is undone."""

    rule: TrackRule

    @property
    def requests(self) -> list[TrackedRequest]:
        with self._owner._lock:
            return list(self.rule.requests)

    def count(self, api: str | int | None = None) -> int:
        """How many requests (of ``api`` when given) were recorded."""
        name = None if api is None else resolve_api(api).name
        return sum(1 for r in self.requests if name is None or r.api == name)

    def __enter__(self) -> RequestLog:
        return self


class FaultInjector:
    """A broker's faults (see the module docstring). ``Broker`` owns one and ``bind``s it when it serves."""

    def __init__(self, broker_id: int | None = None) -> None:
        self.broker_id = broker_id
        self.live = False
        """True while any injection is active: the connection then sends requests through ``intercept``."""
        self._lock = threading.RLock()
        self._injections: dict[int, Injection] = {}
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connections: Callable[[], Iterable[Any]] = list
        self._control: FaultControlServer | None = None

    # -- wiring (the broker) ----------------------------------------------------------------------
    def bind(
        self,
        loop: asyncio.AbstractEventLoop,
        connections: Callable[[], Iterable[Any]],
        control_listener: str = "",
    ) -> None:
        """Called by the broker once it serves: its loop, its live client connections (objects with
        ``client_id`` and ``drop(reason)``), and ``kafkalog.fault.injection.listener`` (empty: no control
        channel; else the loopback ``host:port`` where ``RemoteFaults`` reach this injector)."""
        self._loop = loop
        self._connections = connections
        if control_listener and self._control is None:
            from .control import FaultControlServer

            self._control = FaultControlServer(self, control_listener)
            self._control.start()
            log.info("%sfault injection control channel at %s", self._who(), self._control.address)

    def close(self) -> None:
        """The broker stops: close the control channel (injections stay, but nothing reaches them)."""
        control, self._control = self._control, None
        if control is not None:
            control.stop()

    @property
    def control_address(self) -> str | None:
        """``host:port`` of the control channel, when one is open."""
        return None if self._control is None else self._control.address

    # -- injections -------------------------------------------------------------------------------
    def push_errors(
        self,
        api: str | int,
        errors: Iterable[str | int] | str | int,
        *,
        topic: str | None = None,
        partition: int | None = None,
        rtt_ms: int | Iterable[int] = 0,
    ) -> Injection:
        """Answer the next ``len(errors)`` requests of ``api`` ("Produce" or its key) with these errors, in order
        (Kafka's names or codes; 0 lets a request through). With ``topic`` (and ``partition``, else all of the
        topic's) only those partitions of a request fail, the rest is served, and only requests holding them
        count. ``rtt_ms`` delays each such response (one value, or one per error)."""
        rule = ErrorRule.build(api, errors, topic=topic, partition=partition, rtt_ms=rtt_ms)
        return self._add(rule)

    def set_rtt(self, ms: int, *, api: str | int | None = None) -> Injection:
        """Delay every response of ``api`` (every API when None) by ``ms`` until undone."""
        if ms < 0:
            raise ValueError("ms must not be negative")
        return self._add(DelayRule(int(ms), None if api is None else resolve_api(api).key))

    def delay_connections(self, ms: int, *, client_id: str | None = None) -> Injection:
        """Stall every response on the connections of ``client_id`` (every client when None), live and new, by
        ``ms`` until undone: from a client's first request (ApiVersions) on, as a slow link would."""
        if ms < 0:
            raise ValueError("ms must not be negative")
        return self._add(DelayRule(int(ms), None, client_id))

    def set_api_version(self, api: str | int, min_version: int, max_version: int) -> Injection:
        """Offer ``api`` only at ``min_version``-``max_version`` (as librdkafka's ``rd_kafka_mock_set_apiversion``):
        ApiVersions advertises the overlap with what the broker serves (the API is left out when there is none,
        or when both are -1: the API is not offered at all), and a request at another version is answered with
        UNSUPPORTED_VERSION without running its handler. Clients then fall back to older versions or do without
        the API. ApiVersions itself cannot be narrowed."""
        spec = resolve_api(api)
        if spec.key == ApiKey.API_VERSIONS:
            raise ValueError("ApiVersions cannot be narrowed: clients need it to learn the other APIs' versions")
        lo, hi = int(min_version), int(max_version)
        if (lo, hi) != (-1, -1) and not 0 <= lo <= hi:
            raise ValueError(
                f"versions {lo}-{hi} of {spec.name}: give 0 <= min_version <= max_version, or -1 and -1 to disable"
            )
        return self._add(VersionRule(spec.key, lo, hi))

    def api_version_ranges(self, ranges: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """``(api_key, min, max)`` as ApiVersions advertises them under the live ``set_api_version`` injections
        (the newest injection of an API wins)."""
        with self._lock:
            rules = {r.api_key: r for i in self._injections.values() if isinstance(r := i.rule, VersionRule)}
        out = []
        for key, lo, hi in ranges:
            rule = rules.get(key)
            narrowed = (lo, hi) if rule is None else rule.narrow(lo, hi)
            if narrowed is not None:
                out.append((key, *narrowed))
        return out

    def track_requests(self) -> RequestLog:
        """Record every request this broker receives until the returned log is undone (or its ``with`` ends)."""
        log_ = self._add(TrackRule())
        assert isinstance(log_, RequestLog)
        return log_

    def drop_connections(self, *, client_id: str | None = None, timeout_s: float = 10.0) -> int:
        """Close the live client connections (of ``client_id`` when given: the client id of their latest request)
        at once, as a broken network would; returns how many were closed. Clients see the socket close and
        reconnect."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return 0

        def drop() -> int:
            n = 0
            for conn in list(self._connections()):
                if client_id is None or getattr(conn, "client_id", None) == client_id:
                    conn.drop("fault injection: connection dropped")
                    n += 1
            return n

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            n = drop()
        else:

            async def on_loop() -> int:
                return drop()

            n = asyncio.run_coroutine_threadsafe(on_loop(), loop).result(timeout_s)
        who = "" if client_id is None else f" of client {client_id!r}"
        log.info("%sfault injected: dropped %d connection(s)%s", self._who(), n, who)
        return n

    def active(self) -> list[Injection]:
        """The injections still active, oldest first."""
        with self._lock:
            return list(self._injections.values())

    def clear(self) -> None:
        """Undo every active injection."""
        for injection in self.active():
            injection.undo()

    # -- bookkeeping ------------------------------------------------------------------------------
    def _who(self) -> str:
        return "" if self.broker_id is None else f"broker {self.broker_id}: "

    def _add(self, rule: Rule) -> Injection:
        with self._lock:
            n = next(self._ids)
            injection = RequestLog(self, n, rule) if isinstance(rule, TrackRule) else Injection(self, n, rule)
            self._injections[n] = injection
            self.live = True
            log.info("%sfault #%d injected: %s", self._who(), n, rule.describe())
        return injection

    def _undo(self, injection: Injection) -> None:
        with self._lock:
            if self._injections.pop(injection.id, None) is None:
                return
            self.live = bool(self._injections)
            log.info("%sfault #%d undone: %s", self._who(), injection.id, injection.rule.describe())

    def _used_up(self, injection: Injection) -> None:
        """Under the lock: a counted injection answered its last error."""
        self._injections.pop(injection.id, None)
        self.live = bool(self._injections)
        log.info("%sfault #%d used up", self._who(), injection.id)

    # -- the request path (broker's event loop) --------------------------------------------------
    def intercept(
        self,
        ctx: RequestContext,
        request: Request,
        handler: Callable[[RequestContext, Any], Coroutine[Any, Any, Any]],
    ) -> Coroutine[Any, Any, Any]:
        """The coroutine that answers ``request`` under the active faults (see the module docstring); the handler
        is called inside it, so its synchronous part still runs when the request's task starts."""
        header = request.header
        api: ApiSpec = request.api
        version = header.api_version
        body = request.body
        whole: tuple[ErrorCode, int] | None = None
        pieces: list[tuple[Message, ErrorCode]] = []
        delay_ms = 0
        read_only = header.api_key in READ_ONLY_APIS
        resolve = ctx.services.metadata.topic_by_id
        with self._lock:
            counted: list[tuple[Injection, ErrorRule]] = []
            versions: VersionRule | None = None
            for injection in list(self._injections.values()):
                rule = injection.rule
                if isinstance(rule, TrackRule):
                    rule.requests.append(TrackedRequest(api.name, version, header.client_id, time.time()))
                elif isinstance(rule, DelayRule):
                    if rule.applies(header.api_key, header.client_id):
                        delay_ms += rule.ms
                elif isinstance(rule, VersionRule):
                    if rule.api_key == header.api_key:
                        versions = rule  # the newest one wins
                elif rule.api_key == header.api_key:
                    counted.append((injection, rule))
            if versions is not None and not versions.allows(version):
                log.info(
                    "%sfault: answering UNSUPPORTED_VERSION to %s v%d (%s)",
                    self._who(), api.name, version, versions.describe(),
                )  # fmt: skip
                return self._answer(
                    ctx, api, version, body, handler, (ErrorCode.UNSUPPORTED_VERSION, 0), [], False, delay_ms
                )
            first = next(((i, r) for i, r in counted if r.match is None), None)
            if first is not None:
                whole = first[1].errors.popleft()
                delay_ms += whole[1]
                self._applied(first[0], api, header, whole[0])
            if whole is None or whole[0] == ErrorCode.NONE:
                seen = body
                if any(r.match is not None for _, r in counted) and header.api_key == ApiKey.FETCH:
                    seen = _with_session_partitions(ctx, api, version, body)
                for injection, rule in counted:
                    if rule.match is None:
                        continue
                    kept, removed = split_request(api, version, seen if read_only else body, rule.match, resolve)
                    if removed is None:
                        continue
                    code, rtt = rule.errors.popleft()
                    delay_ms += rtt
                    self._applied(injection, api, header, code)
                    if code != ErrorCode.NONE:
                        pieces.append((removed, code))
                        if not read_only:
                            body = kept
        return self._answer(ctx, api, version, body, handler, whole, pieces, read_only, delay_ms)

    def _applied(self, injection: Injection, api: ApiSpec, header: Any, code: ErrorCode) -> None:
        rule = injection.rule
        assert isinstance(rule, ErrorRule)
        what = "passing" if code == ErrorCode.NONE else f"answering {code.name} to"
        where = ""
        if rule.match is not None:
            where = f" for {rule.match.topic}" + ("" if rule.match.partition is None else f"-{rule.match.partition}")
        log.info(
            "%sfault #%d: %s %s v%d (correlation id %d, client %r)%s",
            self._who(), injection.id, what, api.name, header.api_version, header.correlation_id, header.client_id,
            where,
        )  # fmt: skip
        if not rule.errors:
            self._used_up(injection)

    async def _answer(
        self,
        ctx: RequestContext,
        api: ApiSpec,
        version: int,
        body: Any,
        handler: Callable[[RequestContext, Any], Coroutine[Any, Any, Any]],
        whole: tuple[ErrorCode, int] | None,
        pieces: list[tuple[Message, ErrorCode]],
        read_only: bool,
        delay_ms: int,
    ) -> Any:
        unanswered = api.key == ApiKey.PRODUCE and getattr(body, "acks", 1) == 0
        failed = whole is not None and whole[0] != ErrorCode.NONE
        emptied = pieces and not read_only and count_partitions(api, version, body) == 0
        if unanswered and (failed or emptied):  # acks=0: the handler, given no partitions, answers nothing
            body = api.Request(acks=0, timeout_ms=body.timeout_ms, transactional_id=body.transactional_id)
            result: Any = await handler(ctx, body)
        elif failed:
            assert whole is not None
            result = _whole_error(ctx, api, version, body, whole[0], self.api_version_ranges)
        elif emptied:
            result = error_response(api, version, body, ErrorCode.NONE)
        else:
            result = await handler(ctx, body)
        if pieces and isinstance(result, Message):
            for removed, code in pieces:
                merge_responses(api, version, result, partition_error_response(api, version, removed, code))
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        return result


def _with_session_partitions(ctx: RequestContext, api: ApiSpec, version: int, body: Any) -> Any:
    """An incremental Fetch (KIP-227) as the broker reads it: the request's partitions plus the session's others
    (not forgotten), so a per-partition fault finds a partition the client no longer lists; else ``body``."""
    if version < 7 or body.session_id == 0 or body.session_epoch <= 0:
        return body
    session = ctx.services.fetch_sessions.get(body.session_id)
    if session is None:
        return body
    by_id = version >= 13

    def key(topic: Any, partition: int) -> tuple[Any, int]:
        return (topic, partition)

    listed = {key(t.topic_id if by_id else t.topic, p.partition) for t in body.topics for p in t.partitions}
    listed |= {key(t.topic_id if by_id else t.topic, p) for t in body.forgotten_topics_data for p in t.partitions}
    topic_cls = api.Request.FetchTopic
    extra: dict[Any, list[Any]] = {}
    for cached in session.partitions.values():
        topic = cached.topic_id if by_id else cached.topic
        if key(topic, cached.partition) not in listed:
            extra.setdefault(topic, []).append(topic_cls.FetchPartition(partition=cached.partition))
    if not extra:
        return body
    added = [topic_cls(**{"topic_id" if by_id else "topic": t}, partitions=ps) for t, ps in extra.items()]
    view = api.Request(**{f.name: getattr(body, f.name) for f in api.request.fields})
    view.topics = list(body.topics) + added
    return view


def _whole_error(
    ctx: RequestContext,
    api: ApiSpec,
    version: int,
    body: Any,
    code: ErrorCode,
    advertised: Callable[[Iterable[tuple[int, int, int]]], list[tuple[int, int, int]]],
) -> Message:
    response: Any = error_response(api, version, body, code)
    if api.key == ApiKey.API_VERSIONS:  # clients read the versions even from an error answer
        entry = API_BY_KEY[ApiKey.API_VERSIONS].Response.ApiVersion
        ranges = advertised(ctx.services.handlers.version_ranges())
        response.api_keys = [entry(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in ranges]
    return response
