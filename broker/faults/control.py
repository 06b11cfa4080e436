"""The fault-injection control channel of a broker process, and ``RemoteFaults``, its client.

A broker opens it only when ``kafkalog.fault.injection.listener`` names a loopback address (``127.0.0.1:<port>``,
``[::1]:<port>``, ``localhost:<port>`` or a bare port on 127.0.0.1); ``EmbeddedCluster`` sets it per broker.
Protocol: HTTP/1.1 on that address, one ``POST /<operation>`` per call with a JSON object body (the
operation's keyword arguments) and a JSON object answer; status 400 with ``{"error": "..."}`` when the
arguments are refused. Operations: ``push_errors``, ``set_rtt``, ``delay_connections``, ``set_api_version``, ``track_requests``
(each answers ``{"id", "description"}``), ``undo`` / ``injection`` / ``requests`` (``{"id"}``), ``active``,
``clear``, ``drop_connections`` (``{"result": n}``).

Concurrency: the server answers on its own thread (``ThreadingHTTPServer``), calling the thread-safe
``FaultInjector``; ``RemoteFaults`` is a plain blocking client, safe from any thread.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .rules import TrackedRequest

FaultInjector = Any
"""A ``broker.faults.injector.FaultInjector`` (not imported: the injector opens this channel)."""
Injection = Any
"""An ``Injection`` (or ``RequestLog``) the injector returned."""

LISTENER_KEY = "kafkalog.fault.injection.listener"


def parse_listener(value: str) -> tuple[str, int]:
    """(host, port) of a control listener value; a host that is not loopback is refused (``ValueError``)."""
    text = value.strip()
    if text.isdigit():
        return "127.0.0.1", int(text)
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{LISTENER_KEY}={value!r}: expected <loopback host>:<port>")
    host = host.strip("[]")
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ValueError(f"{LISTENER_KEY}={value!r}: the fault control channel listens on loopback only")
    return ("127.0.0.1" if host == "localhost" else host), int(port)


class FaultControlServer:
    """Serves one ``FaultInjector`` over HTTP on a loopback address (see the module docstring)."""

    def __init__(self, injector: FaultInjector, listener: str) -> None:
        self.injector = injector
        host, port = parse_listener(listener)
        server_cls = _IPv6Server if ":" in host else ThreadingHTTPServer
        self._server = server_cls((host, port), _handler_for(injector))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else str(host)
        return f"[{text}]:{port}" if ":" in text else f"{text}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fault-control", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)


class _IPv6Server(ThreadingHTTPServer):
    import socket as _socket

    address_family = _socket.AF_INET6


def _describe(injection: Injection, instance: str) -> dict[str, Any]:
    return {
        "id": injection.id,
        "instance": instance,
        "description": injection.description,
        "remaining": injection.remaining,
        "active": injection.active,
    }


def _handler_for(injector: FaultInjector) -> type[BaseHTTPRequestHandler]:
    injections: dict[int, Injection] = {}  # every injection made through this channel, by id
    lock = threading.Lock()
    instance = uuid.uuid4().hex  # this broker process's channel: ids of an earlier run of the broker are not ours

    def remember(injection: Injection) -> dict[str, Any]:
        with lock:
            injections[injection.id] = injection
        return _describe(injection, instance)

    def find(args: dict[str, Any]) -> Injection | None:
        """The injection ``args`` names, None when it is not this run's (the broker restarted since)."""
        if args.get("instance") != instance:
            return None
        with lock:
            injection = injections.get(int(args["id"]))
        if injection is None:
            raise ValueError(f"no injection #{args['id']} was made through this channel")
        return injection

    def call(op: str, args: dict[str, Any]) -> dict[str, Any]:
        if op == "push_errors":
            return remember(injector.push_errors(**args))
        if op == "set_rtt":
            return remember(injector.set_rtt(**args))
        if op == "delay_connections":
            return remember(injector.delay_connections(**args))
        if op == "set_api_version":
            return remember(injector.set_api_version(**args))
        if op == "track_requests":
            return remember(injector.track_requests(**args))
        if op == "drop_connections":
            return {"result": injector.drop_connections(**args)}
        if op == "active":
            return {"injections": [remember(i) for i in injector.active()]}
        if op == "clear":
            injector.clear()
            return {}
        if op == "undo":
            found = find(args)
            if found is not None:  # an earlier run's injections ended with it
                found.undo()
            return {}
        if op == "injection":
            found = find(args)
            if found is None:
                return {
                    "id": args["id"],
                    "description": "ended (the broker restarted)",
                    "remaining": None,
                    "active": False,
                }
            return _describe(found, instance)
        if op == "requests":
            found = find(args)
            if found is None:
                raise ValueError(f"injection #{args['id']} belonged to an earlier run of this broker")
            if not hasattr(found, "requests"):  # a RequestLog
                raise ValueError(f"injection #{found.id} does not track requests")
            return {"requests": [list(r) for r in found.requests]}
        raise ValueError(f"unknown operation {op!r}")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            try:
                length = int(self.headers.get("Content-Length") or 0)
                args = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(args, dict):
                    raise ValueError("the body must be a JSON object")
                status, answer = 200, call(self.path.strip("/"), args)
            except (ValueError, TypeError, KeyError) as e:
                status, answer = 400, {"error": f"{type(e).__name__}: {e}"}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # the injector logs what matters
            pass

    return Handler


