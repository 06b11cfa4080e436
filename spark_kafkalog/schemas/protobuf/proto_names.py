"""The ``.proto`` language's fixed vocabulary and protoc's derived names, shared by the parser and the printer.

``SCALAR_TYPES`` maps the scalar type keywords (``int32``, ``string``...) to ``FieldDescriptorProto.Type``;
``LABELS`` the label keywords to ``FieldDescriptorProto.Label``. ``MAX_FIELD_NUMBER`` (2^29 - 1) and
``MAX_ENUM_NUMBER`` (2^31 - 1) are what ``max`` stands for in ``reserved``/``extensions`` ranges.
``json_name`` and ``map_entry_name`` derive names as protoc does; ``join_name`` builds a dotted full name
(no leading dot) from a scope and a simple name. Pure.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2

FDP = descriptor_pb2.FieldDescriptorProto

SCALAR_TYPES = {
    "double": FDP.TYPE_DOUBLE,
    "float": FDP.TYPE_FLOAT,
    "int64": FDP.TYPE_INT64,
    "uint64": FDP.TYPE_UINT64,
    "int32": FDP.TYPE_INT32,
    "fixed64": FDP.TYPE_FIXED64,
    "fixed32": FDP.TYPE_FIXED32,
    "bool": FDP.TYPE_BOOL,
    "string": FDP.TYPE_STRING,
    "bytes": FDP.TYPE_BYTES,
    "uint32": FDP.TYPE_UINT32,
    "sfixed32": FDP.TYPE_SFIXED32,
    "sfixed64": FDP.TYPE_SFIXED64,
    "sint32": FDP.TYPE_SINT32,
    "sint64": FDP.TYPE_SINT64,
}
LABELS = {"optional": FDP.LABEL_OPTIONAL, "required": FDP.LABEL_REQUIRED, "repeated": FDP.LABEL_REPEATED}
MAX_FIELD_NUMBER = 536870911
MAX_ENUM_NUMBER = 2147483647


def _camel_case(name: str, *, capitalize_first: bool) -> str:
    """``name`` with underscores removed and the letter after each one upper-cased (and the first letter when
    ``capitalize_first``), as protoc derives names."""
    out, upper = [], capitalize_first
    for c in name:
        if c == "_":
            upper = True
        elif upper:
            out.append(c.upper())
            upper = False
        else:
            out.append(c)
    return "".join(out)


def json_name(name: str) -> str:
    """protoc's default JSON name: underscores removed, the letter after each one upper-cased."""
    return _camel_case(name, capitalize_first=False)


def map_entry_name(field_name: str) -> str:
    """The name of a map field's entry message: the field's name in CamelCase plus ``Entry`` (``my_map`` ->
    ``MyMapEntry``)."""
    return _camel_case(field_name, capitalize_first=True) + "Entry"


def join_name(scope: str, name: str) -> str:
    """``scope.name``, or ``name`` in the root scope (``scope`` empty)."""
    return f"{scope}.{name}" if scope else name
