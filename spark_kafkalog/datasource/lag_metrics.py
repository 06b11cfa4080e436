"""Spark streaming lag under Spark's own metric names for ``format("kafkalog")`` sources: a
``StreamingQueryListener`` that computes ``minOffsetsBehindLatest``, ``avgOffsetsBehindLatest`` and
``maxOffsetsBehindLatest`` from each progress event and publishes them.

    from spark_kafkalog.datasource.lag_metrics import register_lag_metrics
    lag = register_lag_metrics(spark, prometheus_port=9464)   # GET http://127.0.0.1:9464/metrics
    query = df.writeStream....start()
    lag.metrics(query)            # {0: {"minOffsetsBehindLatest": "0", "maxOffsetsBehindLatest": "120", ...}}
    lag.progress_with_lag(query)  # query's last progress (a dict) with those in sources[i]["metrics"]

Why a listener: PySpark 4.3 gives a Python data source no ``ReportsSourceMetrics`` hook, so Spark's progress for
a kafkalog source has ``"metrics": {}``. The values are computed (``offsets_behind``) from the ``endOffset`` and
``latestOffset`` the progress does carry, exactly as Spark's ``KafkaMicroBatchStream.metrics`` computes them;
Spark's own Kafka source (``KafkaV2[...]``) is passed through with the values it reported.

Where they are published:

- in Python: ``metrics(query)``, ``lags(query)`` (``SourceLag`` objects with labels), ``progress_with_lag(query)``;
- as Prometheus gauges (``lag_prometheus``: ``kafkalog_spark_streaming_{min,avg,max}_offsets_behind_latest``
  labelled by query name, query id, run id, source and source index) on ``GET /metrics`` of an endpoint the
  listener starts when given a port (loopback unless ``prometheus_host`` says otherwise);
- "progress tags": Spark's progress objects cannot carry them. The JVM builds each ``StreamingQueryProgress``
  before any listener sees it; ``event.progress`` and ``query.lastProgress`` are read-only Python copies (a
  change is seen by nobody else), and observed metrics (``df.observe``) are aggregates over a micro-batch's rows
  computed in the tasks, which cannot hold the driver's latest offsets. So ``progress_with_lag`` returns the
  progress as Spark would have written it for its own Kafka source: PySpark's progress dict (as plain dicts)
  with the three keys in the kafkalog source's ``metrics``, for code that reads
  ``progress["sources"][i]["metrics"]``.

Threads: PySpark calls listener methods on py4j callback threads, and the endpoint renders on its request
threads; all state is in one ``LagTable`` (one lock). Classic (py4j) sessions only: under Spark Connect a
listener runs in a separate server-side process, where neither the values nor the endpoint are reachable from
the client. A terminated query's values stay readable from Python but leave the endpoint; a new run of the same
query replaces the old run's values.
"""

from __future__ import annotations

import logging
from typing import Any

from pyspark.sql.streaming import StreamingQueryListener

from spark_kafkalog.datasource.lag_prometheus import DEFAULT_PREFIX, LagMetricsServer, check_prefix, render_prometheus
from spark_kafkalog.datasource.offsets_behind import LagTable, SourceLag, plain_progress, source_lags, with_lag_metrics

__all__ = ["KafkalogLagListener", "register_lag_metrics"]

log = logging.getLogger(__name__)


def _key(query: Any) -> str:
    """A run id from a ``StreamingQuery``, else ``query`` as given (a query id, run id or name)."""
    run_id = getattr(query, "runId", None)
    return str(run_id if run_id is not None else query)


