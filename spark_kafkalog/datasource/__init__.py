"""The ``kafkalog`` PySpark data source: Spark's Kafka source and sink schema and options, in Python.

    from spark_kafkalog.datasource import kafkalog_session
    spark = kafkalog_session()          # or: register(spark) on a session of your own
    spark.read.format("kafkalog").option("kafka.bootstrap.servers", "host:9092").option("subscribe", "t").load()

Pure modules (no pyspark): ``options`` (parsing and validation), ``offsets`` (Spark's offsets JSON and
limits), ``planning`` (offset ranges, splitting, pushdown bounds), ``arrow_decode`` (fetched batches to
Arrow), ``scan`` (one task's read), ``sink`` (one task's write), ``stream_options`` and ``stream_planning``
(readStream/writeStream options, micro-batch limits and data-loss rules). ``source`` and ``stream_source``
hold the pyspark classes; they are imported only when one of their names is used, so the pure modules load
without pyspark. ``readStream``/``writeStream`` with ``format("kafkalog")`` go through
``KafkaLogDataSource.streamReader``/``streamWriter``.
"""

from __future__ import annotations

_SOURCE_NAMES = (
    "KAFKA_SCHEMA",
    "KafkaLogCommitMessage",
    "KafkaLogDataSource",
    "KafkaLogInputPartition",
    "KafkaLogPushdownReader",
    "KafkaLogReader",
    "KafkaLogWriter",
    "kafka_schema",
    "kafkalog_session",
    "register",
)

__all__ = list(_SOURCE_NAMES)


def __getattr__(name: str):
    if name in _SOURCE_NAMES:
        from spark_kafkalog.datasource import source

        return getattr(source, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
