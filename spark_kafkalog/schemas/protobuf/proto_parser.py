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

Options: a simple name that is a field of the descriptor's options message (``java_package``, ``deprecated``,
``packed``, ``allow_alias``, ``map_entry``...) is set on it; custom options (``(my.opt).x``) and aggregate
values are kept as ``uninterpreted_option`` (protoc would resolve them against the extension's definition,
which needs that definition; the printer writes them back as written). ``default`` and ``json_name`` set the
field's own attributes.

``parse_proto(text, name, dependencies)``: ``dependencies`` maps import paths to their FileDescriptorProtos
(used only to resolve type names). Errors raise ``ProtoSyntaxError`` naming line and column. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from google.protobuf import descriptor_pb2, text_format

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

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f\v]+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<float>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?|\d+[eE][+-]?\d+[fF]?)
  | (?P<int>0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<symbol>[{}\[\]()<>;,=.:+\-/])
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}


class ProtoSyntaxError(ValueError):
    """A ``.proto`` text that does not parse or names an unknown type; the message names line and column."""


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    line: int
    column: int


def _tokenize(text: str) -> list[_Token]:
    tokens = []
    pos, line, line_start = 0, 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ProtoSyntaxError(f"line {line}, column {pos - line_start + 1}: unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind not in ("ws", "line_comment", "block_comment"):
            tokens.append(_Token(kind, m.group(), line, pos - line_start + 1))
        newlines = m.group().count("\n")
        if newlines:
            line += newlines
            line_start = m.start() + m.group().rindex("\n") + 1
        pos = m.end()
    tokens.append(_Token("eof", "", line, pos - line_start + 1))
    return tokens


def _unescape(literal: str) -> bytes:
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        i += 1
        e = body[i]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 1
        elif e in "xX":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 1 :])
            if not m:
                raise ValueError("\\x needs hex digits")
            out.append(int(m.group(), 16))
            i += 1 + len(m.group())
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i:])
            assert m is not None
            out.append(int(m.group(), 8) & 0xFF)
            i += len(m.group())
        elif e in "uU":
            width = 4 if e == "u" else 8
            out += chr(int(body[i + 1 : i + 1 + width], 16)).encode()
            i += 1 + width
        else:
            raise ValueError(f"unknown escape \\{e}")
    return bytes(out)


def json_name(name: str) -> str:
    """protoc's default JSON name: underscores removed, the letter after each one upper-cased."""
    out, upper = [], False
    for c in name:
        if c == "_":
            upper = True
        elif upper:
            out.append(c.upper())
            upper = False
        else:
            out.append(c)
    return "".join(out)


