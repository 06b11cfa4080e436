"""The names of the Schema Registry format options (``formats``), kept apart so ``options`` can list them
without importing ``formats`` (which imports ``options``)."""

from __future__ import annotations

__all__ = ["READ_FORMAT_OPTIONS", "REGISTRY_PREFIX", "REGISTRY_URL", "WRITE_FORMAT_OPTIONS"]

REGISTRY_PREFIX = "schema.registry."
"""``schema.registry.<conf>`` options are ``SchemaRegistryClient`` settings (prefix stripped)."""
REGISTRY_URL = "schema.registry.url"

_COMMON = ("valueFormat", "keyFormat", REGISTRY_URL, "valueProtobufMessage", "keyProtobufMessage")
READ_FORMAT_OPTIONS = _COMMON + (
    "valueSubject",
    "keySubject",
    "valueSchemaVersion",
    "keySchemaVersion",
    "valueSchemaId",
    "keySchemaId",
    "mode",
    "columnNameOfCorruptRecord",
)
"""Spark-style spelling of the read options ``formats`` adds (``schema.registry.*`` besides)."""
WRITE_FORMAT_OPTIONS = _COMMON + (
    "value.subject.name.strategy",
    "key.subject.name.strategy",
    "auto.register.schemas",
    "use.latest.version",
    "normalize.schemas",
    "valueSchema",
    "keySchema",
    "recordName",
    "recordNamespace",
)
"""Spark-style spelling of the write options ``formats`` adds (``schema.registry.*`` besides)."""
