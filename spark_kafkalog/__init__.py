"""kafkalog: a Kafka-compatible commit log and the PySpark data source that reads and writes it.

This module holds the version only; it imports nothing heavy, because the broker imports it too.
"""

__version__ = "0.1.0"
