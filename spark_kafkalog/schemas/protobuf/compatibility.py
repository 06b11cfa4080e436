"""Confluent's Protobuf compatibility rules (its protobuf-provider ``diff`` package), over FileDescriptorProtos.

``backward_errors(new, old)`` compares ``old`` (the original) with ``new`` (the update) and lists the
differences that are not compatible changes, each as Confluent prints a ``Difference``:
``Difference{fullPath='#/Order/3', type=FIELD_KIND_CHANGED}``. The path is ``#/`` then the message names
from the top level, a oneof's name and a field number, joined by ``/``.

Differences (only the incompatible ones are reported; ``differences`` lists all of them, and agrees with
the 54 data-driven cases of Confluent's ``diff-schema-examples.json``):

==================================  ===========  ================================================
type                                compatible   when
==================================  ===========  ================================================
PACKAGE_CHANGED                     no           the file's package differs
MESSAGE_ADDED / MESSAGE_MOVED       yes          a message appears / changes position
MESSAGE_REMOVED                     no           a message (not a map entry) disappears
ENUM_ADDED / ENUM_REMOVED           yes          and ENUM_CONST_ADDED / _REMOVED / _CHANGED
FIELD_ADDED / FIELD_REMOVED         yes          a non-required field (by number) appears/disappears
FIELD_NAME_CHANGED                  yes          same number, another name
REQUIRED_FIELD_ADDED / _REMOVED     no           a ``required`` field appears / disappears
FIELD_KIND_CHANGED                  no           scalar (enums count as scalars), map, message differ
FIELD_SCALAR_KIND_CHANGED           no           scalars outside one group: {int32, int64, uint32,
                                                 uint64, bool, enums}, {sint32, sint64},
                                                 {string, bytes}, {fixed32, sfixed32},
                                                 {fixed64, sfixed64}, {float}, {double}
FIELD_NUMERIC_LABEL_CHANGED         no           a number's written label changes (``optional`` to
                                                 ``repeated``...; proto3 plain fields and oneof
                                                 members have none)
FIELD_STRING_OR_BYTES_LABEL_CHANGED yes          the same for string/bytes
FIELD_NAMED_TYPE_CHANGED            no           a message field's type has another name (package
                                                 aside), or its message changed incompatibly
ONEOF_ADDED / ONEOF_REMOVED         yes          (a oneof removed with all its members is fine)
ONEOF_FIELD_ADDED                   yes
ONEOF_FIELD_MOVED_TO_TOP_LEVEL      yes          a member becomes a plain field
ONEOF_FIELD_REMOVED                 no           a member's number is gone from the message
MULTIPLE_FIELDS_MOVED_TO_ONEOF      no           a oneof joins several former plain fields (with
                                                 other groups)
FIELD_MOVED_TO_EXISTING_ONEOF       no           a oneof joins fields from several former groups
                                                 (one plain field or several oneofs)
==================================  ===========  ================================================

Field differences are reported at the field's place in the update (``#/M/<oneof>/<number>`` for oneof
members). Types are resolved across the files' imports; a message compared once is not compared again (recursive
types terminate). Proto3 ``optional`` fields count as plain fields (their synthetic oneofs are ignored), map
fields by their key and value types. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from google.protobuf import descriptor_pb2

from spark_kafkalog.schemas.parsed_schema import SchemaReference
from spark_kafkalog.schemas.protobuf.proto_names import FDP
from spark_kafkalog.schemas.protobuf.well_known import WELL_KNOWN


class ProtobufSchema(Protocol):
    """What the rules read of a ``schema.ProtobufSchema`` (named here so this module does not import it)."""

    @property
    def file_descriptor_proto(self) -> descriptor_pb2.FileDescriptorProto: ...

    @property
    def dependencies(self) -> Mapping[str, ProtobufSchema]: ...

    @property
    def references(self) -> tuple[SchemaReference, ...]: ...


COMPATIBLE_CHANGES = frozenset(
    {
        "MESSAGE_ADDED",
        "MESSAGE_MOVED",
        "ENUM_ADDED",
        "ENUM_REMOVED",
        "ENUM_CONST_ADDED",
        "ENUM_CONST_CHANGED",
        "ENUM_CONST_REMOVED",
        "FIELD_ADDED",
        "FIELD_REMOVED",
        "FIELD_NAME_CHANGED",
        "FIELD_STRING_OR_BYTES_LABEL_CHANGED",
        "ONEOF_ADDED",
        "ONEOF_REMOVED",
        "ONEOF_FIELD_ADDED",
        "ONEOF_FIELD_MOVED_TO_TOP_LEVEL",
    }
)

_SCALAR_KIND = {
    FDP.TYPE_INT32: "GENERAL_NUMBER",
    FDP.TYPE_INT64: "GENERAL_NUMBER",
    FDP.TYPE_UINT32: "GENERAL_NUMBER",
    FDP.TYPE_UINT64: "GENERAL_NUMBER",
    FDP.TYPE_BOOL: "GENERAL_NUMBER",
    FDP.TYPE_ENUM: "GENERAL_NUMBER",
    FDP.TYPE_SINT32: "SIGNED_NUMBER",
    FDP.TYPE_SINT64: "SIGNED_NUMBER",
    FDP.TYPE_STRING: "STRING_OR_BYTES",
    FDP.TYPE_BYTES: "STRING_OR_BYTES",
    FDP.TYPE_FIXED32: "FIXED32",
    FDP.TYPE_SFIXED32: "FIXED32",
    FDP.TYPE_FIXED64: "FIXED64",
    FDP.TYPE_SFIXED64: "FIXED64",
    FDP.TYPE_FLOAT: "FLOAT",
    FDP.TYPE_DOUBLE: "DOUBLE",
}


@dataclass(frozen=True)
class Difference:
    """One difference between two schemas (Confluent's ``Difference``)."""

    type: str
    full_path: str

    def __str__(self) -> str:
        return f"Difference{{fullPath='{self.full_path}', type={self.type}}}"


@dataclass(frozen=True)
class _TypeInfo:
    package: str
    proto: descriptor_pb2.DescriptorProto | descriptor_pb2.EnumDescriptorProto
    reference: SchemaReference | None
    proto3: bool

    @property
    def is_map(self) -> bool:
        return isinstance(self.proto, descriptor_pb2.DescriptorProto) and self.proto.options.map_entry


def _type_table(schema: ProtobufSchema) -> dict[str, _TypeInfo]:
    table: dict[str, _TypeInfo] = {}
    refs = {r.name: r for r in schema.references}

    def add_file(fdp: descriptor_pb2.FileDescriptorProto, reference: SchemaReference | None) -> None:
        def walk(messages: object, enums: object, scope: str) -> None:
            for m in messages:  # type: ignore[attr-defined]
                full = f"{scope}.{m.name}" if scope else m.name
                table.setdefault(full, _TypeInfo(fdp.package, m, reference, proto3))
                walk(m.nested_type, m.enum_type, full)
            for e in enums:  # type: ignore[attr-defined]
                full = f"{scope}.{e.name}" if scope else e.name
                table.setdefault(full, _TypeInfo(fdp.package, e, reference, proto3))

        proto3 = fdp.syntax == "proto3"

        walk(fdp.message_type, fdp.enum_type, fdp.package)

    add_file(schema.file_descriptor_proto, None)
    seen: set[str] = set()

    def add_deps(s: ProtobufSchema, references: dict[str, SchemaReference]) -> None:
        for name in s.file_descriptor_proto.dependency:
            if name in seen:
                continue
            seen.add(name)
            deps = s.dependencies
            if name in deps:
                add_file(deps[name].file_descriptor_proto, references.get(name))
                add_deps(deps[name], {r.name: r for r in deps[name].references})
            elif name in WELL_KNOWN:
                add_file(WELL_KNOWN[name], None)

    add_deps(schema, refs)
    return table


class _Context:
    def __init__(self, original: dict[str, _TypeInfo], update: dict[str, _TypeInfo], visited: set[str]) -> None:
        self.original = original
        self.update = update
        self.path: list[str] = []
        self.differences: list[Difference] = []
        self.visited = visited

    def add(self, kind: str) -> None:
        self.differences.append(Difference(kind, "#/" + "/".join(self.path)))

    @contextmanager
    def enter(self, part: str) -> Iterator[None]:
        self.path.append(part)
        try:
            yield
        finally:
            self.path.pop()

    def compatible(self) -> bool:
        return all(d.type in COMPATIBLE_CHANGES for d in self.differences)


def differences(original: ProtobufSchema, update: ProtobufSchema) -> list[Difference]:
    """Every difference (compatible or not) from ``original`` to ``update``."""
    ctx = _Context(_type_table(original), _type_table(update), set())
    o, u = original.file_descriptor_proto, update.file_descriptor_proto
    if o.package != u.package:
        ctx.add("PACKAGE_CHANGED")
    _compare_types(ctx, o.message_type, o.enum_type, u.message_type, u.enum_type, o.package, u.package)
    return ctx.differences


def backward_errors(new: ProtobufSchema, old: ProtobufSchema) -> list[str]:
    """The incompatible differences from ``old`` to ``new`` as Confluent prints them (empty: compatible)."""
    found = [str(d) for d in differences(old, new) if d.type not in COMPATIBLE_CHANGES]
    return list(dict.fromkeys(found))


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def _compare_types(
    ctx: _Context,
    o_messages: Iterable[descriptor_pb2.DescriptorProto],
    o_enums: Iterable[descriptor_pb2.EnumDescriptorProto],
    u_messages: Iterable[descriptor_pb2.DescriptorProto],
    u_enums: Iterable[descriptor_pb2.EnumDescriptorProto],
    o_scope: str,
    u_scope: str,
) -> None:
    o_by_name = {m.name: (i, m) for i, m in enumerate(m for m in o_messages if not m.options.map_entry)}
    u_by_name = {m.name: (i, m) for i, m in enumerate(m for m in u_messages if not m.options.map_entry)}
    for name in sorted(set(o_by_name) | set(u_by_name)):
        with ctx.enter(name):
            if name not in u_by_name:
                ctx.add("MESSAGE_REMOVED")
            elif name not in o_by_name:
                ctx.add("MESSAGE_ADDED")
            else:
                oi, om = o_by_name[name]
                ui, um = u_by_name[name]
                _compare_messages(ctx, om, um, _join(o_scope, name), _join(u_scope, name))
                if oi != ui:
                    # messages are addressed by indexes into the schema of the writer's id: moving is fine
                    ctx.add("MESSAGE_MOVED")
    o_enum_by_name = {e.name: e for e in o_enums}
    u_enum_by_name = {e.name: e for e in u_enums}
    for name in sorted(set(o_enum_by_name) | set(u_enum_by_name)):
        with ctx.enter(name):
            if name not in u_enum_by_name:
                ctx.add("ENUM_REMOVED")
            elif name not in o_enum_by_name:
                ctx.add("ENUM_ADDED")
            else:
                _compare_enums(ctx, o_enum_by_name[name], u_enum_by_name[name])


def _compare_enums(
    ctx: _Context, original: descriptor_pb2.EnumDescriptorProto, update: descriptor_pb2.EnumDescriptorProto
) -> None:
    o_by_number = {v.number: v.name for v in original.value}
    u_by_number = {v.number: v.name for v in update.value}
    for number in sorted(set(o_by_number) | set(u_by_number)):
        with ctx.enter(str(number)):
            if number not in u_by_number:
                ctx.add("ENUM_CONST_REMOVED")
            elif number not in o_by_number:
                ctx.add("ENUM_CONST_ADDED")
            elif o_by_number[number] != u_by_number[number]:
                ctx.add("ENUM_CONST_CHANGED")


@dataclass(frozen=True)
class _Field:
    """A field as Confluent's rules see it: its oneof (None: a plain field) and its label as the ``.proto``
    text states it (None when the text has none: proto3 fields without ``optional``, oneof members)."""

    proto: descriptor_pb2.FieldDescriptorProto
    oneof: str | None
    label: str | None


def _fields(m: descriptor_pb2.DescriptorProto, proto3: bool) -> dict[int, _Field]:
    out = {}
    for f in m.field:
        oneof = m.oneof_decl[f.oneof_index].name if f.HasField("oneof_index") and not f.proto3_optional else None
        if oneof is not None:
            label: str | None = None  # oneof members are written without a label
        elif proto3 and f.label == FDP.LABEL_OPTIONAL and not f.proto3_optional:
            label = None
        else:
            label = {FDP.LABEL_OPTIONAL: "OPTIONAL", FDP.LABEL_REQUIRED: "REQUIRED", FDP.LABEL_REPEATED: "REPEATED"}[
                f.label
            ]
        out[f.number] = _Field(f, oneof, label)
    return out


def _compare_messages(
    ctx: _Context,
    original: descriptor_pb2.DescriptorProto,
    update: descriptor_pb2.DescriptorProto,
    o_full: str,
    u_full: str,
) -> None:
    if o_full not in ctx.visited:
        ctx.visited.add(o_full)
        o_info, u_info = ctx.original.get(o_full), ctx.update.get(u_full)
        o_fields = _fields(original, o_info.proto3 if o_info else True)
        u_fields = _fields(update, u_info.proto3 if u_info else True)
        o_oneofs = {f.oneof for f in o_fields.values() if f.oneof is not None}
        u_oneofs = {f.oneof for f in u_fields.values() if f.oneof is not None}
        # a oneof gone by name with none of its members left anywhere is a complete (compatible) deletion
        deleted_oneofs = {
            name
            for name in o_oneofs - u_oneofs
            if not any(f.oneof == name and tag in u_fields for tag, f in o_fields.items())
        }
        # new mutual exclusivity: an update oneof whose earlier members come from several original groups
        for oneof in sorted(u_oneofs):
            with ctx.enter(oneof):
                groups: set[str] = set()
                moved_in = 0
                for tag, f in u_fields.items():
                    if f.oneof != oneof or tag not in o_fields:
                        continue
                    before = o_fields[tag].oneof
                    if before is not None:
                        groups.add("oneof:" + before)
                    else:
                        groups.add(f"field:{tag}")
                        moved_in += 1
                if len(groups) > 1:
                    ctx.add("MULTIPLE_FIELDS_MOVED_TO_ONEOF" if moved_in > 1 else "FIELD_MOVED_TO_EXISTING_ONEOF")
        for oneof in sorted(o_oneofs | u_oneofs):
            with ctx.enter(oneof):
                if oneof not in u_oneofs:
                    ctx.add("ONEOF_REMOVED")
                elif oneof not in o_oneofs:
                    ctx.add("ONEOF_ADDED")
        for tag in sorted(set(o_fields) | set(u_fields)):
            of, uf = o_fields.get(tag), u_fields.get(tag)
            if uf is None:
                assert of is not None
                if of.oneof is not None:
                    if of.oneof not in deleted_oneofs:
                        with ctx.enter(of.oneof), ctx.enter(str(tag)):
                            ctx.add("ONEOF_FIELD_REMOVED")
                else:
                    with ctx.enter(str(tag)):
                        ctx.add("REQUIRED_FIELD_REMOVED" if of.label == "REQUIRED" else "FIELD_REMOVED")
            elif of is None:
                if uf.oneof is not None:
                    with ctx.enter(uf.oneof), ctx.enter(str(tag)):
                        ctx.add("ONEOF_FIELD_ADDED")
                else:
                    with ctx.enter(str(tag)):
                        ctx.add("REQUIRED_FIELD_ADDED" if uf.label == "REQUIRED" else "FIELD_ADDED")
            else:
                if of.oneof is not None and uf.oneof is None:
                    with ctx.enter(str(tag)):
                        ctx.add("ONEOF_FIELD_MOVED_TO_TOP_LEVEL")
                if uf.oneof is not None:
                    with ctx.enter(uf.oneof), ctx.enter(str(tag)):
                        _compare_fields(ctx, of, uf)
                else:
                    with ctx.enter(str(tag)):
                        _compare_fields(ctx, of, uf)
    _compare_types(ctx, original.nested_type, original.enum_type, update.nested_type, update.enum_type, o_full, u_full)


def _compare_fields(ctx: _Context, original: _Field, update: _Field) -> None:
    if original.proto.name != update.proto.name:
        ctx.add("FIELD_NAME_CHANGED")
    _compare_types_of(
        ctx,
        _field_type(ctx.original, original.proto),
        _field_type(ctx.update, update.proto),
        original.label,
        update.label,
    )


@dataclass(frozen=True)
class _FieldType:
    kind: str  # SCALAR, MAP, MESSAGE
    scalar: str = ""
    message: str = ""  # the message's full name
    key: _FieldType | None = None
    value: _FieldType | None = None


def _field_type(table: dict[str, _TypeInfo], f: descriptor_pb2.FieldDescriptorProto) -> _FieldType:
    if f.type in (FDP.TYPE_MESSAGE, FDP.TYPE_GROUP):
        name = f.type_name.lstrip(".")
        info = table.get(name)
        if info is not None and info.is_map:
            entry = info.proto
            assert isinstance(entry, descriptor_pb2.DescriptorProto)
            return _FieldType("MAP", key=_field_type(table, entry.field[0]), value=_field_type(table, entry.field[1]))
        return _FieldType("MESSAGE", message=name)
    if f.type == FDP.TYPE_ENUM:
        return _FieldType("SCALAR", scalar="GENERAL_NUMBER")
    return _FieldType("SCALAR", scalar=_SCALAR_KIND[f.type])


def _compare_types_of(
    ctx: _Context, original: _FieldType, update: _FieldType, o_label: str | None, u_label: str | None
) -> None:
    if original.kind != update.kind:
        ctx.add("FIELD_KIND_CHANGED")
    elif original.kind == "SCALAR":
        if original.scalar != update.scalar:
            ctx.add("FIELD_SCALAR_KIND_CHANGED")
        elif o_label is not None and u_label is not None and o_label != u_label:
            string = original.scalar == "STRING_OR_BYTES"
            ctx.add("FIELD_STRING_OR_BYTES_LABEL_CHANGED" if string else "FIELD_NUMERIC_LABEL_CHANGED")
    elif original.kind == "MAP":
        assert original.key and original.value and update.key and update.value
        _compare_types_of(ctx, original.key, update.key, None, None)
        _compare_types_of(ctx, original.value, update.value, None, None)
    else:
        _compare_message_types(ctx, original.message, update.message)


def _compare_message_types(ctx: _Context, original: str, update: str) -> None:
    o_info, u_info = ctx.original.get(original), ctx.update.get(update)
    if o_info is None or u_info is None:
        if original != update:
            ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    o_local = (
        original[len(o_info.package) + 1 :]
        if o_info.package and original.startswith(o_info.package + ".")
        else original
    )
    u_local = (
        update[len(u_info.package) + 1 :] if u_info.package and update.startswith(u_info.package + ".") else update
    )
    if o_local != u_local:
        ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    o_ref, u_ref = o_info.reference, u_info.reference
    if o_ref is not None and u_ref is not None and (o_ref.subject, o_ref.version) == (u_ref.subject, u_ref.version):
        return  # the same registered file on both sides
    if not isinstance(o_info.proto, descriptor_pb2.DescriptorProto) or not isinstance(
        u_info.proto, descriptor_pb2.DescriptorProto
    ):
        return
    sub = _Context(ctx.original, ctx.update, ctx.visited)
    sub.path = o_local.split(".")
    _compare_messages(sub, o_info.proto, u_info.proto, original, update)
    ctx.differences.extend(sub.differences)
    if not sub.compatible():
        ctx.add("FIELD_NAMED_TYPE_CHANGED")
