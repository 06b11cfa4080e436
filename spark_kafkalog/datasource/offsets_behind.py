"""Spark's Kafka source lag metrics (``minOffsetsBehindLatest``, ``avgOffsetsBehindLatest``,
``maxOffsetsBehindLatest``) computed from a streaming query's progress (pure: no pyspark, no I/O).

Spark's ``KafkaMicroBatchStream`` implements ``ReportsSourceMetrics``; PySpark 4.3 gives a Python data source
no such hook, so the progress of a ``format("kafkalog")`` source carries ``"metrics": {}``. Everything the
metrics need is in the progress anyway: the source's ``endOffset`` (where the micro-batch ended) and its
``latestOffset`` (what ``reportLatestOffset`` returned when the batch was planned, the latest offsets the
reader listed). This module computes them as ``KafkaMicroBatchStream.metrics`` does:

- over every partition of ``latestOffset``: ``behind = latest - end`` (the partition's offset in ``endOffset``);
- ``min`` and ``max`` of those as integers, ``avg`` = their sum / their count as a double;
- the values as strings formatted as the JVM formats them (``Long.toString``, ``Double.toString``: ``"3"``,
  ``"2.5"``, ``"0.0"``, ``"1.0E7"``), under Spark's keys, so ``progress["sources"][i]["metrics"]`` reads the
  same as for Spark's own Kafka source. That is the form a listener's event progress carries; Spark 4.3's
  progress JSON (``progress.json``, PySpark's ``query.lastProgress``) rounds ``avgOffsetsBehindLatest`` to one
  decimal (``"88.33333333333333"`` is written ``"88.3"``), which ``avg_json_string`` reproduces;
- no partition (or no ``latestOffset`` / ``endOffset`` yet) is no metrics (Spark's empty map).

Two differences from Spark, both only where Spark's code would fail or report nonsense: a partition of
``latestOffset`` missing from ``endOffset`` (Spark throws ``NoSuchElementException``; kafkalog's planner always
ends a batch on every partition it listed, so this only happens with a foreign offset JSON) is left out, and a
partition whose latest offset is below its end (the log shrank: the topic was deleted and re-created) counts as
0 behind rather than a negative number.

The offset JSON is Spark's (``{"topic":{"0":42}}``) and may hold kafkalog's topic-id entries
(``"@topicId:topic:<id>":{}``, see ``topic_ids``), which name no partition and are ignored. In a PySpark
``SourceProgress`` the offsets are JSON texts (``"None"`` before the first batch); in ``progress.json`` they
are nested objects; both are accepted.

Which sources: Spark describes every Python data source stream by its JVM class and hash
(``org.apache.spark.sql.execution.datasources.v2.python.PythonMicroBatchStream...@4e32871f``), so a kafkalog
source is a Python stream whose offsets parse as Kafka offsets JSON. Spark's own Kafka source (``KafkaV2[...]``,
``KafkaSourceV1[...]``) reports the metrics itself: they are passed through (computed from its offsets only when
it reported none). ``source_label`` gives a source a name stable across runs (the Python description's hash is
not): ``kafkalog[topicA,topicB]``, or Spark's description for its own source.

Everything here is immutable or, for ``LagTable``, guarded by one lock: safe to call from any thread.
"""

from __future__ import annotations

import json
import math
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from spark_kafkalog.datasource.offsets import TopicPartition
from spark_kafkalog.datasource.topic_ids import is_id_key

__all__ = [
    "AVG_OFFSETS_BEHIND_LATEST",
    "KAFKALOG",
    "MAX_OFFSETS_BEHIND_LATEST",
    "MIN_OFFSETS_BEHIND_LATEST",
    "PYTHON_STREAM_PREFIX",
    "SPARK_KAFKA",
    "LagTable",
    "OffsetsBehindLatest",
    "SourceLag",
    "avg_json_string",
    "java_double_string",
    "offsets_behind_latest",
    "parse_source_offsets",
    "plain_progress",
    "source_kind",
    "source_label",
    "source_lags",
    "with_lag_metrics",
]

MIN_OFFSETS_BEHIND_LATEST = "minOffsetsBehindLatest"
MAX_OFFSETS_BEHIND_LATEST = "maxOffsetsBehindLatest"
AVG_OFFSETS_BEHIND_LATEST = "avgOffsetsBehindLatest"

