"""A ``.proto`` text parser producing the ``FileDescriptorProto`` protoc would produce for the constructs covered.

Covered (proto2 and proto3; editions are refused): ``syntax``, ``package``, ``import`` (``public``/``weak``),
options at every level, messages (nested), fields with labels (proto3 ``optional`` gets a synthetic oneof
``_<name>`` appended after the real oneofs, as protoc does), ``map<K, V>`` fields (a nested ``<Name>Entry``
message with ``map_entry = true`` added where the field appears), groups, oneofs, enums (nested,
``allow_alias``), ``reserved`` ranges and names, ``extensions`` ranges, ``extend`` blocks, services and rpcs
(streaming). Comments are skipped. Like protoc's output (``FileDescriptor::CopyTo``): type names are resolved
to fully-qualified ``.pkg.Msg`` names by C++-like scoping over this file and its dependencies, the field's
type becomes ``TYPE_MESSAGE``/``TYPE_ENUM``, every field gets its ``json_name``, a proto2 file has no
``syntax`` field, ``reserved``/``extensions`` ends are exclusive (enum reserved ends inclusive).

This module is the grammar of declarations; the parts it builds on, each its own module:
``proto_lexer`` (tokens with line and column, the token cursor, ``ProtoSyntaxError``), ``proto_options``
(option statements and ``[...]`` lists: simple names set on the options message, custom options and
aggregates kept as ``uninterpreted_option``, ``default`` and ``json_name`` set on the field),
``proto_resolution`` (type references to fully-qualified names) and ``proto_names`` (scalar types, labels,
number limits, ``json_name`` and map entry names).

``parse_proto(text, name, dependencies)``: ``dependencies`` maps import paths to their FileDescriptorProtos
(used only to resolve type names). Errors raise ``ProtoSyntaxError`` naming line and column. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from google.protobuf import descriptor_pb2

from spark_kafkalog.schemas.protobuf.proto_lexer import ProtoSyntaxError, Token, TokenCursor
from spark_kafkalog.schemas.protobuf.proto_names import (
    FDP,
    LABELS,
    MAX_ENUM_NUMBER,
    MAX_FIELD_NUMBER,
    SCALAR_TYPES,
    join_name,
    json_name,
    map_entry_name,
)
from spark_kafkalog.schemas.protobuf.proto_options import read_bracket_options, read_option_statement
from spark_kafkalog.schemas.protobuf.proto_resolution import (
    EXTENDEE,
    PendingField,
    PendingMethod,
    resolve_references,
)

__all__ = [  # with the proto_names constants and json_name this module exported before they moved there
    "FDP",
    "LABELS",
    "MAX_ENUM_NUMBER",
    "MAX_FIELD_NUMBER",
    "SCALAR_TYPES",
    "ProtoSyntaxError",
    "json_name",
    "parse_proto",
]


def parse_proto(
    text: str, name: str = "", dependencies: Mapping[str, descriptor_pb2.FileDescriptorProto] | None = None
) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto of ``text`` (``name``: its import path, e.g. ``"orders.proto"``).

    ``dependencies`` maps import paths to already parsed files whose types ``text`` may use; an import
    missing from it is kept (as protoc keeps the name) but its types do not resolve."""
    parser = _Parser(text)
    f = parser.parse_file(name)
    resolve_references(f, parser.pending, parser.pending_methods, dependencies or {})
    return f


