"""Schemas in Confluent Schema Registry's model: Avro, JSON Schema and Protobuf, shared by kafkalog's registry
(``broker.schema_registry``), the client's schema-registry serializers and the Spark data source.

Pure: parsing, canonical and normalized forms, compatibility (Confluent's levels and rules), Confluent's wire
format (``wire_format``) and the conversion of each format's values to and from Arrow (``codec``). No I/O.
"""

from spark_kafkalog.schemas.compatibility import COMPATIBILITY_LEVELS, compatibility_errors
from spark_kafkalog.schemas.parsed_schema import (
    AVRO,
    JSON,
    PROTOBUF,
    SCHEMA_TYPES,
    InvalidSchemaError,
    ParsedSchema,
    SchemaReference,
)
from spark_kafkalog.schemas.providers import parse_schema

__all__ = [
    "AVRO",
    "COMPATIBILITY_LEVELS",
    "JSON",
    "PROTOBUF",
    "SCHEMA_TYPES",
    "InvalidSchemaError",
    "ParsedSchema",
    "SchemaReference",
    "compatibility_errors",
    "parse_schema",
]
