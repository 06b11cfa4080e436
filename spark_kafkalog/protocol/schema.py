"""Our compact declaration language for Kafka message schemas, and the message classes it generates.

A message is declared as indented text, one field per line, wire order = line order::

    transactional_id   string?    v3+
    acks               int16
    topic_data         []TopicProduceData
      name             string
      partition_data   []PartitionProduceData
        index          int32
        records        records?

Line grammar: ``name type [modifiers...]``; ``#`` starts a comment.

* ``type`` is a primitive (``bool int8 int16 int32 int64 uint16 uint32 float64 uuid string bytes
  records``), ``[]primitive`` (an array of primitives), ``[]StructName`` (an array of structs whose fields
  are the more-indented lines that follow) or ``StructName`` (a single nested struct). A trailing ``?``
  makes the field nullable in every version that has it.
* ``vN+``, ``vN-M`` or ``vN``: the versions that carry the field (default: every version of the message).
* ``nullN+`` / ``nullN-M`` / ``nullN``: nullable only in those versions (instead of ``?``).
* ``tagN``: a tagged field (KIP-482) with tag ``N``; it lives in the enclosing struct's tag buffer in the
  field's versions (which must be flexible) and is written only when it differs from its default.
* ``secret``: the value is a secret (a salted password): ``repr`` shows ``<redacted>`` instead.
* ``default=X``: the value when the field is absent at a version or its tag is omitted (``true``,
  ``false``, ``null``, an integer, or text for strings). Otherwise numbers default to 0, strings to
  ``""``, bytes to ``b""``, arrays to ``[]``, uuids to the all-zero uuid, structs to a default struct.

Every struct gets a generated class (``__slots__``, keyword constructor with defaults, equality,
``repr``, ``to_dict``/``from_dict``); nested struct classes hang off their parent class by struct name
(``ProduceRequest.TopicProduceData.PartitionProduceData``). ``unknown_tags`` holds tagged fields this
declaration does not know (``{tag: bytes}``) so they survive a decode/encode round trip.
"""

from __future__ import annotations

import re
import uuid as _uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, Self, TypeVar, cast

from .primitives import ZERO_UUID

MAX_VERSION = 0x7FFF

PRIMITIVES = frozenset(
    ("bool", "int8", "int16", "int32", "int64", "uint16", "uint32", "float64", "uuid", "string", "bytes", "records")
)


class DeclarationError(ValueError):
    """A schema declaration that cannot be parsed; names the message, line and problem."""


@dataclass(frozen=True)
class VersionRange:
    """An inclusive version range; ``hi == MAX_VERSION`` means open-ended (``N+``)."""

    lo: int
    hi: int

    def __contains__(self, v: object) -> bool:
        return isinstance(v, int) and self.lo <= v <= self.hi

    def intersect(self, other: VersionRange | None) -> VersionRange | None:
        if other is None:
            return None
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        return VersionRange(lo, hi) if lo <= hi else None

    def __str__(self) -> str:
        if self.hi == MAX_VERSION:
            return f"{self.lo}+"
        if self.lo == self.hi:
            return str(self.lo)
        return f"{self.lo}-{self.hi}"

    @classmethod
    def parse(cls, text: str) -> VersionRange | None:
        """Parse ``"N"``, ``"N+"``, ``"N-M"`` or ``"none"`` (returns ``None``)."""
        text = text.strip()
        if text == "none":
            return None
        m = re.fullmatch(r"(\d+)(\+|-(\d+))?", text)
        if not m:
            raise DeclarationError(f"bad version range {text!r} (expected N, N+, N-M or none)")
        lo = int(m.group(1))
        if m.group(2) == "+":
            return cls(lo, MAX_VERSION)
        hi = int(m.group(3)) if m.group(3) else lo
        if hi < lo:
            raise DeclarationError(f"bad version range {text!r}: {hi} < {lo}")
        return cls(lo, hi)


ALL_VERSIONS = VersionRange(0, MAX_VERSION)


