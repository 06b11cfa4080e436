"""Options in ``.proto`` text: ``option name = value;`` statements and ``[name = value, ...]`` lists, read
from a ``TokenCursor`` into a descriptor's options message as protoc's output has them.

A simple name that is a field of the options message (``java_package``, ``deprecated``, ``packed``,
``allow_alias``, ``map_entry``...) is set on it (a message-typed one from an aggregate ``{ ... }`` value in
text format); custom options (``(my.opt).x``) and aggregate values of them are kept as
``uninterpreted_option`` with the name parts and the value as written (protoc would resolve them against the
extension's definition, which needs that definition; the printer writes them back as written), as is
``features``. Any other simple name is an error. On a field, ``default`` sets ``default_value`` (protoc's
text: bytes C-escaped, integral floats without a fraction, ``inf``/``-inf``/``nan``, enum values by name)
and ``json_name`` sets ``json_name``. Errors are ``ProtoSyntaxError`` naming line and column. Pure.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, text_format

from spark_kafkalog.schemas.protobuf.proto_lexer import Token, TokenCursor, c_escape, int_literal
from spark_kafkalog.schemas.protobuf.proto_names import FDP


def read_option_statement(cur: TokenCursor, options: object) -> None:
    """The rest of an ``option name = value;`` statement (after ``option``), set on ``options``."""
    _set_option(cur, options, None)
    cur.end_statement()


def read_bracket_options(
    cur: TokenCursor, options: object, field: descriptor_pb2.FieldDescriptorProto | None = None
) -> None:
    """An optional ``[name = value, ...]`` list, set on ``options`` (``default``/``json_name`` on ``field``)."""
    if not cur.accept("["):
        return
    while True:
        _set_option(cur, options, field)
        if cur.accept("]"):
            return
        cur.expect(",")


def _option_name(cur: TokenCursor) -> list[descriptor_pb2.UninterpretedOption.NamePart]:
    parts = []
    while True:
        if cur.accept("("):
            lead = "." if cur.accept(".") else ""
            parts.append(
                descriptor_pb2.UninterpretedOption.NamePart(name_part=lead + cur.full_ident(), is_extension=True)
            )
            cur.expect(")")
        else:
            parts.append(descriptor_pb2.UninterpretedOption.NamePart(name_part=cur.ident(), is_extension=False))
        if not cur.accept("."):
            return parts


def _option_value(cur: TokenCursor, uo: descriptor_pb2.UninterpretedOption) -> None:
    """Read a constant into an UninterpretedOption's value fields."""
    t = cur.tok
    if t.kind == "string":
        uo.string_value = cur.string()
    elif cur.at("{"):
        uo.aggregate_value = _aggregate(cur)
    elif cur.at("-") or cur.at("+") or t.kind in ("int", "float"):
        sign = -1 if cur.accept("-") else 1
        cur.accept("+")
        t = cur.tok
        if t.kind == "int":
            v = int_literal(cur.next().text)
            if sign < 0:
                uo.negative_int_value = -v
            else:
                uo.positive_int_value = v
        elif t.kind == "float":
            uo.double_value = sign * float(cur.next().text.rstrip("fF"))
        elif t.kind == "ident" and t.text in ("inf", "nan"):
            uo.double_value = sign * float(cur.next().text)
        else:
            raise cur.error("expected a number")
    elif t.kind == "ident":
        uo.identifier_value = cur.next().text
    else:
        raise cur.error("expected an option value")


def _aggregate(cur: TokenCursor) -> str:
    """The text between balanced braces, tokens joined by single spaces (as protoc keeps it)."""
    cur.expect("{")
    depth, parts = 1, list[str]()
    while True:
        t = cur.next()
        if t.kind == "eof":
            raise cur.error("unterminated aggregate option value", t)
        if t.text in ("{", "<") and t.kind == "symbol":
            depth += 1
        elif t.text in ("}", ">") and t.kind == "symbol":
            depth -= 1
            if depth == 0:
                return " ".join(parts)
        parts.append(t.text)


def _set_option(cur: TokenCursor, options: object, field: descriptor_pb2.FieldDescriptorProto | None) -> None:
    name_tok = cur.tok
    name = _option_name(cur)
    cur.expect("=")
    uo = descriptor_pb2.UninterpretedOption(name=name)
    value_tok = cur.tok
    _option_value(cur, uo)
    simple = name[0].name_part if len(name) == 1 and not name[0].is_extension else None
    if field is not None and simple == "default":
        field.default_value = _default_text(cur, field, uo, value_tok)
        return
    if field is not None and simple == "json_name":
        if not uo.HasField("string_value"):
            raise cur.error("json_name must be a string", value_tok)
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
            raise cur.error(f"invalid value for option {simple}: {e}", value_tok) from None
        return
    if simple is not None and simple not in fields and simple != "features":
        raise cur.error(f"unknown option {simple!r} (custom options are written in parentheses)", name_tok)
    target.uninterpreted_option.append(uo)  # type: ignore[attr-defined]


def _default_text(
    cur: TokenCursor, field: descriptor_pb2.FieldDescriptorProto, uo: descriptor_pb2.UninterpretedOption, tok: Token
) -> str:
    if uo.HasField("string_value"):
        if field.type == FDP.TYPE_BYTES:
            return c_escape(uo.string_value)
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
    raise cur.error("invalid default value", tok)


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
