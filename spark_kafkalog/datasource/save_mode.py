"""Batch save modes of ``df.write.format("kafkalog")``, as Spark's Kafka sink takes them.

Spark's ``format("kafka")`` (``KafkaSourceProvider.createRelation``) accepts ``Append`` and ``ErrorIfExists``
(the default, so a plain ``.save()`` writes) and refuses ``Overwrite`` and ``Ignore``: a topic is only ever
appended to. Spark 4.3 decides a Python data source's save mode in the JVM before any Python runs: it
refuses ``ErrorIfExists`` and ``Ignore`` (UNSUPPORTED_DATA_SOURCE_SAVE_MODE, "use Append or Overwrite")
and passes ``Overwrite`` to ``writer(schema, overwrite=True)``. So the mode is settled on the Python side
of ``DataFrameWriter.save``, for classic and Spark Connect writers alike:

| mode given (case-insensitive)                          | ``save()`` of ``kafkalog`` |
|--------------------------------------------------------|----------------------------|
| none, ``errorifexists``, ``error``, ``default``, ``append`` | writes (sent to Spark as ``append``) |
| ``overwrite``, ``ignore``                              | ``KafkaOptionError``: Spark's Kafka message |
| anything else                                          | left to Spark (its own error) |

``install(module)`` wraps ``format``, ``mode`` and ``save`` of ``module.DataFrameWriter`` once (idempotent):
the wrappers remember the format and mode set on a writer and call the originals; writers of other formats
are untouched. It runs when ``pyspark.sql.readwriter`` or ``pyspark.sql.connect.readwriter`` is imported
(the import hook of ``pyspark_kafkalog._worker_python``, installed by the package's ``.pth``) and when
``spark_kafkalog.datasource.source`` is imported. A writer is used by one thread.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from spark_kafkalog.datasource.options import KafkaOptionError

__all__ = ["READWRITER_MODULES", "batch_save_mode", "install", "install_loaded"]

READWRITER_MODULES = ("pyspark.sql.readwriter", "pyspark.sql.connect.readwriter")
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


def install(module: Any) -> None:
    """Wrap ``module.DataFrameWriter`` (see the module docstring); a second call does nothing."""
    cls = getattr(module, "DataFrameWriter", None)
    if cls is None or getattr(cls, "_kafkalog_save_modes", False):
        return
    original_format, original_mode, original_save = cls.format, cls.mode, cls.save

    @functools.wraps(original_format)
    def format(self, source):  # noqa: A001 - DataFrameWriter's own name
        self._kafkalog_format = source
        return original_format(self, source)

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

    cls.format, cls.mode, cls.save = format, mode, save
    cls._kafkalog_save_modes = True


def install_loaded() -> None:
    """``install`` on every PySpark writer module already imported."""
    for name in READWRITER_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            install(module)