PYTHON_STREAM_PREFIX = "org.apache.spark.sql.execution.datasources.v2.python.PythonMicroBatchStream"
"""How Spark 4.x describes a Python data source's micro-batch stream in a progress (then ``@<hash>``; the class
is ``PythonMicroBatchStreamWithTriggerAvailableNow`` when the reader supports ``Trigger.AvailableNow``)."""
_SPARK_KAFKA_PREFIXES = ("KafkaV2[", "KafkaSourceV1[")

KAFKALOG = "kafkalog"
SPARK_KAFKA = "kafka"


def java_double_string(value: float) -> str:
    """``value`` as Java's ``Double.toString`` writes it (what Spark puts in ``avgOffsetsBehindLatest``):
    plain decimal with at least one fraction digit for 1e-3 <= |value| < 1e7 (``"2.5"``, ``"12.0"``),
    otherwise ``d.dddE<n>`` (``"1.0E7"``, ``"5.0E-4"``); ``"NaN"``, ``"Infinity"``, ``"0.0"``, ``"-0.0"``.
    The digits are the shortest that read back to ``value`` (Java 19+; Java 17 may print more digits for
    some values)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    _, digit_tuple, exponent = Decimal(repr(magnitude)).as_tuple()
    assert isinstance(exponent, int), "a finite float has an integer exponent"
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    scientific = len(digits) - 1 + exponent  # value = d.ddd * 10**scientific
    if 1e-3 <= magnitude < 1e7:
        if scientific >= 0:
            whole = digits[: scientific + 1].ljust(scientific + 1, "0")
            fraction = digits[scientific + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-scientific - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{scientific}"


def avg_json_string(value: float) -> str:
    """``avgOffsetsBehindLatest`` as Spark 4.3's ``SourceProgress.json`` writes it: rounded half-up to one
    decimal, plain notation (``88.33333333333333`` -> ``"88.3"``, ``2.45`` -> ``"2.5"``, ``1.0E7`` ->
    ``"10000000.0"``, ``7`` -> ``"7.0"``). Observed on the JVM: only this key of a source's metrics is rounded.
    NaN and infinities are written as ``java_double_string`` does."""
    if math.isnan(value) or math.isinf(value):
        return java_double_string(value)
    return format(Decimal(repr(float(value))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP), "f")


@dataclass(frozen=True)
class OffsetsBehindLatest:
    """How far a source's partitions are behind their latest offsets after a micro-batch."""

    min: int
    max: int
    avg: float

    def spark_metrics(self, *, progress_json: bool = False) -> dict[str, str]:
        """Spark's source metrics map: ``{"minOffsetsBehindLatest": "0", "maxOffsetsBehindLatest": "7",
        "avgOffsetsBehindLatest": "88.33333333333333"}`` as ``KafkaMicroBatchStream.metrics`` returns it (what a
        listener's ``event.progress.sources[i].metrics`` holds); with ``progress_json`` the average as Spark 4.x
        writes it into the progress JSON (``progress.json``, ``query.lastProgress``, the UI, event logs):
        ``avg_json_string``, ``"88.3"``."""
        return {
            MIN_OFFSETS_BEHIND_LATEST: str(self.min),
            MAX_OFFSETS_BEHIND_LATEST: str(self.max),
            AVG_OFFSETS_BEHIND_LATEST: avg_json_string(self.avg) if progress_json else java_double_string(self.avg),
        }

    @classmethod
    def from_spark_metrics(cls, metrics: Mapping[str, Any]) -> OffsetsBehindLatest | None:
        """The values of a source metrics map Spark's Kafka source reported; None when it lacks one or one
        does not parse."""
        try:
            return cls(
                int(metrics[MIN_OFFSETS_BEHIND_LATEST]),
                int(metrics[MAX_OFFSETS_BEHIND_LATEST]),
                float(metrics[AVG_OFFSETS_BEHIND_LATEST]),
            )
        except (KeyError, TypeError, ValueError):
            return None