def _map_entry_name(field_name: str) -> str:
    out, upper = [], True
    for c in field_name:
        if c == "_":
            upper = True
        elif upper:
            out.append(c.upper())
            upper = False
        else:
            out.append(c)
    return "".join(out) + "Entry"


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.i = 0
        self.syntax = "proto2"
        # (field, scope, token) whose type_name needs resolving once every type is known
        self.pending: list[tuple[descriptor_pb2.FieldDescriptorProto, str, _Token, str]] = []
        self.pending_methods: list[tuple[descriptor_pb2.MethodDescriptorProto, str, _Token]] = []

    # -- token helpers
    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def error(self, message: str, tok: _Token | None = None) -> ProtoSyntaxError:
        t = tok or self.tok
        found = "end of input" if t.kind == "eof" else repr(t.text)
        return ProtoSyntaxError(f"line {t.line}, column {t.column}: {message} (found {found})")

    def next(self) -> _Token:
        t = self.tok
        self.i += 1
        return t

    def at(self, text: str) -> bool:
        return self.tok.text == text and self.tok.kind in ("symbol", "ident")

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> _Token:
        if not self.at(text):
            raise self.error(f"expected {text!r}")
        return self.next()

    def ident(self, what: str = "an identifier") -> str:
        if self.tok.kind != "ident":
            raise self.error(f"expected {what}")
        return self.next().text

    def full_ident(self) -> str:
        parts = [self.ident()]
        while self.accept("."):
            parts.append(self.ident())
        return ".".join(parts)

    def type_ref(self) -> str:
        lead = "." if self.accept(".") else ""
        return lead + self.full_ident()

    def string(self) -> bytes:
        if self.tok.kind != "string":
            raise self.error("expected a string")
        out = b""
        while self.tok.kind == "string":
            t = self.next()
            try:
                out += _unescape(t.text)
            except (ValueError, IndexError) as e:
                raise self.error(f"invalid string literal: {e}", t) from None
        return out

    def integer(self, what: str = "an integer") -> int:
        negative = self.accept("-")
        if self.tok.kind != "int":
            raise self.error(f"expected {what}")
        text = self.next().text
        value = int(text, 8) if re.fullmatch(r"0[0-7]+", text) else int(text, 0)
        return -value if negative else value

    def end_statement(self) -> None:
        self.expect(";")

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
                self.option_statement(f.options)
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

    # -- options
    def option_name(self) -> list[descriptor_pb2.UninterpretedOption.NamePart]:
        parts = []
        while True:
            if self.accept("("):
                lead = "." if self.accept(".") else ""
                parts.append(
                    descriptor_pb2.UninterpretedOption.NamePart(name_part=lead + self.full_ident(), is_extension=True)
                )
                self.expect(")")
            else:
                parts.append(descriptor_pb2.UninterpretedOption.NamePart(name_part=self.ident(), is_extension=False))
            if not self.accept("."):
                return parts

    def option_value(self, uo: descriptor_pb2.UninterpretedOption) -> None:
        """Read a constant into an UninterpretedOption's value fields."""
        t = self.tok
        if t.kind == "string":
            uo.string_value = self.string()
        elif self.at("{"):
            uo.aggregate_value = self.aggregate()
        elif self.at("-") or self.at("+") or t.kind in ("int", "float"):
            sign = -1 if self.accept("-") else 1
            self.accept("+")
            t = self.tok
            if t.kind == "int":
                text = self.next().text
                v = int(text, 8) if re.fullmatch(r"0[0-7]+", text) else int(text, 0)
                if sign < 0:
                    uo.negative_int_value = -v
                else:
                    uo.positive_int_value = v
            elif t.kind == "float":
                uo.double_value = sign * float(self.next().text.rstrip("fF"))
            elif t.kind == "ident" and t.text in ("inf", "nan"):
                uo.double_value = sign * float(self.next().text)
            else:
                raise self.error("expected a number")
        elif t.kind == "ident":
            uo.identifier_value = self.next().text
        else:
            raise self.error("expected an option value")

    def aggregate(self) -> str:
        """The text between balanced braces, tokens joined by single spaces (as protoc keeps it)."""
        self.expect("{")
        depth, parts = 1, list[str]()
        while True:
            t = self.next()
            if t.kind == "eof":
                raise self.error("unterminated aggregate option value", t)
            if t.text in ("{", "<") and t.kind == "symbol":
                depth += 1
            elif t.text in ("}", ">") and t.kind == "symbol":
                depth -= 1
                if depth == 0:
                    return " ".join(parts)
            parts.append(t.text)

    def option_statement(self, options: object) -> None:
        self.set_option(options, None)
        self.end_statement()

    def set_option(self, options: object, field: descriptor_pb2.FieldDescriptorProto | None) -> None:
        name_tok = self.tok
        name = self.option_name()
        self.expect("=")
        uo = descriptor_pb2.UninterpretedOption(name=name)
        value_tok = self.tok
        self.option_value(uo)
        simple = name[0].name_part if len(name) == 1 and not name[0].is_extension else None
        if field is not None and simple == "default":
            field.default_value = self.default_text(field, uo, value_tok)
            return
        if field is not None and simple == "json_name":
            if not uo.HasField("string_value"):
                raise self.error("json_name must be a string", value_tok)
            field.json_name = uo.string_value.decode()
            return
        target = options  # a descriptor options message
        fields = target.DESCRIPTOR.fields_by_name  # type: ignore[attr-defined]
        if simple is not None and simple in fields and simple != "uninterpreted_option":
            fd = fields[simple]
            try:
                if fd.type == FDP.TYPE_MESSAGE:
                    if not uo.HasField("aggregate_value"):
                        raise ValueError("expected a { ... } value")
                    message = getattr(target, simple).add() if fd.is_repeated else getattr(target, simple)
                    text_format.Merge(uo.aggregate_value, message)
                elif fd.is_repeated:
                    getattr(target, simple).append(_option_scalar(fd, uo))
                else:
                    setattr(target, simple, _option_scalar(fd, uo))
            except (ValueError, TypeError, KeyError, text_format.ParseError) as e:
                raise self.error(f"invalid value for option {simple}: {e}", value_tok) from None
            return
        if simple is not None and simple not in fields and simple != "features":
            raise self.error(f"unknown option {simple!r} (custom options are written in parentheses)", name_tok)
        target.uninterpreted_option.append(uo)  # type: ignore[attr-defined]

    def default_text(
        self, field: descriptor_pb2.FieldDescriptorProto, uo: descriptor_pb2.UninterpretedOption, tok: _Token
    ) -> str:
        if uo.HasField("string_value"):
            if field.type == FDP.TYPE_BYTES:
                return _c_escape(uo.string_value)
            return uo.string_value.decode()
        if uo.HasField("identifier_value"):
            return uo.identifier_value
        if uo.HasField("positive_int_value"):
            if field.type in (FDP.TYPE_FLOAT, FDP.TYPE_DOUBLE):
                return _float_text(float(uo.positive_int_value))
            return str(uo.positive_int_value)
        if uo.HasField("negative_int_value"):
            if field.type in (FDP.TYPE_FLOAT, FDP.TYPE_DOUBLE):
                return _float_text(float(uo.negative_int_value))
            return str(uo.negative_int_value)
        if uo.HasField("double_value"):
            return _float_text(uo.double_value)
        raise self.error("invalid default value", tok)

    def bracket_options(self, options: object, field: descriptor_pb2.FieldDescriptorProto | None = None) -> None:
        if not self.accept("["):
            return
        while True:
            self.set_option(options, field)
            if self.accept("]"):
                return
            self.expect(",")

    # -- messages
    def message(self, m: descriptor_pb2.DescriptorProto, scope: str) -> None:
        m.name = self.ident("a message name")
        self.message_body(m, _join(scope, m.name))

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
                self.option_statement(m.options)
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
        self.bracket_options(f.options, f)
        if not f.options.ListFields() and not f.options.uninterpreted_option:
            f.ClearField("options")
        if not f.HasField("json_name"):
            f.json_name = json_name(f.name)
        self.end_statement()
        return f

    def map_field(
        self, m: descriptor_pb2.DescriptorProto, scope: str, label: int | None, start: _Token
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
        entry.name = _map_entry_name(f.name)
        entry.options.map_entry = True
        k = entry.field.add(name="key", number=1, label=FDP.LABEL_OPTIONAL, type=SCALAR_TYPES[key], json_name="key")
        del k
        v = entry.field.add(name="value", number=2, label=FDP.LABEL_OPTIONAL, json_name="value")
        entry_full = _join(scope, entry.name)
        if value in SCALAR_TYPES:
            v.type = SCALAR_TYPES[value]
        else:
            self.pending.append((v, entry_full, value_tok, value))
        f.type_name = "." + entry_full
        self.bracket_options(f.options, f)
        if not f.options.ListFields() and not f.options.uninterpreted_option:
            f.ClearField("options")
        if not f.HasField("json_name"):
            f.json_name = json_name(f.name)
        self.end_statement()
        return f

    def group(
        self, m: descriptor_pb2.DescriptorProto, scope: str, label: int | None, start: _Token, in_oneof: bool
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
        f.type_name = "." + _join(scope, group_name)
        self.bracket_options(f.options, f)
        if not f.options.ListFields() and not f.options.uninterpreted_option:
            f.ClearField("options")
        f.json_name = json_name(f.name)
        nested = m.nested_type.add(name=group_name)
        self.message_body(nested, _join(scope, group_name))
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
                self.option_statement(o.options)
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
            self.bracket_options(options)
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
            self.pending.append((f, scope, extendee_tok, "\0extendee"))
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
                self.option_statement(e.options)
            elif self.accept("reserved"):
                self.reserved(e.reserved_range, e.reserved_name, MAX_ENUM_NUMBER, exclusive=False)
            else:
                v = e.value.add(name=self.ident("an enum value name"))
                self.expect("=")
                v.number = self.integer("an enum value number")
                self.bracket_options(v.options)
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
                self.option_statement(s.options)
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
                    self.option_statement(method.options)
            else:
                self.end_statement()


def _option_scalar(fd: object, uo: descriptor_pb2.UninterpretedOption) -> object:
    kind = fd.type  # type: ignore[attr-defined]
    if kind == FDP.TYPE_BOOL:
        if uo.identifier_value not in ("true", "false"):
            raise ValueError("expected true or false")
        return uo.identifier_value == "true"
    if kind == FDP.TYPE_ENUM:
        if not uo.HasField("identifier_value"):
            raise ValueError("expected an enum value name")
        return fd.enum_type.values_by_name[uo.identifier_value].number  # type: ignore[attr-defined]
    if kind == FDP.TYPE_STRING:
        if not uo.HasField("string_value"):
            raise ValueError("expected a string")
        return uo.string_value.decode()
    if kind == FDP.TYPE_BYTES:
        return uo.string_value
    if kind in (FDP.TYPE_FLOAT, FDP.TYPE_DOUBLE):
        if uo.HasField("double_value"):
            return uo.double_value
        return float(uo.positive_int_value or uo.negative_int_value)
    if uo.HasField("positive_int_value"):
        return uo.positive_int_value
    if uo.HasField("negative_int_value"):
        return uo.negative_int_value
    raise ValueError("expected an integer")


def _float_text(value: float) -> str:
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _c_escape(data: bytes) -> str:
    """protoc's CEscape of a bytes default."""
    out = []
    for b in data:
        c = chr(b)
        if c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c in "\"'\\":
            out.append("\\" + c)
        elif 0x20 <= b < 0x7F:
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return "".join(out)


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def _collect(f: descriptor_pb2.FileDescriptorProto, symbols: dict[str, str], packages: set[str]) -> None:
    def walk_message(m: descriptor_pb2.DescriptorProto, scope: str) -> None:
        full = _join(scope, m.name)
        symbols[full] = "message"
        for n in m.nested_type:
            walk_message(n, full)
        for e in m.enum_type:
            symbols[_join(full, e.name)] = "enum"

    parts = f.package.split(".") if f.package else []
    for i in range(1, len(parts) + 1):
        packages.add(".".join(parts[:i]))
    for m in f.message_type:
        walk_message(m, f.package)
    for e in f.enum_type:
        symbols[_join(f.package, e.name)] = "enum"
    for s in f.service:
        symbols[_join(f.package, s.name)] = "service"


def _resolve(name: str, scope: str, symbols: Mapping[str, str], packages: set[str]) -> str | None:
    if name.startswith("."):
        return name[1:] if name[1:] in symbols else None
    first = name.split(".", 1)[0]
    parts = scope.split(".") if scope else []
    for i in range(len(parts), -1, -1):
        prefix = ".".join(parts[:i])
        head = _join(prefix, first)
        if head in symbols or head in packages:
            candidate = _join(prefix, name)
            if candidate in symbols:
                return candidate
            if head in symbols and symbols[head] == "message":
                return None  # found the enclosing name but not the rest: protoc stops here too
    return None


def parse_proto(
    text: str, name: str = "", dependencies: Mapping[str, descriptor_pb2.FileDescriptorProto] | None = None
) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto of ``text`` (``name``: its import path, e.g. ``"orders.proto"``).

    ``dependencies`` maps import paths to already parsed files whose types ``text`` may use; an import
    missing from it is kept (as protoc keeps the name) but its types do not resolve."""
    parser = _Parser(text)
    f = parser.parse_file(name)
    symbols: dict[str, str] = {}
    packages: set[str] = set()
    for dep in _deps(dependencies or {}, f.dependency):
        _collect(dep, symbols, packages)
    _collect(f, symbols, packages)
    for field, scope, tok, type_name in parser.pending:
        if type_name == "\0extendee":
            target = _resolve(field.extendee, scope, symbols, packages)
            if target is None or symbols[target] != "message":
                raise parser.error(f"unknown message type {field.extendee!r} to extend", tok)
            field.extendee = "." + target
            continue
        target = _resolve(type_name, scope, symbols, packages)
        if target is None or symbols[target] == "service":
            raise parser.error(f"unknown type {type_name!r}", tok)
        field.type = FDP.TYPE_ENUM if symbols[target] == "enum" else FDP.TYPE_MESSAGE
        field.type_name = "." + target
    for method, scope, tok in parser.pending_methods:
        for attr in ("input_type", "output_type"):
            target = _resolve(getattr(method, attr), scope, symbols, packages)
            if target is None or symbols[target] != "message":
                raise parser.error(f"unknown message type {getattr(method, attr)!r} in rpc {method.name}", tok)
            setattr(method, attr, "." + target)
    return f


def _deps(
    dependencies: Mapping[str, descriptor_pb2.FileDescriptorProto], names: Iterable[str]
) -> list[descriptor_pb2.FileDescriptorProto]:
    """The named files and, transitively, the files they import publicly or not (for resolving names)."""
    seen: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    todo = list(names)
    while todo:
        n = todo.pop()
        if n in seen or n not in dependencies:
            continue
        seen[n] = dependencies[n]
        todo.extend(dependencies[n].dependency)
    return list(seen.values())