@dataclass(eq=False)
class FieldSpec:
    """One declared field. ``kind`` is ``"prim"``, ``"array"`` (of ``prim`` or ``struct``) or ``"struct"``."""

    name: str
    kind: str
    prim: str | None
    struct: StructSpec | None
    versions: VersionRange
    nullable: VersionRange | None
    tag: int | None
    default: Any
    line: int = 0
    secret: bool = False

    @property
    def prim_type(self) -> str:
        """The primitive of a ``prim`` field or of an array of primitives (set for those by the parser)."""
        assert self.prim is not None, f"{self.name}: a {self.kind} field of structs has no primitive"
        return self.prim

    @property
    def struct_spec(self) -> StructSpec:
        """The nested struct of a ``struct`` field or of an array of structs (set for those by the parser)."""
        assert self.struct is not None, f"{self.name}: a {self.kind} field of primitives has no struct"
        return self.struct

    def in_version(self, v: int) -> bool:
        return v in self.versions

    def nullable_in(self, v: int) -> bool:
        return self.nullable is not None and v in self.nullable

    def is_tagged_in(self, v: int) -> bool:
        return self.tag is not None and v in self.versions

    def make_default(self) -> Any:
        d = self.default
        if d is _UNSET:
            if self.kind == "array":
                return []
            if self.kind == "struct":
                return self.struct_spec.cls()
            return _PRIM_DEFAULTS[self.prim_type]
        return d

    @property
    def type_str(self) -> str:
        if self.kind == "prim":
            return self.prim_type
        if self.kind == "array":
            return "[]" + (self.prim if self.prim else self.struct_spec.name)
        return self.struct_spec.name


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()
_PRIM_DEFAULTS: dict[str, Any] = {
    "bool": False,
    "int8": 0,
    "int16": 0,
    "int32": 0,
    "int64": 0,
    "uint16": 0,
    "uint32": 0,
    "float64": 0.0,
    "uuid": ZERO_UUID,
    "string": "",
    "bytes": b"",
    "records": None,
}


@dataclass(eq=False)
class StructSpec:
    """A struct: ordered fields plus the generated class. Codec caches live in ``codecs``."""

    name: str
    fields: list[FieldSpec]
    cls: type[Message] = field(init=False)  # the generated class, set by the parser right after construction
    codecs: dict[tuple[str, int, bool], Callable[..., Any]] = field(default_factory=dict)

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def walk(self) -> Iterable[StructSpec]:
        """This struct and every nested struct, depth first."""
        yield self
        for f in self.fields:
            if f.struct is not None:
                yield from f.struct.walk()


