"""PySpark's writers set up for ``format("kafkalog")`` as Spark's JVM writers are for ``format("kafka")``.

Spark 4.3 settles two things for a Python data source in the JVM, before any Python runs, differently from
its Kafka connector; the wrappers here settle them on the Python side of PySpark's writer classes (classic
and Spark Connect alike), for writers of ``kafkalog`` only:

**Batch save modes** (``DataFrameWriter.save``). Spark's ``format("kafka")`` (``KafkaSourceProvider
.createRelation``) accepts ``Append`` and ``ErrorIfExists`` (the default, so a plain ``.save()`` writes) and
refuses ``Overwrite`` and ``Ignore``: a topic is only ever appended to. Spark refuses ``ErrorIfExists`` and
``Ignore`` for every Python data source (UNSUPPORTED_DATA_SOURCE_SAVE_MODE, "use Append or Overwrite").

| mode given (case-insensitive)                               | ``save()`` of ``kafkalog`` |
|-------------------------------------------------------------|----------------------------|
| none, ``errorifexists``, ``error``, ``default``, ``append`` | writes (sent to Spark as ``append``) |
| ``overwrite``, ``ignore``                                   | ``KafkaOptionError``: Spark's Kafka message |
| anything else                                               | left to Spark (its own error) |

**Async progress tracking** (``DataStreamWriter.start``). Spark allows ``asyncProgressTrackingEnabled`` only for
the sinks it names (its Kafka sink among them) and answers "Sink kafkalog does not support async progress
tracking" for this one. ``start`` of a ``kafkalog`` writer sets Spark's
``_asyncProgressTrackingOverrideSinkSupportCheck`` option, so the sink is taken as Spark's Kafka sink is;
Spark's other checks (no ``Once`` or ``AvailableNow`` trigger, no stateful query) and messages stay, and
the sink refuses it with ``exactlyOnce`` (``stream_options``).

``install(module)`` wraps ``format``, ``mode`` and ``save`` of ``module.DataFrameWriter`` and ``format`` and
``start`` of ``module.DataStreamWriter``, whichever the module has, once (idempotent): the wrappers remember
the format and mode set on a writer and call the originals. It runs when one of ``WRITER_MODULES`` is imported
(the import hook of ``pyspark_kafkalog._worker_python``, installed by the package's ``.pth``) and when
``spark_kafkalog.datasource.source`` is imported (``install_loaded``). A writer is used by one thread.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from spark_kafkalog.datasource.options import KafkaOptionError

__all__ = ["ASYNC_OVERRIDE", "WRITER_MODULES", "batch_save_mode", "install", "install_loaded"]

WRITER_MODULES = (
    "pyspark.sql.readwriter",
    "pyspark.sql.connect.readwriter",
    "pyspark.sql.streaming.readwriter",
    "pyspark.sql.connect.streaming.readwriter",
)
ASYNC_OVERRIDE = "_asyncProgressTrackingOverrideSinkSupportCheck"
_SOURCE = "kafkalog"
_APPENDING = frozenset(("append", "errorifexists", "error", "default"))
_SPARK_NAMES = {"overwrite": "Overwrite", "ignore": "Ignore"}


def batch_save_mode(mode: str | None) -> str | None:
    """The mode to hand Spark for a batch write of ``kafkalog``: ``"append"`` for the modes Spark's Kafka
    sink accepts, ``mode`` itself for a name Spark does not know; ``KafkaOptionError`` for Overwrite and
    Ignore, with Spark's Kafka message."""
    if mode is None:
        return "append"
    name = str(mode).strip().lower()
    if name in _APPENDING:
        return "append"
    if name in _SPARK_NAMES:
        raise KafkaOptionError(
            f"Save mode {_SPARK_NAMES[name]} not allowed for Kafka. Allowed save modes are Append and "
            'ErrorIfExists (default): a topic is only appended to, e.g. df.write.format("kafkalog")'
            '.option("kafka.bootstrap.servers", "host:9092").option("topic", "t").save()'
        )
    return mode


def _is_kafkalog(source: Any) -> bool:
    return isinstance(source, str) and source.strip().lower() == _SOURCE


def _remember_format(cls) -> None:
    original = cls.format

    @functools.wraps(original)
    def format(self, source):  # noqa: A001 - the writer's own name
        self._kafkalog_format = source
        return original(self, source)

    cls.format = format


def _wrap_batch_writer(cls) -> None:
    _remember_format(cls)
    original_mode, original_save = cls.mode, cls.save

    @functools.wraps(original_mode)
    def mode(self, saveMode):  # noqa: N803 - PySpark's parameter name
        if saveMode is not None:
            self._kafkalog_mode = saveMode
        return original_mode(self, saveMode)

    @functools.wraps(original_save)
    def save(self, path=None, format=None, mode=None, partitionBy=None, **options):  # noqa: A002, N803
        source = format if format is not None else getattr(self, "_kafkalog_format", None)
        if _is_kafkalog(source):
            mode = batch_save_mode(mode if mode is not None else getattr(self, "_kafkalog_mode", None))
        return original_save(self, path, format, mode, partitionBy, **options)

    cls.mode, cls.save = mode, save


def _wrap_stream_writer(cls) -> None:
    _remember_format(cls)
    original_start = cls.start

    @functools.wraps(original_start)
    def start(self, path=None, format=None, outputMode=None, partitionBy=None, queryName=None, **options):  # noqa: A002, N803
        source = format if format is not None else getattr(self, "_kafkalog_format", None)
        if _is_kafkalog(source):
            self.option(ASYNC_OVERRIDE, "true")
        return original_start(self, path, format, outputMode, partitionBy, queryName, **options)

    cls.start = start


def install(module: Any) -> None:
    """Wrap the writer classes of ``module`` (see the module docstring); a second call does nothing."""
    for name, wrap in (("DataFrameWriter", _wrap_batch_writer), ("DataStreamWriter", _wrap_stream_writer)):
        cls = getattr(module, name, None)
        if cls is None or cls.__dict__.get("_kafkalog_wrapped", False):
            continue
        wrap(cls)
        cls._kafkalog_wrapped = True


def install_loaded() -> None:
    """``install`` on every PySpark writer module already imported."""
    for name in WRITER_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            install(module)