class KafkalogLagListener(StreamingQueryListener):
    """Keeps the latest ``*OffsetsBehindLatest`` of every kafkalog (and Spark Kafka) source of every query of
    the session it is added to, and serves them on a Prometheus endpoint when ``prometheus_port`` is given
    (0 picks a free port; ``prometheus_url`` tells it). ``prefix`` names the gauges (``<prefix>_max_offsets_
    behind_latest``). ``close()`` stops the endpoint and, when ``register_lag_metrics`` added the listener,
    removes it from the session."""

    def __init__(
        self,
        *,
        prometheus_port: int | None = None,
        prometheus_host: str = "127.0.0.1",
        prefix: str = DEFAULT_PREFIX,
    ) -> None:
        self.table = LagTable()
        self.prefix = check_prefix(prefix)
        self._session: Any = None
        self.server: LagMetricsServer | None = None
        if prometheus_port is not None:
            self.server = LagMetricsServer(self.prometheus_text, prometheus_host, prometheus_port)

    # -- listener callbacks (py4j callback threads) ----------------------------------------------------
    def onQueryStarted(self, event: Any) -> None:
        self.table.run_started(str(event.id), str(event.runId), event.name)

    def onQueryProgress(self, event: Any) -> None:
        try:
            progress = plain_progress(event.progress)
            lags = source_lags(progress)
            self.table.update(progress["id"], progress["runId"], progress.get("name"), lags, progress)
        except Exception:  # noqa: BLE001 - monitoring only: a bad event must not break the listener bus
            log.exception("could not compute the lag metrics of a streaming progress event")

    def onQueryIdle(self, event: Any) -> None:
        """Nothing changes: the values of the last micro-batch stay (Spark's Kafka source reports none either)."""

    def onQueryTerminated(self, event: Any) -> None:
        self.table.run_terminated(str(event.runId))

    # -- reading -----------------------------------------------------------------------------------------
    def lags(self, query: Any) -> list[SourceLag]:
        """The latest ``SourceLag`` of each kafkalog/Kafka source of ``query`` (a ``StreamingQuery``, or a query
        id, run id or query name); ``[]`` before its first progress."""
        return self.table.lags(_key(query))

    def metrics(self, query: Any) -> dict[int, dict[str, str]]:
        """Spark's source metrics map per source index (its place in ``progress["sources"]``), as a listener's
        event progress carries it for Spark's Kafka source: ``{0: {"minOffsetsBehindLatest": "0",
        "maxOffsetsBehindLatest": "7", "avgOffsetsBehindLatest": "3.5"}}`` (the average unrounded; Spark's
        progress JSON rounds it to one decimal, see ``offsets_behind.avg_json_string``)."""
        return {lag.source_index: lag.spark_metrics() for lag in self.lags(query)}

    def progress_with_lag(self, query: Any) -> dict[str, Any] | None:
        """The last progress of ``query`` seen by the listener (else ``query.lastProgress``) as plain dicts (the
        keys and values of PySpark's progress dict: offsets as JSON texts, ids as text) with the lag metrics in
        each kafkalog source's ``metrics`` in the form that progress has (the listener's: as the JVM gives them;
        ``query.lastProgress``, read from Spark's JSON: the average rounded to one decimal); None before any
        progress."""
        progress = self.table.progress(_key(query))
        if progress is not None:
            return with_lag_metrics(progress)
        progress = getattr(query, "lastProgress", None)
        return None if progress is None else with_lag_metrics(progress, progress_json=True)

    def prometheus_text(self) -> str:
        """What the endpoint serves: the gauges of every running query's sources."""
        return render_prometheus(self.table.active(), self.prefix)

    @property
    def prometheus_url(self) -> str | None:
        """``http://127.0.0.1:<port>/metrics``, or None without an endpoint."""
        return None if self.server is None else self.server.url

    def close(self) -> None:
        """Stop the endpoint and remove the listener from the session ``register_lag_metrics`` added it to
        (idempotent)."""
        if self.server is not None:
            self.server.close()
        session, self._session = self._session, None
        if session is not None:
            try:
                session.streams.removeListener(self)
            except Exception as e:  # noqa: BLE001 - a stopped session has no listeners to remove
                log.debug("could not remove the lag listener: %s", e)


def register_lag_metrics(
    spark: Any,
    prometheus_port: int | None = None,
    *,
    prometheus_host: str = "127.0.0.1",
    prefix: str = DEFAULT_PREFIX,
) -> KafkalogLagListener:
    """Create a ``KafkalogLagListener`` (with a Prometheus endpoint when ``prometheus_port`` is given; 0 picks a
    free port) and add it to ``spark.streams``. Queries started before the call are picked up at their next
    progress."""
    listener = KafkalogLagListener(prometheus_port=prometheus_port, prometheus_host=prometheus_host, prefix=prefix)
    try:
        spark.streams.addListener(listener)
    except BaseException:
        listener.close()
        raise
    listener._session = spark
    return listener
