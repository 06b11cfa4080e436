"""``schema_for_arrow``: a proto3 schema that writes values of an Arrow (Spark) struct type.

One file, ``package <namespace>``, ``message <record_name>`` with one field per struct field, numbered from 1
in order:

==============================  ==========================================================
Arrow (Spark) type              Protobuf field
==============================  ==========================================================
bool                            bool
int8, int16, int32, uint8/16    int32
int64, uint32, uint64           int64
float16, float32                float
float64                         double
string, large_string            string
binary, large_binary, fixed     bytes
decimal128/256                  string (the decimal's text)
date32/date64                   int32 (days since 1970-01-01)
timestamp (any unit, any tz)    google.protobuf.Timestamp
duration                        google.protobuf.Duration
struct                          a nested message named after the field (``address`` ->
                                ``Address``), unique in its parent
list<T>                         repeated T (a list of lists or of maps is refused)
map<K, V>                       map<K, V> (K integral or string; V not a list or map)
==============================  ==========================================================

Nullable scalar fields are ``optional`` (explicit presence, so a null stays null); messages have presence
anyway; repeated and map fields cannot be null in Protobuf (null writes as empty). Field names must be
valid Protobuf identifiers. A non-struct type or an unmappable one raises ``InvalidSchemaError`` naming the
field. Pure.
"""

from __future__ import annotations

import re

import pyarrow as pa
from google.protobuf import descriptor_pb2

from spark_kafkalog.schemas.parsed_schema import InvalidSchemaError
from spark_kafkalog.schemas.protobuf.proto_names import FDP, json_name
from spark_kafkalog.schemas.protobuf.schema import ProtobufSchema

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TIMESTAMP_IMPORT = "google/protobuf/timestamp.proto"
_DURATION_IMPORT = "google/protobuf/duration.proto"


def schema_for_arrow(
    arrow_type: pa.DataType, *, record_name: str = "topLevelRecord", namespace: str = ""
) -> ProtobufSchema:
    """The proto3 schema of ``arrow_type`` (a struct), its message ``record_name`` in package ``namespace``."""
    if not pa.types.is_struct(arrow_type):
        raise InvalidSchemaError(f"a Protobuf schema is derived from a struct type, not {arrow_type}")
    if not _IDENT.fullmatch(record_name):
        raise InvalidSchemaError(f"record name {record_name!r} is not a Protobuf identifier")
    if namespace and not all(_IDENT.fullmatch(p) for p in namespace.split(".")):
        raise InvalidSchemaError(f"namespace {namespace!r} is not a Protobuf package name")
    f = descriptor_pb2.FileDescriptorProto(syntax="proto3")
    if namespace:
        f.package = namespace
    imports: set[str] = set()
    message = f.message_type.add(name=record_name)
    prefix = f".{namespace}.{record_name}" if namespace else f".{record_name}"
    _fill_message(message, arrow_type, prefix, imports, record_name)
    f.dependency.extend(sorted(imports))
    return ProtobufSchema(f)


def _fill_message(
    m: descriptor_pb2.DescriptorProto, struct: pa.StructType, full: str, imports: set[str], path: str
) -> None:
    for number, field in enumerate(struct, start=1):
        name = field.name
        where = f"{path}.{name}"
        if not _IDENT.fullmatch(name):
            raise InvalidSchemaError(f"field {where}: {name!r} is not a Protobuf identifier")
        fd = m.field.add(name=name, number=number, json_name=json_name(name), label=FDP.LABEL_OPTIONAL)
        t = field.type
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            item = t.value_type
            if pa.types.is_list(item) or pa.types.is_large_list(item) or pa.types.is_map(item):
                raise InvalidSchemaError(f"field {where}: Protobuf has no repeated field of lists or maps ({t})")
            fd.label = FDP.LABEL_REPEATED
            _set_type(m, fd, item, full, imports, where, name)
        elif pa.types.is_map(t):
            key, value = t.key_type, t.item_type
            if not (pa.types.is_integer(key) or pa.types.is_string(key) or pa.types.is_large_string(key)):
                raise InvalidSchemaError(f"field {where}: a Protobuf map key must be integral or string, not {key}")
            if pa.types.is_list(value) or pa.types.is_large_list(value) or pa.types.is_map(value):
                raise InvalidSchemaError(f"field {where}: a Protobuf map value cannot be a list or map ({value})")
            entry = m.nested_type.add(name=_unique(m, _camel(name) + "Entry"))
            entry.options.map_entry = True
            kfd = entry.field.add(name="key", number=1, json_name="key", label=FDP.LABEL_OPTIONAL)
            _set_type(m, kfd, key, full, imports, where, name)
            vfd = entry.field.add(name="value", number=2, json_name="value", label=FDP.LABEL_OPTIONAL)
            _set_type(m, vfd, value, full, imports, where, name + "_value")
            fd.label = FDP.LABEL_REPEATED
            fd.type = FDP.TYPE_MESSAGE
            fd.type_name = f"{full}.{entry.name}"
        else:
            _set_type(m, fd, t, full, imports, where, name)
            if field.nullable and fd.type != FDP.TYPE_MESSAGE:
                fd.proto3_optional = True
    # proto3 optional fields each get a synthetic oneof, after any others (as protoc adds them)
    for fd in m.field:
        if fd.proto3_optional:
            fd.oneof_index = len(m.oneof_decl)
            m.oneof_decl.add(name="_" + fd.name)


def _set_type(
    m: descriptor_pb2.DescriptorProto,
    fd: descriptor_pb2.FieldDescriptorProto,
    t: pa.DataType,
    full: str,
    imports: set[str],
    where: str,
    hint: str,
) -> None:
    """Set ``fd``'s type to ``t``'s; a struct becomes a message nested in ``m`` named after ``hint``."""
    if pa.types.is_boolean(t):
        fd.type = FDP.TYPE_BOOL
    elif t in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()):
        fd.type = FDP.TYPE_INT32
    elif t in (pa.int64(), pa.uint32(), pa.uint64()):
        fd.type = FDP.TYPE_INT64
    elif t in (pa.float16(), pa.float32()):
        fd.type = FDP.TYPE_FLOAT
    elif t == pa.float64():
        fd.type = FDP.TYPE_DOUBLE
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_decimal(t):
        fd.type = FDP.TYPE_STRING
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        fd.type = FDP.TYPE_BYTES
    elif pa.types.is_date(t):
        fd.type = FDP.TYPE_INT32
    elif pa.types.is_timestamp(t):
        fd.type, fd.type_name = FDP.TYPE_MESSAGE, ".google.protobuf.Timestamp"
        imports.add(_TIMESTAMP_IMPORT)
    elif pa.types.is_duration(t):
        fd.type, fd.type_name = FDP.TYPE_MESSAGE, ".google.protobuf.Duration"
        imports.add(_DURATION_IMPORT)
    elif pa.types.is_struct(t):
        nested = m.nested_type.add(name=_unique(m, _camel(hint)))
        _fill_message(nested, t, f"{full}.{nested.name}", imports, where)
        fd.type, fd.type_name = FDP.TYPE_MESSAGE, f"{full}.{nested.name}"
    else:
        raise InvalidSchemaError(f"field {where}: no Protobuf type for {t}")


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "Message"


def _unique(m: descriptor_pb2.DescriptorProto, name: str) -> str:
    taken = {n.name for n in m.nested_type}
    candidate, i = name, 2
    while candidate in taken:
        candidate, i = f"{name}{i}", i + 1
    return candidate
