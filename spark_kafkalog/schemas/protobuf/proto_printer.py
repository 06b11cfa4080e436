"""Prints a ``FileDescriptorProto`` as ``.proto`` text; ``parse_proto(print_proto(f), f.name, deps) == f``.

Layout (the registry's canonical form of a Protobuf schema)::

    syntax = "proto3";            (proto2 files print "proto2")
    package a.b;

    import "other.proto";         (public / weak kept)

    option java_package = "x";    (file options, set fields in field-number order, then custom options)

    message M {                   (two-space indentation; members in descriptor order: options, fields
      ...                          with oneofs printed where their first field is, nested messages,
    }                              enums, extensions, reserved)

Type names are printed fully qualified with the leading dot (``.google.protobuf.Timestamp``), so the text
resolves the same wherever it is read. Map entry messages print as ``map<K, V>`` fields, groups as ``group``
fields, proto3 optional fields as ``optional`` (their synthetic oneofs are implied), a ``json_name`` only when
it differs from protoc's default. Uninterpreted (custom) options print as written. Pure.
"""

from __future__ import annotations

import math
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.message import Message

from spark_kafkalog.schemas.protobuf.proto_lexer import c_escape
from spark_kafkalog.schemas.protobuf.proto_names import FDP, MAX_ENUM_NUMBER, MAX_FIELD_NUMBER, SCALAR_TYPES, json_name

_SCALAR_NAMES = {v: k for k, v in SCALAR_TYPES.items()}
_LABEL_NAMES = {FDP.LABEL_OPTIONAL: "optional", FDP.LABEL_REQUIRED: "required", FDP.LABEL_REPEATED: "repeated"}


def print_proto(f: descriptor_pb2.FileDescriptorProto) -> str:
    """The ``.proto`` text of ``f`` (see the module's docstring for the layout)."""
    p = _Printer(f.syntax or "proto2")
    p.line(f'syntax = "{p.syntax}";')
    if f.package:
        p.line(f"package {f.package};")
    if f.dependency:
        p.blank()
        for i, dep in enumerate(f.dependency):
            kind = "public " if i in f.public_dependency else "weak " if i in f.weak_dependency else ""
            p.line(f"import {kind}{_quote(dep.encode())};")
    if _has_options(f):
        p.blank()
        p.option_statements(f.options)
    for m in f.message_type:
        p.blank()
        p.message(m)
    for e in f.enum_type:
        p.blank()
        p.enum(e)
    for s in f.service:
        p.blank()
        p.service(s)
    p.extensions(f.extension, [])
    return "\n".join(p.lines) + "\n"


def _has_options(holder: Message) -> bool:
    return holder.HasField("options")


def _quote(data: bytes) -> str:
    """A double-quoted string literal of ``data`` (single quotes left as they are)."""
    return '"' + c_escape(data, escape_single_quote=False) + '"'


def _option_value(fd: Any, value: Any) -> str:
    if fd.type == FDP.TYPE_BOOL:
        return "true" if value else "false"
    if fd.type == FDP.TYPE_ENUM:
        return str(fd.enum_type.values_by_number[value].name)
    if fd.type == FDP.TYPE_STRING:
        return _quote(value.encode())
    if fd.type == FDP.TYPE_BYTES:
        return _quote(value)
    if fd.type in (FDP.TYPE_FLOAT, FDP.TYPE_DOUBLE):
        return _float(value)
    return str(value)


def _float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(float(value))
    return text


def _uninterpreted(uo: descriptor_pb2.UninterpretedOption) -> str:
    parts = []
    for part in uo.name:
        parts.append(f"({part.name_part})" if part.is_extension else part.name_part)
    name = ".".join(parts)
    if uo.HasField("identifier_value"):
        value = uo.identifier_value
    elif uo.HasField("positive_int_value"):
        value = str(uo.positive_int_value)
    elif uo.HasField("negative_int_value"):
        value = str(uo.negative_int_value)
    elif uo.HasField("double_value"):
        value = _float(uo.double_value)
    elif uo.HasField("string_value"):
        value = _quote(uo.string_value)
    else:
        value = "{ " + uo.aggregate_value + " }" if uo.aggregate_value else "{ }"
    return f"{name} = {value}"


