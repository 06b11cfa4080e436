"""The Avro type of Schema Registry's model, on fastavro: ``AvroSchema`` (parsing, canonical and normalized
forms, Avro's reader/writer compatibility), ``AvroCodec`` (payloads to and from Spark's ``from_avro`` shapes)
and ``schema_for_arrow`` (Spark's ``to_avro`` schema of an Arrow type).

The three functions are the per-type contract ``spark_kafkalog.schemas.providers`` dispatches to.
"""

from spark_kafkalog.schemas.avro.schema import AvroSchema, parse

__all__ = ["AvroSchema", "parse"]
