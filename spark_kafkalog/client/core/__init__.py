"""``KafkaClient``, the blocking client the producer, the consumer and the admin client sit on.

``client`` holds the connection pool and the metadata cache and answers Metadata, ListOffsets and Fetch (the
Fetch calls in ``client_fetch``, a mixin of ``KafkaClient``); ``offsets`` builds ListOffsets requests and parses their answers, ``fetcher`` builds Fetch requests and
walks their record data into ``FetchedBatch``es (both pure).
"""

from spark_kafkalog.client.core.client import KafkaClient

__all__ = ["KafkaClient"]