class Message:
    """Base of generated message classes. Instances are plain mutable records (not thread-safe)."""

    __slots__ = ("unknown_tags",)
    _spec: StructSpec
    unknown_tags: dict[int, bytes] | None

    def __init__(self, **values: Any) -> None:
        for f in self._spec.fields:
            if f.name in values:
                setattr(self, f.name, values.pop(f.name))
            else:
                setattr(self, f.name, f.make_default())
        self.unknown_tags = values.pop("unknown_tags", None)
        if values:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(sorted(values))}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        for f in self._spec.fields:
            if getattr(self, f.name) != getattr(other, f.name):
                return False
        return (self.unknown_tags or None) == (other.unknown_tags or None)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{f.name}={'<redacted>' if f.secret else repr(getattr(self, f.name))}" for f in self._spec.fields
        )
        return f"{type(self).__name__}({inner})"

    def to_dict(self) -> dict[str, Any]:
        """Nested plain dicts and lists (record data converted to ``bytes``)."""
        out: dict[str, Any] = {}
        for f in self._spec.fields:
            out[f.name] = _to_plain(getattr(self, f.name))
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Build an instance from nested dicts; missing keys take their defaults."""
        values = {}
        for f in cls._spec.fields:
            if f.name not in data:
                continue
            v = data[f.name]
            if v is not None and f.struct is not None:
                if f.kind == "array":
                    v = [x if isinstance(x, Message) else f.struct.cls.from_dict(x) for x in v]
                elif not isinstance(v, Message):
                    v = f.struct.cls.from_dict(v)
            values[f.name] = v
        unknown = set(data) - {f.name for f in cls._spec.fields}
        if unknown:
            raise TypeError(f"{cls.__name__} has no field(s) {', '.join(sorted(unknown))}")
        return cls(**values)


def _to_plain(v: Any) -> Any:
    if isinstance(v, Message):
        return v.to_dict()
    if isinstance(v, list):
        return [_to_plain(x) for x in v]
    if isinstance(v, memoryview):
        return bytes(v)
    return v


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def _make_class(spec: StructSpec, qualname_prefix: str = "") -> type[Message]:
    slots = tuple(f.name for f in spec.fields)
    ns: dict[str, Any] = {"__slots__": slots, "_spec": spec, "__qualname__": qualname_prefix + spec.name}
    for f in spec.fields:
        if f.struct is not None and f.struct.name not in ns and f.struct.name not in slots:
            ns[f.struct.name] = f.struct.cls
    return cast("type[Message]", type(spec.name, (Message,), ns))


_Line = tuple[int, int, re.Match[str]]  # (indent, line number, the _LINE match) of one declaration line
_LINE = re.compile(r"^(?P<indent> *)(?P<name>[a-z][a-z0-9_]*)\s+(?P<type>\S+)(?P<mods>(\s+\S+)*)\s*$")


def parse_struct(
    text: str, name: str, versions: VersionRange, *, where: str = "", flexible: VersionRange | None = None
) -> StructSpec:
    """Parse a declaration into a ``StructSpec`` named ``name`` (classes generated bottom-up)."""
    lines: list[_Line] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        stripped = raw.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        m = _LINE.match(stripped)
        if not m:
            raise DeclarationError(f"{where} {name}: line {lineno}: cannot parse {raw.strip()!r}")
        lines.append((len(m.group("indent")), lineno, m))
    if not lines:
        spec = StructSpec(name, [])
        spec.cls = _make_class(spec)
        return spec
    base = lines[0][0]
    pos, spec = _parse_block(lines, 0, base, name, versions, where or name, flexible)
    if pos != len(lines):
        raise DeclarationError(f"{where} {name}: line {lines[pos][1]}: unexpected indentation")
    return spec


def _parse_block(
    lines: list[_Line],
    pos: int,
    indent: int,
    struct_name: str,
    parent_versions: VersionRange,
    where: str,
    flexible: VersionRange | None,
) -> tuple[int, StructSpec]:
    fields: list[FieldSpec] = []
    while pos < len(lines):
        ind, lineno, m = lines[pos]
        if ind < indent:
            break
        if ind > indent:
            raise DeclarationError(f"{where}: line {lineno}: unexpected indentation")
        fspec, pos = _parse_field(lines, pos, parent_versions, where, flexible)
        if any(f.name == fspec.name for f in fields):
            raise DeclarationError(f"{where}: line {lineno}: duplicate field {fspec.name!r}")
        if fspec.struct is not None:  # a struct declared again under another field is the same struct (one class)
            for f in fields:
                if f.struct is not None and f.struct.name == fspec.struct.name:
                    if not _same_struct(f.struct, fspec.struct):
                        raise DeclarationError(
                            f"{where}: line {lineno}: {fspec.name!r} declares a struct {fspec.struct.name} unlike "
                            f"the one {f.name!r} declares"
                        )
                    fspec.struct = f.struct
                    break
        fields.append(fspec)
    spec = StructSpec(struct_name, fields)
    spec.cls = _make_class(spec)
    return pos, spec


def _same_struct(a: StructSpec, b: StructSpec) -> bool:
    """Whether two declarations of a struct agree: same name, and field for field the same name, type, versions,
    nullability, tag, default and nested structs (line numbers aside)."""
    if a.name != b.name or len(a.fields) != len(b.fields):
        return False
    for fa, fb in zip(a.fields, b.fields, strict=True):
        same = (fa.name, fa.kind, fa.prim, fa.versions, fa.nullable, fa.tag, fa.secret) == (
            fb.name, fb.kind, fb.prim, fb.versions, fb.nullable, fb.tag, fb.secret,
        )  # fmt: skip
        if not same or (fa.default is not fb.default and fa.default != fb.default):
            return False
        if (fa.struct is None) != (fb.struct is None):
            return False
        if fa.struct is not None and fb.struct is not None and not _same_struct(fa.struct, fb.struct):
            return False
    return True


def _parse_field(
    lines: list[_Line], pos: int, parent_versions: VersionRange, where: str, flexible: VersionRange | None
) -> tuple[FieldSpec, int]:
    ind, lineno, m = lines[pos]
    name, type_tok, mods = m.group("name"), m.group("type"), m.group("mods").split()
    ctx = f"{where}: line {lineno} ({name})"
    nullable_all = type_tok.endswith("?")
    if nullable_all:
        type_tok = type_tok[:-1]
    versions = parent_versions
    nullable: VersionRange | None = None
    tag = None
    default: Any = _UNSET
    secret = False
    for mod in mods:
        if mod == "secret":
            secret = True
        elif mod.startswith("default="):
            default = mod[len("default=") :]
        elif mod.startswith("null"):
            nullable = VersionRange.parse(mod[4:]) if mod[4:] else ALL_VERSIONS
        elif mod.startswith("tag"):
            tag = int(mod[3:])
        elif mod.startswith("v"):
            parsed = VersionRange.parse(mod[1:])
            if parsed is None:
                raise DeclarationError(f"{ctx}: a field needs at least one version")
            versions = parsed
        else:
            raise DeclarationError(f"{ctx}: unknown modifier {mod!r}")
    if nullable_all:
        nullable = ALL_VERSIONS
    if nullable is not None:
        nullable = nullable.intersect(versions)
    if tag is not None and (flexible is None or versions.intersect(flexible) != versions):
        raise DeclarationError(f"{ctx}: tagged field outside the flexible versions")
    # children
    has_children = pos + 1 < len(lines) and lines[pos + 1][0] > ind
    struct = None
    prim = None
    if type_tok.startswith("[]"):
        kind = "array"
        elem = type_tok[2:]
        if elem in PRIMITIVES:
            prim = elem
            if has_children:
                raise DeclarationError(f"{ctx}: an array of {elem} has no fields")
        else:
            if not has_children:
                raise DeclarationError(f"{ctx}: struct array without fields")
            sname = elem or _camel(name)
            pos, struct = _parse_block(lines, pos + 1, lines[pos + 1][0], sname, versions, where, flexible)
            pos -= 1
    elif type_tok in PRIMITIVES:
        kind = "prim"
        prim = type_tok
        if has_children:
            raise DeclarationError(f"{ctx}: a {type_tok} has no fields")
    elif re.fullmatch(r"[A-Z][A-Za-z0-9]*", type_tok):
        kind = "struct"
        if not has_children:
            raise DeclarationError(f"{ctx}: struct {type_tok} without fields")
        pos, struct = _parse_block(lines, pos + 1, lines[pos + 1][0], type_tok, versions, where, flexible)
        pos -= 1
    else:
        raise DeclarationError(f"{ctx}: unknown type {type_tok!r}")
    if default is not _UNSET:
        default = _parse_default(default, kind, prim, ctx)
    return (
        FieldSpec(name, kind, prim, struct, versions, nullable, tag, default, lineno, secret),
        pos + 1,
    )


def _parse_default(text: str, kind: str, prim: str | None, ctx: str) -> Any:
    if text == "null":
        return None
    if kind != "prim":
        raise DeclarationError(f"{ctx}: only null can be the default of an array or struct")
    try:
        if prim == "bool":
            return {"true": True, "false": False}[text]
        if prim in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
            return int(text, 0)
        if prim == "float64":
            return float(text)
        if prim == "string":
            return text
        if prim == "uuid":
            return _uuid.UUID(text)
    except (KeyError, ValueError) as e:
        raise DeclarationError(f"{ctx}: bad default {text!r} for {prim}") from e
    raise DeclarationError(f"{ctx}: {prim} fields take no default")


_Req = TypeVar("_Req", bound=Message)
_Resp = TypeVar("_Resp", bound=Message)
_Data = TypeVar("_Data", bound=Message)


@dataclass(eq=False)
class ApiSpec(Generic[_Req, _Resp]):
    """One Kafka API: key, name, declared versions, flexible versions, request and response schemas.

    Generic in its two message classes: each API module's stub (``apis/<api>.pyi``, generated by
    ``stubs.py``) declares its ``API`` as ``ApiSpec[<Name>Request, <Name>Response]``; a bare ``ApiSpec``
    is ``ApiSpec[Any, Any]``.
    """

    key: int
    name: str
    versions: VersionRange
    flexible: VersionRange | None
    request: StructSpec
    response: StructSpec

    @property
    def min_version(self) -> int:
        return self.versions.lo

    @property
    def max_version(self) -> int:
        return self.versions.hi

    def is_flexible(self, version: int) -> bool:
        return self.flexible is not None and version in self.flexible

    def request_header_version(self, version: int) -> int:
        return 2 if self.is_flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        if self.key == 18:  # ApiVersions responses always use header v0 (KIP-511)
            return 0
        return 1 if self.is_flexible(version) else 0

    # The message classes are generated from the declarations at run time; their types come from the stubs.
    @property
    def Request(self) -> type[_Req]:  # noqa: N802 - a class
        return cast("type[_Req]", self.request.cls)

    @property
    def Response(self) -> type[_Resp]:  # noqa: N802 - a class
        return cast("type[_Resp]", self.response.cls)


def declare_api(key: int, name: str, *, versions: str, flexible: str, request: str, response: str) -> ApiSpec[Any, Any]:
    """Declare an API from its two message texts (see the module docstring for the language)."""
    vr = VersionRange.parse(versions)
    if vr is None:
        raise DeclarationError(f"{name}: an API needs at least one version")
    fr = VersionRange.parse(flexible)
    req = parse_struct(request, name + "Request", vr, where=name + "Request", flexible=fr)
    resp = parse_struct(response, name + "Response", vr, where=name + "Response", flexible=fr)
    return ApiSpec(key, name, vr, fr, req, resp)


@dataclass(eq=False)
class DataSpec(Generic[_Data]):
    """A versioned payload outside a request/response (e.g. the consumer protocol's subscription).

    Encoded as int16 version followed by the struct at that version. Generic in its message class, as
    ``ApiSpec``.
    """

    name: str
    versions: VersionRange
    flexible: VersionRange | None
    struct: StructSpec

    @property
    def cls(self) -> type[_Data]:  # generated: see ApiSpec.Request
        return cast("type[_Data]", self.struct.cls)


def declare_data(name: str, *, versions: str, flexible: str, fields: str) -> DataSpec[Any]:
    vr = VersionRange.parse(versions)
    if vr is None:
        raise DeclarationError(f"{name}: needs at least one version")
    fr = VersionRange.parse(flexible)
    return DataSpec(name, vr, fr, parse_struct(fields, name, vr, where=name, flexible=fr))


DefaultFactory = Callable[[], Any]
