"""Confluent Schema Registry from the client: ``SchemaRegistryClient`` (a blocking REST client with caches)
and the serializers that write and read Confluent's wire format through it.

    from spark_kafkalog.client.schema_registry import SchemaRegistryClient, Schema

    with SchemaRegistryClient({"url": "http://localhost:8081"}) as registry:
        schema_id = registry.register_schema("events-value", Schema(avro_json))

Imports no pyspark; the per-format libraries (fastavro, google.protobuf, jsonschema) load with the
serializer that needs them.
"""

from spark_kafkalog.client.schema_registry.client import SchemaRegistryClient
from spark_kafkalog.client.schema_registry.model import RegisteredSchema, Schema, SchemaReference, SchemaRegistryError

__all__ = [
    "RegisteredSchema",
    "Schema",
    "SchemaReference",
    "SchemaRegistryClient",
    "SchemaRegistryError",
]