def parse_source_offsets(value: object) -> dict[TopicPartition, int] | None:
    """The partition offsets of a progress's ``endOffset``/``latestOffset``: a JSON text or the decoded object
    (``{"t":{"0":42},"@topicId:t:<id>":{}}``); topic-id entries are skipped. None when it is absent
    (``None``, ``"None"``, ``"null"``) or not a Kafka offsets JSON (another source's offset)."""
    if value is None:
        return None
    if isinstance(value, str):
        if value.strip() in ("", "None", "null"):
            return None
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, Mapping):
        return None
    out: dict[TopicPartition, int] = {}
    for topic, partitions in value.items():
        if is_id_key(topic):
            continue
        if not isinstance(topic, str) or not isinstance(partitions, Mapping):
            return None
        for key, offset in partitions.items():
            if not isinstance(key, str) or not key.isdigit():
                return None
            if isinstance(offset, bool) or not isinstance(offset, int):
                return None
            out[TopicPartition(topic, int(key))] = offset
    return out


def offsets_behind_latest(
    end: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int]
) -> OffsetsBehindLatest | None:
    """min/max/avg of ``latest - end`` over the partitions of ``latest`` (see the module docstring for the
    partitions left out and the floor at 0); None when no partition counts."""
    behind = [max(0, offset - end[tp]) for tp, offset in latest.items() if tp in end]
    if not behind:
        return None
    return OffsetsBehindLatest(min(behind), max(behind), sum(behind) / len(behind))


def source_kind(description: str, end: object = None, latest: object = None) -> str | None:
    """``KAFKALOG`` for a Python data source stream whose ``end`` and ``latest`` offsets are Kafka offsets JSON,
    ``SPARK_KAFKA`` for Spark's own Kafka source, else None."""
    if description.startswith(_SPARK_KAFKA_PREFIXES):
        return SPARK_KAFKA
    if description.startswith(PYTHON_STREAM_PREFIX):
        if parse_source_offsets(end) is not None and parse_source_offsets(latest) is not None:
            return KAFKALOG
    return None


def source_label(description: str, kind: str, offsets: Mapping[TopicPartition, int] | None = None) -> str:
    """A name for a source that stays the same across runs: ``kafkalog[a,b]`` (the topics of ``offsets``,
    sorted) for kafkalog, Spark's description (``KafkaV2[Subscribe[a]]``) for Spark's Kafka source."""
    if kind == KAFKALOG:
        topics = sorted({tp.topic for tp in offsets or {}})
        return f"kafkalog[{','.join(topics)}]"
    return description


@dataclass(frozen=True)
class SourceLag:
    """The lag metrics of one source of one progress event; ``source_index`` is its place in
    ``progress["sources"]``, ``source`` its ``source_label``, ``kind`` ``KAFKALOG`` or ``SPARK_KAFKA``."""

    query_id: str
    run_id: str
    query_name: str | None
    batch_id: int
    timestamp: str
    source_index: int
    source: str
    kind: str
    lag: OffsetsBehindLatest
    description: str = field(default="", compare=False)

    def spark_metrics(self, *, progress_json: bool = False) -> dict[str, str]:
        return self.lag.spark_metrics(progress_json=progress_json)


def _text(value: object) -> str:
    return "" if value is None else str(value)


def source_lags(progress: Mapping[str, Any]) -> list[SourceLag]:
    """The lag of every kafkalog and Spark Kafka source of a ``StreamingQueryProgress`` (PySpark's object, a
    dict subclass, or the dict of ``json.loads(progress.json)``), in source order."""
    out: list[SourceLag] = []
    for index, source in enumerate(progress.get("sources") or ()):
        description = _text(source.get("description"))
        end_value, latest_value = source.get("endOffset"), source.get("latestOffset")
        kind = source_kind(description, end_value, latest_value)
        if kind is None:
            continue
        end, latest = parse_source_offsets(end_value), parse_source_offsets(latest_value)
        lag = None
        if kind == SPARK_KAFKA:
            lag = OffsetsBehindLatest.from_spark_metrics(source.get("metrics") or {})
        if lag is None and end is not None and latest is not None:
            lag = offsets_behind_latest(end, latest)
        if lag is None:
            continue
        name = progress.get("name")
        out.append(
            SourceLag(
                query_id=_text(progress.get("id")),
                run_id=_text(progress.get("runId")),
                query_name=None if name is None else str(name),
                batch_id=int(progress.get("batchId", -1)),
                timestamp=_text(progress.get("timestamp")),
                source_index=index,
                source=source_label(description, kind, end),
                kind=kind,
                lag=lag,
                description=description,
            )
        )
    return out