class _Parser(TokenCursor):
    """The grammar: one method per declaration, building the descriptors; type references are recorded in
    ``pending``/``pending_methods`` and resolved once every type is known."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.syntax = "proto2"
        self.pending: list[PendingField] = []
        self.pending_methods: list[PendingMethod] = []

    # -- file
    def parse_file(self, name: str) -> descriptor_pb2.FileDescriptorProto:
        f = descriptor_pb2.FileDescriptorProto()
        if name:
            f.name = name
        if self.at("syntax") or self.at("edition"):
            keyword = self.next()
            if keyword.text == "edition":
                raise self.error("editions are not supported", keyword)
            self.expect("=")
            syntax_tok = self.tok
            self.syntax = self.string().decode()
            if self.syntax not in ("proto2", "proto3"):
                raise self.error(f"unknown syntax {self.syntax!r}", syntax_tok)
            self.end_statement()
        if self.syntax == "proto3":
            f.syntax = "proto3"
        while self.tok.kind != "eof":
            if self.accept(";"):
                continue
            if self.accept("package"):
                if f.HasField("package"):
                    raise self.error("a second package statement")
                f.package = self.full_ident()
                self.end_statement()
            elif self.accept("import"):
                kind = "public" if self.accept("public") else "weak" if self.accept("weak") else ""
                path = self.string().decode()
                self.end_statement()
                if kind == "public":
                    f.public_dependency.append(len(f.dependency))
                elif kind == "weak":
                    f.weak_dependency.append(len(f.dependency))
                f.dependency.append(path)
            elif self.accept("option"):
                read_option_statement(self, f.options)
            elif self.accept("message"):
                self.message(f.message_type.add(), f.package)
            elif self.accept("enum"):
                self.enum(f.enum_type.add())
            elif self.accept("service"):
                self.service(f.service.add(), f.package)
            elif self.accept("extend"):
                self.extend(f.extension, f.message_type, f.package)
            else:
                raise self.error(
                    "expected a top-level statement (package, import, option, message, enum, service, extend)"
                )
        return f

    # -- messages
    def message(self, m: descriptor_pb2.DescriptorProto, scope: str) -> None:
        m.name = self.ident("a message name")
        self.message_body(m, join_name(scope, m.name))

    def message_body(self, m: descriptor_pb2.DescriptorProto, full: str) -> None:
        self.expect("{")
        synthetic: list[descriptor_pb2.FieldDescriptorProto] = []
        while not self.accept("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing message " + full)
            if self.accept(";"):
                continue
            if self.accept("message"):
                self.message(m.nested_type.add(), full)
            elif self.accept("enum"):
                self.enum(m.enum_type.add())
            elif self.accept("option"):
                read_option_statement(self, m.options)
            elif self.accept("oneof"):
                self.oneof(m, full)
            elif self.accept("reserved"):
                self.reserved(m.reserved_range, m.reserved_name, MAX_FIELD_NUMBER + 1, exclusive=True)
            elif self.accept("extensions"):
                self.extensions(m)
            elif self.accept("extend"):
                self.extend(m.extension, m.nested_type, full)
            else:
                field = self.field(m, full, in_oneof=False)
                if field is not None and field.proto3_optional:
                    synthetic.append(field)
        # protoc appends the synthetic oneofs of proto3 optional fields after the declared ones
        for field in synthetic:
            names = {o.name for o in m.oneof_decl}
            oneof_name = "_" + field.name
            while oneof_name in names:
                oneof_name = "X" + oneof_name
            field.oneof_index = len(m.oneof_decl)
            m.oneof_decl.add(name=oneof_name)

    def field(
        self, m: descriptor_pb2.DescriptorProto, scope: str, *, in_oneof: bool
    ) -> descriptor_pb2.FieldDescriptorProto | None:
        start = self.tok
        label = None
        if self.tok.kind == "ident" and self.tok.text in LABELS and self.tokens[self.i + 1].text not in ("=",):
            if in_oneof:
                raise self.error("fields in a oneof take no label")
            label = LABELS[self.next().text]
        if self.at("map") and self.tokens[self.i + 1].text == "<":
            return self.map_field(m, scope, label, start)
        if self.at("group") and self.tokens[self.i + 1].kind == "ident":
            self.next()
            return self.group(m, scope, label, start, in_oneof)
        if label is None and not in_oneof and self.syntax == "proto2":
            raise self.error("expected a field label (optional, required or repeated) in a proto2 message", start)
        if label == FDP.LABEL_REQUIRED and self.syntax == "proto3":
            raise self.error("required fields are not allowed in proto3", start)
        type_tok = self.tok
        type_name = self.type_ref()
        f = m.field.add()
        f.name = self.ident("a field name")
        self.expect("=")
        f.number = self.integer("a field number")
        f.label = label if label is not None else FDP.LABEL_OPTIONAL
        if type_name in SCALAR_TYPES:
            f.type = SCALAR_TYPES[type_name]
        else:
            self.pending.append((f, scope, type_tok, type_name))
        if label == FDP.LABEL_OPTIONAL and self.syntax == "proto3":
            f.proto3_optional = True
        self.field_tail(f)
        return f

    def field_tail(self, f: descriptor_pb2.FieldDescriptorProto) -> None:
        """Reads a field's ``[...]`` options and its ``;``: empty options cleared, ``json_name`` defaulted as
        protoc derives it unless the options set one."""
        read_bracket_options(self, f.options, f)
        if not f.options.ListFields() and not f.options.uninterpreted_option:
            f.ClearField("options")
        if not f.HasField("json_name"):
            f.json_name = json_name(f.name)
        self.end_statement()

    def map_field(
        self, m: descriptor_pb2.DescriptorProto, scope: str, label: int | None, start: Token
    ) -> descriptor_pb2.FieldDescriptorProto:
        if label is not None:
            raise self.error("map fields take no label", start)
        self.expect("map")
        self.expect("<")
        key_tok = self.tok
        key = self.type_ref()
        if key not in SCALAR_TYPES or key in ("double", "float", "bytes"):
            raise self.error("a map key must be an integral or string type", key_tok)
        self.expect(",")
        value_tok = self.tok
        value = self.type_ref()
        self.expect(">")
        f = m.field.add()
        f.name = self.ident("a field name")
        self.expect("=")
        f.number = self.integer("a field number")
        f.label = FDP.LABEL_REPEATED
        f.type = FDP.TYPE_MESSAGE
        entry = m.nested_type.add()
        entry.name = map_entry_name(f.name)
        entry.options.map_entry = True
        k = entry.field.add(name="key", number=1, label=FDP.LABEL_OPTIONAL, type=SCALAR_TYPES[key], json_name="key")
        del k
        v = entry.field.add(name="value", number=2, label=FDP.LABEL_OPTIONAL, json_name="value")
        entry_full = join_name(scope, entry.name)
        if value in SCALAR_TYPES:
            v.type = SCALAR_TYPES[value]
        else:
            self.pending.append((v, entry_full, value_tok, value))
        f.type_name = "." + entry_full
        self.field_tail(f)
        return f

    def group(
        self, m: descriptor_pb2.DescriptorProto, scope: str, label: int | None, start: Token, in_oneof: bool
    ) -> descriptor_pb2.FieldDescriptorProto:
        if self.syntax == "proto3":
            raise self.error("groups are not allowed in proto3", start)
        name_tok = self.tok
        group_name = self.ident("a group name")
        if not group_name[0].isupper():
            raise self.error("a group's name must start with a capital letter", name_tok)
        f = m.field.add()
        f.name = group_name.lower()
        self.expect("=")
        f.number = self.integer("a field number")
        f.label = label if label is not None else FDP.LABEL_OPTIONAL
        f.type = FDP.TYPE_GROUP
        f.type_name = "." + join_name(scope, group_name)
        read_bracket_options(self, f.options, f)
        if not f.options.ListFields() and not f.options.uninterpreted_option:
            f.ClearField("options")
        f.json_name = json_name(f.name)
        nested = m.nested_type.add(name=group_name)
        self.message_body(nested, join_name(scope, group_name))
        return f

    def oneof(self, m: descriptor_pb2.DescriptorProto, scope: str) -> None:
        index = len(m.oneof_decl)
        o = m.oneof_decl.add(name=self.ident("a oneof name"))
        self.expect("{")
        while not self.accept("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing oneof " + o.name)
            if self.accept(";"):
                continue
            if self.accept("option"):
                read_option_statement(self, o.options)
                continue
            f = self.field(m, scope, in_oneof=True)
            assert f is not None
            f.oneof_index = index

    def reserved(self, ranges: object, names: object, max_value: int, *, exclusive: bool) -> None:
        if self.tok.kind == "string":
            while True:
                names.append(self.string().decode())  # type: ignore[attr-defined]
                if not self.accept(","):
                    break
        else:
            while True:
                start = self.integer("a field number")
                end = start
                if self.accept("to"):
                    end = max_value - (1 if exclusive else 0) if self.accept("max") else self.integer("a field number")
                ranges.add(start=start, end=end + 1 if exclusive else end)  # type: ignore[attr-defined]
                if not self.accept(","):
                    break
        self.end_statement()

    def extensions(self, m: descriptor_pb2.DescriptorProto) -> None:
        added = []
        while True:
            start = self.integer("a field number")
            end = start
            if self.accept("to"):
                end = MAX_FIELD_NUMBER if self.accept("max") else self.integer("a field number")
            added.append(m.extension_range.add(start=start, end=end + 1))
            if not self.accept(","):
                break
        if self.at("["):
            options = descriptor_pb2.ExtensionRangeOptions()
            read_bracket_options(self, options)
            for r in added:
                r.options.CopyFrom(options)
        self.end_statement()

    def extend(self, extensions: object, messages: object, scope: str) -> None:
        extendee_tok = self.tok
        extendee = self.type_ref()
        holder = descriptor_pb2.DescriptorProto()
        self.expect("{")
        while not self.accept("}"):
            if self.accept(";"):
                continue
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing extend")
            self.field(holder, scope, in_oneof=False)
        for f in holder.field:
            f.extendee = extendee
            self.pending.append((f, scope, extendee_tok, EXTENDEE))
        # a group inside extend creates a message type in the enclosing scope
        for nested in holder.nested_type:
            messages.add().CopyFrom(nested)  # type: ignore[attr-defined]
        for f in holder.field:
            new = extensions.add()  # type: ignore[attr-defined]
            new.CopyFrom(f)
            for i, (pf, s, t, n) in enumerate(self.pending):
                if pf is f:
                    self.pending[i] = (new, s, t, n)

    # -- enums
    def enum(self, e: descriptor_pb2.EnumDescriptorProto) -> None:
        e.name = self.ident("an enum name")
        self.expect("{")
        while not self.accept("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing enum " + e.name)
            if self.accept(";"):
                continue
            if self.accept("option"):
                read_option_statement(self, e.options)
            elif self.accept("reserved"):
                self.reserved(e.reserved_range, e.reserved_name, MAX_ENUM_NUMBER, exclusive=False)
            else:
                v = e.value.add(name=self.ident("an enum value name"))
                self.expect("=")
                v.number = self.integer("an enum value number")
                read_bracket_options(self, v.options)
                if not v.options.ListFields() and not v.options.uninterpreted_option:
                    v.ClearField("options")
                self.end_statement()

    # -- services
    def streaming_keyword(self) -> bool:
        """``stream`` before an rpc's type, not a type named ``stream`` or ``stream.X`` (a dot right after
        the word continues the name)."""
        if not self.at("stream"):
            return False
        after = self.tokens[self.i + 1]
        if after.text == ")":
            return False
        adjacent = after.line == self.tok.line and after.column == self.tok.column + len("stream")
        return not (after.text == "." and adjacent)

    def service(self, s: descriptor_pb2.ServiceDescriptorProto, scope: str) -> None:
        s.name = self.ident("a service name")
        self.expect("{")
        while not self.accept("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' closing service " + s.name)
            if self.accept(";"):
                continue
            if self.accept("option"):
                read_option_statement(self, s.options)
                continue
            self.expect("rpc")
            method = s.method.add(name=self.ident("an rpc name"))
            self.expect("(")
            if self.streaming_keyword():
                self.next()
                method.client_streaming = True
            in_tok = self.tok
            input_type = self.type_ref()
            self.expect(")")
            self.expect("returns")
            self.expect("(")
            if self.streaming_keyword():
                self.next()
                method.server_streaming = True
            out_tok = self.tok
            output_type = self.type_ref()
            self.expect(")")
            method.input_type, method.output_type = input_type, output_type
            self.pending_methods.append((method, scope, in_tok))
            del out_tok
            if self.accept("{"):
                while not self.accept("}"):
                    if self.accept(";"):
                        continue
                    self.expect("option")
                    read_option_statement(self, method.options)
            else:
                self.end_statement()
