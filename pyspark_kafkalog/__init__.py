"""Auto-registration of ``format("kafkalog")``: Spark 4 registers the ``DefaultSource`` of every installed
top-level module named ``pyspark_<x>``.

When a session first resolves a Python data source name, PySpark 4.3's ``lookup_data_sources`` worker
imports each ``pyspark_*`` module found on the path and registers ``DefaultSource`` (a ``DataSource``
subclass) under ``DefaultSource.name()``. So after ``pip install spark-kafkalog``,
``spark.read.format("kafkalog")`` works in any session, ``pyspark`` shell or ``spark-sql`` without a
``register(spark)`` call (the Python workers must run an interpreter where the package is installed).

Importing this module loads nothing but itself; ``DefaultSource`` (pyspark, pyarrow, the client) is
loaded on first access, which the lookup worker does at once.

PYTEST_DONT_REWRITE: the package ships a pytest plugin (``broker.testing.pytest_plugin``), so pytest marks its
modules for assertion rewriting, but the ``.pth`` start-up hook imports this one first; the marker tells pytest
it needs no rewriting (instead of a warning in every test run).
"""

from __future__ import annotations

__all__ = ["DefaultSource"]


def __getattr__(name: str):
    if name == "DefaultSource":
        from spark_kafkalog.datasource.source import KafkaLogDataSource

        return KafkaLogDataSource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
