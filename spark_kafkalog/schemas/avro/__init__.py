"""The Avro type of Schema Registry's model, on fastavro: ``AvroSchema`` (parsing, canonical and normalized
forms, Avro's reader/writer compatibility), ``AvroCodec`` (payloads to and from Spark's ``from_avro`` shapes)
and ``schema_for_arrow`` (Spark's ``to_avro`` schema of an Arrow type).

``parse``, ``codec`` and ``schema_for_arrow`` are the per-type contract ``spark_kafkalog.schemas.providers``
dispatches to.
"""

from spark_kafkalog.schemas.avro.codec import AvroCodec, codec
from spark_kafkalog.schemas.avro.schema import AvroSchema, parse
from spark_kafkalog.schemas.avro.to_avro import schema_for_arrow

__all__ = ["AvroCodec", "AvroSchema", "codec", "parse", "schema_for_arrow"]