def plain_progress(value: Any) -> Any:
    """``value`` (a PySpark ``StreamingQueryProgress``, or any part of one) as plain JSON types: mappings as
    dicts, lists as lists, UUIDs as text, ``Row``s (observed metrics) as dicts via ``asDict``. No JVM call, so
    it works on progress objects kept after their session stopped. Offsets stay as PySpark gives them (JSON
    texts in ``SourceProgress``)."""
    if isinstance(value, Mapping):
        return {str(k): plain_progress(v) for k, v in value.items()}
    as_dict = getattr(value, "asDict", None)
    if callable(as_dict):
        return plain_progress(as_dict(recursive=True))
    if isinstance(value, list | tuple):
        return [plain_progress(v) for v in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def with_lag_metrics(progress: Mapping[str, Any], *, progress_json: bool = False) -> dict[str, Any]:
    """A copy of ``progress`` (plain dicts and lists) in which each kafkalog source's ``metrics`` holds Spark's
    three keys (``OffsetsBehindLatest.spark_metrics``) beside whatever it had: the progress Spark's own Kafka
    source would have given. ``progress_json``: ``progress`` came from Spark's progress JSON
    (``query.lastProgress``), whose average Spark rounds to one decimal; else it is a listener's event progress,
    which carries the JVM's values. Spark's Kafka sources are left as they are."""
    out = plain_progress(progress)
    for lag in source_lags(progress):
        if lag.kind != KAFKALOG:
            continue
        source = out["sources"][lag.source_index]
        source["metrics"] = {**(source.get("metrics") or {}), **lag.spark_metrics(progress_json=progress_json)}
    return out


@dataclass
class _Run:
    query_id: str
    run_id: str
    query_name: str | None
    active: bool = True
    lags: list[SourceLag] = field(default_factory=list)
    progress: Mapping[str, Any] | None = None


class LagTable:
    """The latest ``SourceLag``s of each query run, fed by a listener and read by ``metrics`` calls and the
    Prometheus endpoint. A new run of a query replaces its earlier runs; a terminated run stays readable but is
    no longer ``active()`` (its series leave the endpoint). Thread-safe: one lock around every call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}

    def run_started(self, query_id: str, run_id: str, query_name: str | None) -> None:
        with self._lock:
            for old in [r for r in self._runs.values() if r.query_id == query_id and r.run_id != run_id]:
                del self._runs[old.run_id]
            self._runs.setdefault(run_id, _Run(query_id, run_id, query_name))

    def update(
        self,
        query_id: str,
        run_id: str,
        query_name: str | None,
        lags: Iterable[SourceLag],
        progress: Mapping[str, Any] | None = None,
    ) -> None:
        """Record a progress event's lags (replacing the run's earlier ones) and, optionally, the progress."""
        lags = list(lags)
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                for old in [r for r in self._runs.values() if r.query_id == query_id]:
                    del self._runs[old.run_id]
                run = self._runs[run_id] = _Run(query_id, run_id, query_name)
            run.query_name = query_name
            run.lags = lags
            if progress is not None:
                run.progress = progress

    def run_terminated(self, run_id: str) -> None:
        with self._lock:
            run = self._runs.get(run_id)
            if run is not None:
                run.active = False

    def _find(self, key: str) -> _Run | None:
        if key in self._runs:
            return self._runs[key]
        matches = [r for r in self._runs.values() if key in (r.query_id, r.query_name)]
        active = [r for r in matches if r.active]
        runs = active or matches
        return runs[-1] if runs else None

    def lags(self, key: str) -> list[SourceLag]:
        """The latest lags of the run with run id ``key``, else of the latest run of the query whose id or
        name is ``key``; ``[]`` when unknown or before the first progress."""
        with self._lock:
            run = self._find(key)
            return list(run.lags) if run is not None else []

    def progress(self, key: str) -> Mapping[str, Any] | None:
        """The last progress recorded for ``key`` (looked up as in ``lags``)."""
        with self._lock:
            run = self._find(key)
            return None if run is None else run.progress

    def active(self) -> list[SourceLag]:
        """The lags of every run not terminated, by query id, run id, then source."""
        with self._lock:
            runs = sorted((r for r in self._runs.values() if r.active), key=lambda r: (r.query_id, r.run_id))
            return [lag for r in runs for lag in r.lags]
