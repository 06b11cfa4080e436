"""The producer (Kafka's ``clients/producer``): ``Producer`` and the parts behind it.

``producer`` is the API; ``send_path`` the per-record ``send`` (compiled in ``_kernels_src/producer.c``
when built) and ``batch_producer`` the whole-batch ``send_batch``; ``partitioner`` places records;
``accumulator`` and ``producer_batch`` queue records per partition; ``sender`` is the background thread
that sends them, with ``idempotence`` (producer id, epoch, sequences) and ``transactions``
(``TransactionManager``).
"""

from spark_kafkalog.client.producer.partitioner import (
    DefaultPartitioner,
    Partitioner,
    RoundRobinPartitioner,
    UniformStickyPartitioner,
)
from spark_kafkalog.client.producer.producer import Producer
from spark_kafkalog.client.producer.producer_batch import RecordFuture

__all__ = [
    "DefaultPartitioner",
    "Partitioner",
    "Producer",
    "RecordFuture",
    "RoundRobinPartitioner",
    "UniformStickyPartitioner",
]
