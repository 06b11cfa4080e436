"""Confluent's Protobuf compatibility rules (its protobuf-provider ``diff`` package), over FileDescriptorProtos.

``backward_errors(new, old)`` compares ``old`` (the original) with ``new`` (the update) and lists the
differences that are not compatible changes, each as Confluent prints a ``Difference``:
``Difference{fullPath='#/Order/3', type=FIELD_KIND_CHANGED}``. The path is ``#/`` then the message names
from the top level, a oneof's name and a field number, joined by ``/``.

Differences (compatible ones are not reported):

==================================  ===========  ================================================
type                                compatible   when
==================================  ===========  ================================================
PACKAGE_CHANGED                     no           the file's package differs
MESSAGE_ADDED / MESSAGE_MOVED       yes          a message appears / changes position
MESSAGE_REMOVED                     no           a message (not a map entry) disappears
ENUM_ADDED / ENUM_REMOVED           yes          enums and their constants may change freely
FIELD_ADDED / FIELD_REMOVED         yes          a non-required field (by number) appears/disappears
FIELD_NAME_CHANGED                  yes          same number, another name
REQUIRED_FIELD_ADDED / _REMOVED     no           a ``required`` field appears / disappears
FIELD_KIND_CHANGED                  no           scalar (enums count as scalars), map, message differ
FIELD_SCALAR_KIND_CHANGED           no           scalars outside one group: {int32, int64, uint32,
                                                 uint64, bool, enums}, {sint32, sint64},
                                                 {string, bytes}, {fixed32, sfixed32},
                                                 {fixed64, sfixed64}, {float}, {double}
FIELD_NAMED_TYPE_CHANGED            no           a message field's type has another name (package
                                                 aside), or its message changed incompatibly
ONEOF_ADDED / ONEOF_REMOVED         yes
ONEOF_FIELD_ADDED                   yes
ONEOF_FIELD_REMOVED                 no           a oneof member's number is gone from the message
MULTIPLE_FIELDS_MOVED_TO_ONEOF      no           a oneof takes more than one former plain field
FIELD_MOVED_TO_EXISTING_ONEOF       no           a plain field moves into a oneof with old members
==================================  ===========  ================================================

Types are resolved across the files' imports; a message compared once is not compared again (recursive
types terminate). Proto3 ``optional`` fields count as plain fields (their synthetic oneofs are ignored), map
fields by their key and value types. Pure.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from google.protobuf import descriptor_pb2

from spark_kafkalog.schemas.parsed_schema import SchemaReference
from spark_kafkalog.schemas.protobuf.proto_parser import FDP
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
                table.setdefault(full, _TypeInfo(fdp.package, m, reference))
                walk(m.nested_type, m.enum_type, full)
            for e in enums:  # type: ignore[attr-defined]
                full = f"{scope}.{e.name}" if scope else e.name
                table.setdefault(full, _TypeInfo(fdp.package, e, reference))

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
    _compare_types(ctx, list(o.message_type), list(o.enum_type), list(u.message_type), list(u.enum_type), o.package)
    return ctx.differences


def backward_errors(new: ProtobufSchema, old: ProtobufSchema) -> list[str]:
    """The incompatible differences from ``old`` to ``new`` as Confluent prints them (empty: compatible)."""
    found = [str(d) for d in differences(old, new) if d.type not in COMPATIBLE_CHANGES]
    return list(dict.fromkeys(found))


def _compare_types(
    ctx: _Context,
    o_messages: list[descriptor_pb2.DescriptorProto],
    o_enums: list[descriptor_pb2.EnumDescriptorProto],
    u_messages: list[descriptor_pb2.DescriptorProto],
    u_enums: list[descriptor_pb2.EnumDescriptorProto],
    scope: str,
) -> None:
    o_msgs = [m for m in o_messages if not m.options.map_entry]
    u_msgs = [m for m in u_messages if not m.options.map_entry]
    o_by_name = {m.name: (i, m) for i, m in enumerate(o_msgs)}
    u_by_name = {m.name: (i, m) for i, m in enumerate(u_msgs)}
    for name in sorted(set(o_by_name) | set(u_by_name)):
        with ctx.enter(name):
            if name not in u_by_name:
                ctx.add("MESSAGE_REMOVED")
            elif name not in o_by_name:
                ctx.add("MESSAGE_ADDED")
            else:
                oi, om = o_by_name[name]
                ui, um = u_by_name[name]
                _compare_messages(ctx, om, um, f"{scope}.{name}" if scope else name)
                if oi != ui:
                    ctx.add("MESSAGE_MOVED")
    o_enum_names = {e.name for e in o_enums}
    u_enum_names = {e.name for e in u_enums}
    for name in sorted(o_enum_names ^ u_enum_names):
        with ctx.enter(name):
            ctx.add("ENUM_REMOVED" if name in o_enum_names else "ENUM_ADDED")


def _plain_and_oneofs(
    m: descriptor_pb2.DescriptorProto,
) -> tuple[dict[int, descriptor_pb2.FieldDescriptorProto], dict[str, dict[int, descriptor_pb2.FieldDescriptorProto]]]:
    plain: dict[int, descriptor_pb2.FieldDescriptorProto] = {}
    oneofs: dict[str, dict[int, descriptor_pb2.FieldDescriptorProto]] = {}
    for f in m.field:
        if f.HasField("oneof_index") and not f.proto3_optional:
            oneofs.setdefault(m.oneof_decl[f.oneof_index].name, {})[f.number] = f
        else:
            plain[f.number] = f
    return plain, oneofs


def _compare_messages(
    ctx: _Context, original: descriptor_pb2.DescriptorProto, update: descriptor_pb2.DescriptorProto, full_name: str
) -> None:
    if full_name not in ctx.visited:
        ctx.visited.add(full_name)
        o_plain, o_oneofs = _plain_and_oneofs(original)
        u_plain, u_oneofs = _plain_and_oneofs(update)
        o_all = dict(o_plain)
        u_all = dict(u_plain)
        o_tag_oneof: dict[int, str] = {}
        u_tag_oneof: dict[int, str] = {}
        o_oneof_tags: dict[int, descriptor_pb2.FieldDescriptorProto] = {}
        for oneof_name, members in o_oneofs.items():
            for tag, f in members.items():
                o_oneof_tags[tag] = f
                o_all[tag] = f
                o_tag_oneof[tag] = oneof_name
        remaining = dict(o_plain)
        for oneof_name, members in u_oneofs.items():
            with ctx.enter(oneof_name):
                moved = existing = 0
                for tag, f in members.items():
                    u_all[tag] = f
                    u_tag_oneof[tag] = oneof_name
                    if remaining.pop(tag, None) is not None:
                        moved += 1
                    elif tag in o_oneof_tags:
                        existing += 1
                if moved > 1:
                    ctx.add("MULTIPLE_FIELDS_MOVED_TO_ONEOF")
                elif moved == 1 and existing > 0:
                    ctx.add("FIELD_MOVED_TO_EXISTING_ONEOF")
        for oneof_name in sorted(set(o_oneofs) | set(u_oneofs)):
            with ctx.enter(oneof_name):
                if oneof_name not in u_oneofs:
                    ctx.add("ONEOF_REMOVED")
                elif oneof_name not in o_oneofs:
                    ctx.add("ONEOF_ADDED")
                else:
                    o_members, u_members = o_oneofs[oneof_name], u_oneofs[oneof_name]
                    for tag in sorted(set(o_members) | set(u_members)):
                        with ctx.enter(str(tag)):
                            if tag not in u_members:
                                if tag not in u_all:
                                    ctx.add("ONEOF_FIELD_REMOVED")
                            elif tag not in o_members:
                                ctx.add("ONEOF_FIELD_ADDED")
                            else:
                                _compare_fields(ctx, o_members[tag], u_members[tag])
        for tag in sorted(set(remaining) | set(u_plain)):
            with ctx.enter(str(tag)):
                of, uf = remaining.get(tag), u_plain.get(tag)
                if uf is None:
                    assert of is not None
                    ctx.add("REQUIRED_FIELD_REMOVED" if of.label == FDP.LABEL_REQUIRED else "FIELD_REMOVED")
                elif of is None:
                    ctx.add("REQUIRED_FIELD_ADDED" if uf.label == FDP.LABEL_REQUIRED else "FIELD_ADDED")
                else:
                    _compare_fields(ctx, of, uf)
        for tag in sorted(set(o_all) & set(u_all)):
            top_level_in_both = tag not in o_tag_oneof and tag not in u_tag_oneof
            same_oneof = tag in o_tag_oneof and o_tag_oneof[tag] == u_tag_oneof.get(tag)
            if top_level_in_both or same_oneof:
                continue
            with ctx.enter(str(tag)):
                _compare_fields(ctx, o_all[tag], u_all[tag])
    _compare_types(
        ctx,
        list(original.nested_type),
        list(original.enum_type),
        list(update.nested_type),
        list(update.enum_type),
        full_name,
    )


def _compare_fields(
    ctx: _Context, original: descriptor_pb2.FieldDescriptorProto, update: descriptor_pb2.FieldDescriptorProto
) -> None:
    if original.name != update.name:
        ctx.add("FIELD_NAME_CHANGED")
    _compare_types_of(ctx, _field_type(ctx.original, original), _field_type(ctx.update, update))


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


def _compare_types_of(ctx: _Context, original: _FieldType, update: _FieldType) -> None:
    if original.kind != update.kind:
        ctx.add("FIELD_KIND_CHANGED")
    elif original.kind == "SCALAR":
        if original.scalar != update.scalar:
            ctx.add("FIELD_SCALAR_KIND_CHANGED")
    elif original.kind == "MAP":
        assert original.key and original.value and update.key and update.value
        _compare_types_of(ctx, original.key, update.key)
        _compare_types_of(ctx, original.value, update.value)
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
        return
    if not isinstance(o_info.proto, descriptor_pb2.DescriptorProto) or not isinstance(
        u_info.proto, descriptor_pb2.DescriptorProto
    ):
        return
    sub = _Context(ctx.original, ctx.update, ctx.visited)
    sub.path = o_local.split(".")
    _compare_messages(sub, o_info.proto, u_info.proto, original)
    ctx.differences.extend(sub.differences)
    if not sub.compatible():
        ctx.add("FIELD_NAMED_TYPE_CHANGED")
