"""Confluent Schema Registry from the client: ``SchemaRegistryClient`` (a blocking REST client with caches)
and the serializers that write and read Confluent's wire format through it.

    from spark_kafkalog.client import Producer
    from spark_kafkalog.client.schema_registry import AvroSerializer, SchemaRegistryClient

    registry = SchemaRegistryClient({"url": "http://localhost:8081"})
    with Producer("localhost:9092", value_serializer=AvroSerializer(registry, avro_schema_json)) as producer:
        producer.send("users", {"id": 1, "name": "Ada"})

===============================================  ===========================================================
``SchemaRegistryClient``, ``Schema``,            the REST client and its values (``client``, ``model``,
``RegisteredSchema``, ``SchemaReference``,       ``rest``: configuration keys and caches)
``SchemaRegistryError``
``AvroSerializer``, ``AvroDeserializer``         ``avro``: fastavro values
``JSONSchemaSerializer``,                        ``json_schema``: JSON values validated with the schema
``JSONSchemaDeserializer``
``ProtobufSerializer``, ``ProtobufDeserializer`` ``protobuf``: generated message classes
``topic_subject_name_strategy``,                 ``strategies``: the subject a schema is registered under
``record_subject_name_strategy``,
``topic_record_subject_name_strategy``
===============================================  ===========================================================

Imports no pyspark. The serializers' modules (and fastavro, google.protobuf, jsonschema with them) load on
first use of their names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from spark_kafkalog.client.schema_registry.client import SchemaRegistryClient
from spark_kafkalog.client.schema_registry.model import RegisteredSchema, Schema, SchemaReference, SchemaRegistryError
from spark_kafkalog.client.schema_registry.strategies import (
    record_subject_name_strategy,
    topic_record_subject_name_strategy,
    topic_subject_name_strategy,
)

if TYPE_CHECKING:
    from spark_kafkalog.client.schema_registry.avro import AvroDeserializer, AvroSerializer
    from spark_kafkalog.client.schema_registry.json_schema import JSONSchemaDeserializer, JSONSchemaSerializer
    from spark_kafkalog.client.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer

_LAZY = {
    "AvroSerializer": "avro",
    "AvroDeserializer": "avro",
    "JSONSchemaSerializer": "json_schema",
    "JSONSchemaDeserializer": "json_schema",
    "ProtobufSerializer": "protobuf",
    "ProtobufDeserializer": "protobuf",
}

__all__ = [
    "AvroDeserializer",
    "AvroSerializer",
    "JSONSchemaDeserializer",
    "JSONSchemaSerializer",
    "ProtobufDeserializer",
    "ProtobufSerializer",
    "RegisteredSchema",
    "Schema",
    "SchemaReference",
    "SchemaRegistryClient",
    "SchemaRegistryError",
    "record_subject_name_strategy",
    "topic_record_subject_name_strategy",
    "topic_subject_name_strategy",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