def _option_items(options: Message, skip: tuple[str, ...] = ()) -> list[str]:
    items = []
    for fd, value in sorted(options.ListFields(), key=lambda item: item[0].number):
        if fd.name in skip or fd.name == "uninterpreted_option":
            continue
        if fd.type == FDP.TYPE_MESSAGE or fd.is_repeated:
            # message-valued options (features, edition defaults): print as an aggregate
            from google.protobuf import text_format

            values = value if fd.is_repeated else [value]
            for v in values:
                if fd.type == FDP.TYPE_MESSAGE:
                    body = text_format.MessageToString(v, as_one_line=True).strip()
                    items.append(f"{fd.name} = {{ {body} }}" if body else f"{fd.name} = {{ }}")
                else:
                    items.append(f"{fd.name} = {_option_value(fd, v)}")
            continue
        items.append(f"{fd.name} = {_option_value(fd, value)}")
    for uo in options.uninterpreted_option:
        items.append(_uninterpreted(uo))
    return items


class _Printer:
    def __init__(self, syntax: str) -> None:
        self.syntax = syntax
        self.lines: list[str] = []
        self.depth = 0

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def blank(self) -> None:
        if self.lines and self.lines[-1] != "" and not self.lines[-1].endswith("{"):
            self.lines.append("")

    def option_statements(self, options: Message, skip: tuple[str, ...] = ()) -> None:
        for item in _option_items(options, skip):
            self.line(f"option {item};")

    def message(self, m: descriptor_pb2.DescriptorProto) -> None:
        self.line(f"message {m.name} {{")
        self.depth += 1
        self.message_members(m)
        self.depth -= 1
        self.line("}")

    def message_members(self, m: descriptor_pb2.DescriptorProto) -> None:
        if _has_options(m):
            self.option_statements(m.options)
        entries = {n.name: n for n in m.nested_type if n.options.map_entry}
        groups = {f.type_name.rsplit(".", 1)[-1] for f in m.field if f.type == FDP.TYPE_GROUP}
        printed_oneofs: set[int] = set()
        # a map or group field adds its nested message where the field stands: print the nested messages
        # declared before it first, so the text parses back to the same nested_type order (message
        # indexes count positions in it)
        nested_index = {n.name: i for i, n in enumerate(m.nested_type)}
        printed_nested: set[int] = set()

        def nested_up_to(type_name: str) -> None:
            index = nested_index.get(type_name.rsplit(".", 1)[-1])
            if index is None:
                return
            printed_nested.add(index)
            for i in range(index):
                n = m.nested_type[i]
                if i not in printed_nested and n.name not in entries and n.name not in groups:
                    printed_nested.add(i)
                    self.message(n)

        for f in m.field:
            if f.HasField("oneof_index") and not f.proto3_optional:
                if f.oneof_index in printed_oneofs:
                    continue
                printed_oneofs.add(f.oneof_index)
                oneof = m.oneof_decl[f.oneof_index]
                self.line(f"oneof {oneof.name} {{")
                self.depth += 1
                if _has_options(oneof):
                    self.option_statements(oneof.options)
                for member in m.field:
                    if member.HasField("oneof_index") and member.oneof_index == f.oneof_index:
                        self.field(member, m, entries, in_oneof=True)
                self.depth -= 1
                self.line("}")
            else:
                if (
                    f.type in (FDP.TYPE_MESSAGE, FDP.TYPE_GROUP)
                    and f.label == FDP.LABEL_REPEATED
                    or f.type == FDP.TYPE_GROUP
                ):
                    name = f.type_name.rsplit(".", 1)[-1]
                    if name in entries or name in groups:
                        nested_up_to(f.type_name)
                self.field(f, m, entries, in_oneof=False)
        for i, n in enumerate(m.nested_type):
            if i in printed_nested or n.name in entries or n.name in groups:
                continue
            self.message(n)
        for e in m.enum_type:
            self.enum(e)
        # oneofs declared without fields
        for i, oneof in enumerate(m.oneof_decl):
            if i not in printed_oneofs and not any(f.HasField("oneof_index") and f.oneof_index == i for f in m.field):
                self.line(f"oneof {oneof.name} {{")
                self.line("}")
        self.extensions(m.extension, m.nested_type)
        for r in m.extension_range:
            end = "max" if r.end - 1 == MAX_FIELD_NUMBER else str(r.end - 1)
            text = str(r.start) if r.end - 1 == r.start else f"{r.start} to {end}"
            items = _option_items(r.options) if r.HasField("options") else []
            suffix = f" [{', '.join(items)}]" if items else ""
            self.line(f"extensions {text}{suffix};")
        self.reserved(m.reserved_range, m.reserved_name, MAX_FIELD_NUMBER, exclusive=True)

    def reserved(self, ranges: Any, names: Any, max_value: int, *, exclusive: bool) -> None:
        if ranges:
            texts = []
            for r in ranges:
                end = r.end - 1 if exclusive else r.end
                texts.append(str(r.start) if end == r.start else f"{r.start} to {'max' if end == max_value else end}")
            self.line(f"reserved {', '.join(texts)};")
        if names:
            self.line(f"reserved {', '.join(_quote(n.encode()) for n in names)};")

    def type_of(self, f: descriptor_pb2.FieldDescriptorProto) -> str:
        if f.type in _SCALAR_NAMES and not f.type_name:
            return _SCALAR_NAMES[f.type]
        return f.type_name

    def field(
        self,
        f: descriptor_pb2.FieldDescriptorProto,
        m: descriptor_pb2.DescriptorProto,
        entries: dict[str, descriptor_pb2.DescriptorProto],
        *,
        in_oneof: bool,
        extension: bool = False,
    ) -> None:
        items = []
        if f.HasField("default_value"):
            items.append(f"default = {self.default(f)}")
        if f.HasField("json_name") and f.json_name != json_name(f.name):
            items.append(f"json_name = {_quote(f.json_name.encode())}")
        if f.HasField("options"):
            items.extend(_option_items(f.options))
        suffix = f" [{', '.join(items)}]" if items else ""
        entry_name = f.type_name.rsplit(".", 1)[-1]
        if (
            f.label == FDP.LABEL_REPEATED
            and f.type == FDP.TYPE_MESSAGE
            and entry_name in entries
            and f.type_name.endswith("." + entry_name)
            and not extension
        ):
            entry = entries[entry_name]
            key, value = entry.field[0], entry.field[1]
            self.line(f"map<{self.type_of(key)}, {self.type_of(value)}> {f.name} = {f.number}{suffix};")
            return
        label = ""
        if not in_oneof:
            if self.syntax == "proto2" or f.label != FDP.LABEL_OPTIONAL or f.proto3_optional:
                label = _LABEL_NAMES[f.label] + " "
        if f.type == FDP.TYPE_GROUP:
            group_name = f.type_name.rsplit(".", 1)[-1]
            nested = next((n for n in m.nested_type if n.name == group_name), None)
            self.line(f"{label}group {group_name} = {f.number}{suffix} {{")
            self.depth += 1
            if nested is not None:
                self.message_members(nested)
            self.depth -= 1
            self.line("}")
            return
        self.line(f"{label}{self.type_of(f)} {f.name} = {f.number}{suffix};")

    def default(self, f: descriptor_pb2.FieldDescriptorProto) -> str:
        value = f.default_value
        if f.type == FDP.TYPE_STRING:
            return _quote(value.encode())
        if f.type == FDP.TYPE_BYTES:
            return '"' + value + '"'  # already C-escaped, as protoc stores it
        return value

    def extensions(self, fields: Any, nested: Any) -> None:
        by_extendee: dict[str, list[descriptor_pb2.FieldDescriptorProto]] = {}
        for f in fields:
            by_extendee.setdefault(f.extendee, []).append(f)
        holder = descriptor_pb2.DescriptorProto()
        holder.nested_type.extend(nested)
        for extendee, members in by_extendee.items():
            self.line(f"extend {extendee} {{")
            self.depth += 1
            for f in members:
                self.field(f, holder, {}, in_oneof=False, extension=True)
            self.depth -= 1
            self.line("}")

    def enum(self, e: descriptor_pb2.EnumDescriptorProto) -> None:
        self.line(f"enum {e.name} {{")
        self.depth += 1
        if _has_options(e):
            self.option_statements(e.options)
        for v in e.value:
            items = _option_items(v.options) if v.HasField("options") else []
            suffix = f" [{', '.join(items)}]" if items else ""
            self.line(f"{v.name} = {v.number}{suffix};")
        self.reserved(e.reserved_range, e.reserved_name, MAX_ENUM_NUMBER, exclusive=False)
        self.depth -= 1
        self.line("}")

    def service(self, s: descriptor_pb2.ServiceDescriptorProto) -> None:
        self.line(f"service {s.name} {{")
        self.depth += 1
        if _has_options(s):
            self.option_statements(s.options)
        for method in s.method:
            cs = "stream " if method.client_streaming else ""
            ss = "stream " if method.server_streaming else ""
            head = f"rpc {method.name}({cs}{method.input_type}) returns ({ss}{method.output_type})"
            if method.HasField("options"):
                self.line(head + " {")
                self.depth += 1
                self.option_statements(method.options)
                self.depth -= 1
                self.line("}")
            else:
                self.line(head + ";")
        self.depth -= 1
        self.line("}")