class FaultControlError(RuntimeError):
    """The broker refused a fault-injection call (the message is its reason) or could not be reached."""


class RemoteFaults:
    """``FaultInjector``'s methods for a broker process, through its control channel at ``address``
    (``host:port``). What they return mirrors the in-process ones: ``RemoteInjection`` / ``RemoteRequestLog``."""

    def __init__(self, address: str, *, broker_id: int | None = None, timeout_s: float = 30.0) -> None:
        self.address = address
        self.broker_id = broker_id
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"RemoteFaults(broker {self.broker_id} at {self.address})"

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        """One control call; raises ``FaultControlError`` with the broker's reason when refused."""
        request = urllib.request.Request(
            f"http://{self.address}/{op}",
            data=json.dumps(args).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as e:
            try:
                reason = json.loads(e.read()).get("error", str(e))
            except ValueError:
                reason = str(e)
            raise FaultControlError(f"broker {self.broker_id}: {op} refused: {reason}") from None
        except (urllib.error.URLError, OSError) as e:
            cause = e.reason if isinstance(e, urllib.error.URLError) and isinstance(e.reason, OSError) else e
            raise FaultControlError(
                f"broker {self.broker_id}: fault control at {self.address} unreachable: {cause}"
            ) from cause
        assert isinstance(answer, dict)
        return answer

    def push_errors(
        self,
        api: str | int,
        errors: Iterable[str | int] | str | int,
        *,
        topic: str | None = None,
        partition: int | None = None,
        rtt_ms: int | Iterable[int] = 0,
    ) -> RemoteInjection:
        errors = [errors] if isinstance(errors, (str, int)) else list(errors)
        rtt: int | list[int] = rtt_ms if isinstance(rtt_ms, int) else list(rtt_ms)
        answer = self.call("push_errors", api=api, errors=errors, topic=topic, partition=partition, rtt_ms=rtt)
        return RemoteInjection(self, answer)

    def set_rtt(self, ms: int, *, api: str | int | None = None) -> RemoteInjection:
        return RemoteInjection(self, self.call("set_rtt", ms=ms, api=api))

    def delay_connections(self, ms: int, *, client_id: str | None = None) -> RemoteInjection:
        return RemoteInjection(self, self.call("delay_connections", ms=ms, client_id=client_id))

    def set_api_version(self, api: str | int, min_version: int, max_version: int) -> RemoteInjection:
        return RemoteInjection(
            self, self.call("set_api_version", api=api, min_version=min_version, max_version=max_version)
        )

    def track_requests(self) -> RemoteRequestLog:
        return RemoteRequestLog(self, self.call("track_requests"))

    def drop_connections(self, *, client_id: str | None = None) -> int:
        return int(self.call("drop_connections", client_id=client_id)["result"])

    def active(self) -> list[RemoteInjection]:
        return [RemoteInjection(self, i) for i in self.call("active")["injections"]]

    def clear(self) -> None:
        self.call("clear")


class RemoteInjection:
    """An injection made through ``RemoteFaults``: context manager, ``undo()``, and ``remaining`` / ``active`` /
    ``description`` read from the broker."""

    def __init__(self, faults: RemoteFaults, answer: dict[str, Any]) -> None:
        self._faults = faults
        self.id = int(answer["id"])
        self.instance = str(answer["instance"])
        self._description = str(answer["description"])

    def _state(self) -> dict[str, Any]:
        return self._faults.call("injection", id=self.id, instance=self.instance)

    @property
    def description(self) -> str:
        return str(self._state()["description"])

    @property
    def remaining(self) -> int | None:
        value = self._state()["remaining"]
        return None if value is None else int(value)

    @property
    def active(self) -> bool:
        return bool(self._state()["active"])

    def undo(self) -> None:
        """Undo it on the broker; a no-op when the broker process it was made on has ended (its injections ended
        with it) or is stopped now (``broker_down``): a broker process starts without injections."""
        try:
            self._faults.call("undo", id=self.id, instance=self.instance)
        except FaultControlError as e:
            if not isinstance(e.__cause__, ConnectionRefusedError):
                raise

    def __enter__(self) -> RemoteInjection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()

    def __repr__(self) -> str:
        return f"<RemoteInjection #{self.id} on broker {self._faults.broker_id}: {self._description}>"


class RemoteRequestLog(RemoteInjection):
    """``RemoteFaults.track_requests()``: ``requests`` fetched from the broker on each read."""

    @property
    def requests(self) -> list[TrackedRequest]:
        rows = self._faults.call("requests", id=self.id, instance=self.instance)["requests"]
        return [TrackedRequest(str(a), int(v), c, float(t)) for a, v, c, t in rows]

    def count(self, api: str | int | None = None) -> int:
        from .rules import resolve_api

        name = None if api is None else resolve_api(api).name
        return sum(1 for r in self.requests if name is None or r.api == name)

    def __enter__(self) -> RemoteRequestLog:
        return self
