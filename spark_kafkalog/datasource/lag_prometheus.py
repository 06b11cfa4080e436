"""The Prometheus text exposition of Spark streaming lag metrics, and a small HTTP endpoint serving it
(pure: stdlib only, no pyspark).

Series (gauges; ``<prefix>`` is ``kafkalog_spark_streaming`` unless given), one per query run and source:

    | series                                   | Spark source metric      | value                        |
    |------------------------------------------|--------------------------|------------------------------|
    | ``<prefix>_min_offsets_behind_latest``   | ``minOffsetsBehindLatest`` | integer                    |
    | ``<prefix>_avg_offsets_behind_latest``   | ``avgOffsetsBehindLatest`` | float                      |
    | ``<prefix>_max_offsets_behind_latest``   | ``maxOffsetsBehindLatest`` | integer                    |

Labels: ``query_name`` (``""`` for an unnamed query), ``query_id``, ``run_id`` (Spark's UUIDs),
``source`` (``offsets_behind.source_label``: ``kafkalog[topicA,topicB]``, or Spark's description such as
``KafkaV2[Subscribe[topicA]]``) and ``source_index`` (the source's place in the progress's ``sources``, which
tells apart two sources reading the same topics). Format: Prometheus text exposition 0.0.4, ``# HELP`` and
``# TYPE`` once per family, label values escaped (``\\``, ``"``, newline).

``LagMetricsServer`` serves ``GET /metrics`` from a ``ThreadingHTTPServer`` on a daemon thread (loopback by
default; port 0 picks a free port, ``.port`` tells which); any other path is a 404. ``close()`` stops
accepting, waits for the serving thread and is idempotent. The render callable runs on the server's request
threads, so it must be thread-safe (``LagTable`` is).
"""

from __future__ import annotations

import logging
import re
import socket
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from spark_kafkalog.datasource.offsets_behind import SourceLag

__all__ = ["CONTENT_TYPE", "DEFAULT_PREFIX", "LagMetricsServer", "check_prefix", "render_prometheus", "series_names"]

log = logging.getLogger(__name__)

DEFAULT_PREFIX = "kafkalog_spark_streaming"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_FAMILIES = (
    ("min_offsets_behind_latest", "minOffsetsBehindLatest", "fewest offsets any partition of the source is behind"),
    ("avg_offsets_behind_latest", "avgOffsetsBehindLatest", "mean offsets the partitions of the source are behind"),
    ("max_offsets_behind_latest", "maxOffsetsBehindLatest", "most offsets any partition of the source is behind"),
)


_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def check_prefix(prefix: str) -> str:
    """``prefix`` when it can start a Prometheus metric name (``[a-zA-Z_:][a-zA-Z0-9_:]*``), else ValueError."""
    if not isinstance(prefix, str) or not _NAME.fullmatch(prefix):
        raise ValueError(f"lag metrics prefix {prefix!r} is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)")
    return prefix


def series_names(prefix: str = DEFAULT_PREFIX) -> tuple[str, str, str]:
    """The three gauge names: min, avg, max."""
    names = tuple(f"{prefix}_{suffix}" for suffix, _, _ in _FAMILIES)
    return names[0], names[1], names[2]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(lag: SourceLag) -> str:
    pairs = (
        ("query_name", lag.query_name or ""),
        ("query_id", lag.query_id),
        ("run_id", lag.run_id),
        ("source", lag.source),
        ("source_index", str(lag.source_index)),
    )
    return ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)


def _number(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if isinstance(value, float) else str(value)


def render_prometheus(lags: Iterable[SourceLag], prefix: str = DEFAULT_PREFIX) -> str:
    """The exposition text of ``lags`` (every family's HELP and TYPE even with no series)."""
    check_prefix(prefix)
    lags = list(lags)
    lines: list[str] = []
    for suffix, spark_name, meaning in _FAMILIES:
        name = f"{prefix}_{suffix}"
        lines.append(f"# HELP {name} Spark Kafka source metric {spark_name}: the {meaning} after the last micro-batch")
        lines.append(f"# TYPE {name} gauge")
        for lag in lags:
            value = {"min": lag.lag.min, "avg": lag.lag.avg, "max": lag.lag.max}[suffix[:3]]
            lines.append(f"{name}{{{_labels(lag)}}} {_number(value)}")
    return "\n".join(lines) + "\n"


class _IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class LagMetricsServer:
    """``GET /metrics`` answering ``render()`` (see the module docstring). Started by the constructor."""

    def __init__(self, render: Callable[[], str], host: str = "127.0.0.1", port: int = 0) -> None:
        self._render = render
        handler = self._handler_class()
        server_class = _IPv6Server if ":" in host else ThreadingHTTPServer
        self._server = server_class((host, port), handler)
        self._server.daemon_threads = True
        self._closed = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="kafkalog-lag-metrics", daemon=True
        )
        self._thread.start()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        render = self._render

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path.split("?", 1)[0] != "/metrics":
                    self.send_error(404, "only /metrics is served")
                    return
                try:
                    body = render().encode("utf-8")
                except Exception:  # noqa: BLE001 - a scrape must not kill the server
                    log.exception("rendering the lag metrics failed")
                    self.send_error(500, "rendering the lag metrics failed")
                    return
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
                log.debug("lag metrics endpoint: " + format, *args)

        return Handler

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://host:port/metrics``."""
        host = self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> LagMetricsServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
