"""The ``kafkalog`` PySpark data source: Spark's Kafka source and sink schema and options, in Python.

Pure modules (no pyspark): ``options`` (parsing and validation), ``offsets`` (Spark's offsets JSON and
limits), ``planning`` (offset ranges, splitting, pushdown bounds), ``arrow_decode`` (fetched batches to
Arrow). ``source`` holds the pyspark classes; it is imported only when one of its names is used.
"""
