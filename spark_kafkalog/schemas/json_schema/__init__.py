"""JSON Schema in Confluent Schema Registry's model: ``JsonSchema`` (parsing, canonical and normalized forms,
validation, Confluent's compatibility rules) and ``JsonSchemaCodec`` (JSON payloads to and from Arrow values).

The provider interface ``spark_kafkalog.schemas.providers`` calls: ``parse``, ``codec``, ``schema_for_arrow``.
"""

from spark_kafkalog.schemas.json_schema.arrow import schema_for_arrow
from spark_kafkalog.schemas.json_schema.codec import JsonSchemaCodec, arrow_type_of, codec
from spark_kafkalog.schemas.json_schema.schema import JsonSchema, parse

__all__ = ["JsonSchema", "JsonSchemaCodec", "arrow_type_of", "codec", "parse", "schema_for_arrow"]
