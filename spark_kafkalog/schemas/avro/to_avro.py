"""``schema_for_arrow``: the Avro schema Spark's ``to_avro`` writes a column of an Arrow type with
(Spark's ``SchemaConverters.toAvroType``).

==============================  ===================================================================
Arrow (Spark)                   Avro
==============================  ===================================================================
bool / int8, int16, int32       boolean / int
int64 / float32 / float64       long / float / double
string / binary                 string / bytes
date32                          int with logicalType date
timestamp(tz=...)               long with logicalType timestamp-micros
timestamp() (no time zone)      long with logicalType local-timestamp-micros
decimal128(p, s)                fixed of the fewest bytes holding p digits, logicalType decimal,
                                named ``fixed`` in namespace ``<namespace>.<record name>`` (or
                                ``<record name>`` without a namespace), as Spark names it
duration (DayTimeInterval)      long
list / map<string, T>           array / map
struct                          record ``record_name`` in ``namespace``; a struct field's record is
                                named after the field, in namespace ``<namespace>.<record name>``
null                            null
==============================  ===================================================================

A nullable field, list element or map value becomes the union ``[T, "null"]`` (the top level is not
nullable). Field defaults are not written (Spark writes none). Other Arrow types raise ``TypeError``.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from spark_kafkalog.schemas.avro.schema import AvroSchema


def _fixed_size(precision: int) -> int:
    """The fewest bytes of a two's-complement integer holding ``precision`` decimal digits."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def avro_type(arrow_type: pa.DataType, nullable: bool, record_name: str, namespace: str) -> Any:
    """The Avro JSON of ``arrow_type`` (Spark's ``toAvroType(catalystType, nullable, recordName, nameSpace)``)."""
    t = arrow_type
    schema: Any
    if pa.types.is_boolean(t):
        schema = "boolean"
    elif pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        schema = "int"
    elif pa.types.is_int64(t):
        schema = "long"
    elif pa.types.is_date32(t) or pa.types.is_date64(t):
        schema = {"type": "int", "logicalType": "date"}
    elif pa.types.is_timestamp(t):
        schema = {"type": "long", "logicalType": "timestamp-micros" if t.tz else "local-timestamp-micros"}
    elif pa.types.is_float32(t):
        schema = "float"
    elif pa.types.is_float64(t):
        schema = "double"
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        schema = "string"
    elif pa.types.is_null(t):
        schema = "null"
    elif pa.types.is_decimal(t):
        name = f"{namespace}.{record_name}.fixed" if namespace else f"{record_name}.fixed"
        schema = {
            "type": "fixed",
            "name": name.rpartition(".")[2],
            "namespace": name.rpartition(".")[0],
            "size": _fixed_size(t.precision),
            "logicalType": "decimal",
            "precision": t.precision,
            "scale": t.scale,
        }
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        schema = "bytes"
    elif pa.types.is_duration(t):
        schema = "long"
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        item = t.value_field
        schema = {"type": "array", "items": avro_type(item.type, item.nullable, record_name, namespace)}
    elif pa.types.is_map(t):
        if not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type)):
            raise TypeError(f"Avro maps have string keys; cannot write a map with {t.key_type} keys")
        item = t.item_field
        schema = {"type": "map", "values": avro_type(item.type, item.nullable, record_name, namespace)}
    elif pa.types.is_struct(t):
        child_namespace = f"{namespace}.{record_name}" if namespace else record_name
        fields = [
            {"name": f.name, "type": avro_type(f.type, f.nullable, f.name, child_namespace)}
            for f in (t.field(i) for i in range(t.num_fields))
        ]
        schema = {"type": "record", "name": record_name}
        if namespace:
            schema["namespace"] = namespace
        schema["fields"] = fields
    else:
        raise TypeError(f"no Avro type for the Arrow type {t} (Spark's to_avro has none)")
    if nullable and not pa.types.is_null(t):
        return [schema, "null"]
    return schema


def schema_for_arrow(
    arrow_type: pa.DataType, *, record_name: str = "topLevelRecord", namespace: str = ""
) -> AvroSchema:
    """The ``AvroSchema`` Spark's ``to_avro`` derives for a column of ``arrow_type``."""
    return AvroSchema(json.loads(json.dumps(avro_type(arrow_type, False, record_name, namespace))))
