"""``ProtobufSchema``: a Protobuf schema of the registry, parsed from ``.proto`` text or from the base64 of a
serialized ``FileDescriptorProto`` (what confluent-kafka's ProtobufSerializer registers).

Input detection: text made only of base64 characters that decodes to a parseable FileDescriptorProto with at
least a name, package, message or enum is the serialized form; anything else is ``.proto`` text.

Dependencies: each ``import`` resolves to ``resolved[import path]`` (a ProtobufSchema, given as a registry
reference named by the import path) or to a built-in file (no reference needed, as in Confluent's registry:
protobuf's ``google/protobuf/*.proto``, ``google/type/*.proto``, ``confluent/meta.proto``,
``confluent/type/*.proto``; see ``well_known``). A missing import raises ``InvalidSchemaError``.

Forms:

- ``canonical``: the file printed by ``proto_printer.print_proto`` (fully-qualified type names, so the
  same file registered as text or as a serialized descriptor has one canonical form and one id).
- ``formatted("serialized")``: base64 of the deterministic serialization of the FileDescriptorProto (what
  confluent-kafka's deserializer asks for with ``?format=serialized``); its name is the one it was given
  (``default.proto`` for text, as confluent names the root file "default").
- ``normalized()``: Confluent's normalization: imports sorted and de-duplicated, the fields of each message
  sorted by number, oneofs ordered by their first field's number, enum values by number, reserved ranges
  by start and names alphabetically, custom (uninterpreted) options by name. Messages and enums keep their
  order, because message indexes refer to it.

Message indexes (Confluent's wire format) are positions in the descriptor: the index of a top-level message
in the file, then of each nested message in its parent's ``nested_type`` list (map entry messages count,
as confluent-kafka's Python serializer counts them).

Instances are immutable after construction (the pool is built once), safe to share between threads, and
picklable (the pool is rebuilt from the descriptor).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import DecodeError

from spark_kafkalog.schemas.parsed_schema import PROTOBUF, InvalidSchemaError, ParsedSchema, SchemaReference
from spark_kafkalog.schemas.protobuf.proto_parser import ProtoSyntaxError, parse_proto
from spark_kafkalog.schemas.protobuf.proto_printer import print_proto
from spark_kafkalog.schemas.protobuf.well_known import WELL_KNOWN

DEFAULT_FILE_NAME = "default.proto"

_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")


def _decode_serialized(text: str) -> descriptor_pb2.FileDescriptorProto | None:
    if not _BASE64.fullmatch(text):
        return None
    try:
        data = base64.b64decode("".join(text.split()), validate=True)
        fdp = descriptor_pb2.FileDescriptorProto.FromString(data)
    except (binascii.Error, ValueError, DecodeError):
        return None
    if not (fdp.name or fdp.package or fdp.message_type or fdp.enum_type):
        return None
    return fdp


class ProtobufSchema(ParsedSchema):
    """One parsed ``.proto`` file with its dependencies (see the module's docstring)."""

    schema_type = PROTOBUF

    def __init__(
        self,
        file_descriptor_proto: descriptor_pb2.FileDescriptorProto,
        references: tuple[SchemaReference, ...] = (),
        dependencies: Mapping[str, ProtobufSchema] | None = None,
    ) -> None:
        self._fdp = file_descriptor_proto
        self._references = tuple(references)
        self._dependencies = dict(dependencies or {})
        if not self._fdp.name:
            self._fdp.name = DEFAULT_FILE_NAME
        self._canonical = print_proto(self._fdp)
        self._pool = self._build_pool()

    def __reduce__(self) -> tuple[Any, ...]:
        # the pool is not picklable: rebuild from the descriptor (Spark ships schemas to its executors)
        return (_rebuild, (self._fdp.SerializeToString(deterministic=True), self._references, self._dependencies))

    # -- construction
    @classmethod
    def parse(
        cls, text: str, references: tuple[SchemaReference, ...] = (), resolved: Mapping[str, ParsedSchema] | None = None
    ) -> ProtobufSchema:
        """Parse ``.proto`` text or a base64 serialized FileDescriptorProto; ``InvalidSchemaError`` names
        what is wrong (with line and column for text)."""
        resolved = resolved or {}
        dependencies: dict[str, ProtobufSchema] = {}
        for name, schema in resolved.items():
            if isinstance(schema, ProtobufSchema):
                dependencies[name] = schema
            else:
                raise InvalidSchemaError(f"reference {name!r} is a {schema.schema_type} schema, not PROTOBUF")
        fdp = _decode_serialized(text)
        if fdp is None:
            try:
                fdp = parse_proto(text, DEFAULT_FILE_NAME, _dependency_protos(dependencies))
            except ProtoSyntaxError as e:
                raise InvalidSchemaError(f"invalid .proto schema: {e}") from None
        missing = [d for d in fdp.dependency if d not in dependencies and d not in WELL_KNOWN]
        if missing:
            raise InvalidSchemaError(f"unresolved imports {', '.join(missing)}: give each as a schema reference")
        used = {name: dependencies[name] for name in fdp.dependency if name in dependencies}
        return cls(fdp, references, used)

    def _build_pool(self) -> descriptor_pool.DescriptorPool:
        pool = descriptor_pool.DescriptorPool()
        added: set[str] = set()

        def add(name: str, fdp: descriptor_pb2.FileDescriptorProto, deps: Mapping[str, ProtobufSchema]) -> None:
            if name in added:
                return
            added.add(name)
            for dep in fdp.dependency:
                if dep in deps:
                    add(dep, deps[dep]._fdp, {**deps, **deps[dep]._dependencies})
                elif dep in WELL_KNOWN:
                    add(dep, WELL_KNOWN[dep], {})
            copy = descriptor_pb2.FileDescriptorProto()
            copy.CopyFrom(fdp)
            copy.name = name
            try:
                pool.Add(copy)
            except (TypeError, ValueError, KeyError) as e:
                raise InvalidSchemaError(f"invalid Protobuf schema {name!r}: {e}") from None

        own_name = self._fdp.name
        if own_name in self._dependencies or own_name in WELL_KNOWN:
            own_name = "__schema__/" + own_name
        add(own_name, self._fdp, self._dependencies)
        self._pool_file_name = own_name
        try:
            pool.FindFileByName(own_name)
        except KeyError as e:  # pragma: no cover - Add succeeded, so the file is there
            raise InvalidSchemaError(f"invalid Protobuf schema: {e}") from None
        return pool

    # -- ParsedSchema
    @property
    def canonical(self) -> str:
        return self._canonical

    @property
    def references(self) -> tuple[SchemaReference, ...]:
        return self._references

    @property
    def name(self) -> str | None:
        if not self._fdp.message_type:
            return None
        return _join(self._fdp.package, self._fdp.message_type[0].name)

    def normalized(self) -> ProtobufSchema:
        return ProtobufSchema(normalize_file(self._fdp), self._references, self._dependencies)

    def is_backward_compatible(self, previous: ParsedSchema) -> list[str]:
        from spark_kafkalog.schemas.protobuf.compatibility import backward_errors

        if not isinstance(previous, ProtobufSchema):
            return ["Incompatible because of different schema type"]
        return backward_errors(self, previous)

    def formatted(self, fmt: str | None = None) -> str:
        if fmt == "serialized":
            return base64.b64encode(self._fdp.SerializeToString(deterministic=True)).decode("ascii")
        return self._canonical

    # -- Protobuf specifics
    @property
    def file_descriptor_proto(self) -> descriptor_pb2.FileDescriptorProto:
        """The parsed file (shared: do not modify it)."""
        return self._fdp

    @property
    def dependencies(self) -> dict[str, ProtobufSchema]:
        """The referenced schemas this file uses, by import path (well-known types not included)."""
        return dict(self._dependencies)

    @property
    def pool(self) -> descriptor_pool.DescriptorPool:
        """A DescriptorPool holding this file and everything it imports."""
        return self._pool

    @cached_property
    def _index_paths(self) -> dict[str, tuple[int, ...]]:
        return dict(_message_paths(self._fdp))

    def message_names(self) -> list[str]:
        """The full names of the file's messages (nested ones too, map entries excluded), in declaration
        order, depth first."""
        names = []
        for full, _path in _message_paths(self._fdp):
            if not self._message_proto(_path).options.map_entry:
                names.append(full)
        return names

    def message_indexes(self, full_name: str) -> tuple[int, ...]:
        """The message indexes of ``full_name`` (with or without the package); ``KeyError`` naming it when
        the file declares no such message."""
        paths = self._index_paths
        if full_name in paths:
            return paths[full_name]
        qualified = _join(self._fdp.package, full_name)
        if qualified in paths:
            return paths[qualified]
        raise KeyError(f"no message {full_name!r} in the schema (messages: {', '.join(self.message_names())})")

    def message_descriptor(self, indexes: tuple[int, ...] | list[int] = (0,)) -> Descriptor:
        """The descriptor of the message at ``indexes`` (``()`` and ``(0,)``: the first message);
        ``KeyError`` when there is none."""
        path = tuple(indexes) or (0,)
        self._message_proto(path)  # raises KeyError naming a bad path
        names = []
        messages = self._fdp.message_type
        for i in path:
            names.append(messages[i].name)
            messages = messages[i].nested_type
        return self._pool.FindMessageTypeByName(_join(self._fdp.package, ".".join(names)))

    def _message_proto(self, path: tuple[int, ...]) -> descriptor_pb2.DescriptorProto:
        messages = self._fdp.message_type
        message = None
        for depth, i in enumerate(path):
            if not 0 <= i < len(messages):
                raise KeyError(f"no message at indexes {list(path)} (index {i} at depth {depth} is out of range)")
            message = messages[i]
            messages = message.nested_type
        if message is None:
            raise KeyError("the schema declares no message")
        return message


def _rebuild(
    serialized: bytes, references: tuple[SchemaReference, ...], dependencies: dict[str, ProtobufSchema]
) -> ProtobufSchema:
    return ProtobufSchema(descriptor_pb2.FileDescriptorProto.FromString(serialized), references, dependencies)


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def _message_paths(fdp: descriptor_pb2.FileDescriptorProto) -> Iterator[tuple[str, tuple[int, ...]]]:
    def walk(messages: Any, scope: str, path: tuple[int, ...]) -> Iterator[tuple[str, tuple[int, ...]]]:
        for i, m in enumerate(messages):
            full = _join(scope, m.name)
            yield full, (*path, i)
            yield from walk(m.nested_type, full, (*path, i))

    yield from walk(fdp.message_type, fdp.package, ())


def _dependency_protos(dependencies: Mapping[str, ProtobufSchema]) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    out = dict(WELL_KNOWN)
    for name, schema in dependencies.items():
        out.update({k: v._fdp for k, v in schema._dependencies.items()})
        out[name] = schema._fdp
    return out


def normalize_file(fdp: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """A copy of ``fdp`` in Confluent's normalized order (see the module's docstring)."""
    out = descriptor_pb2.FileDescriptorProto()
    out.CopyFrom(fdp)
    deps = list(fdp.dependency)
    public = {deps[i] for i in fdp.public_dependency}
    weak = {deps[i] for i in fdp.weak_dependency}
    ordered = sorted(set(deps))
    del out.dependency[:]
    out.dependency.extend(ordered)
    del out.public_dependency[:]
    out.public_dependency.extend(i for i, d in enumerate(ordered) if d in public)
    del out.weak_dependency[:]
    out.weak_dependency.extend(i for i, d in enumerate(ordered) if d in weak)
    _sort_options(out.options)
    for m in out.message_type:
        _normalize_message(m)
    for e in out.enum_type:
        _normalize_enum(e)
    for s in out.service:
        _sort_options(s.options)
    return out


def _sort_options(options: object) -> None:
    uninterpreted = options.uninterpreted_option  # type: ignore[attr-defined]
    if len(uninterpreted) > 1:
        items = sorted(uninterpreted, key=lambda uo: [(p.name_part, p.is_extension) for p in uo.name])
        copies = [type(uo)() for uo in items]
        for copy, uo in zip(copies, items):
            copy.CopyFrom(uo)
        del uninterpreted[:]
        uninterpreted.extend(copies)


def _normalize_message(m: descriptor_pb2.DescriptorProto) -> None:
    fields = sorted(m.field, key=lambda f: f.number)
    copies = []
    for f in fields:
        c = descriptor_pb2.FieldDescriptorProto()
        c.CopyFrom(f)
        copies.append(c)
    # oneofs ordered by their first field's number; synthetic ones (proto3 optional) stay after the real ones
    real = [i for i, _ in enumerate(m.oneof_decl) if not any(f.proto3_optional and f.oneof_index == i for f in copies)]
    synthetic = [i for i in range(len(m.oneof_decl)) if i not in real]

    def first_number(index: int) -> int:
        return min((f.number for f in copies if f.HasField("oneof_index") and f.oneof_index == index), default=1 << 30)

    order = sorted(real, key=first_number) + sorted(synthetic, key=first_number)
    remap = {old: new for new, old in enumerate(order)}
    oneofs = []
    for old in order:
        o = descriptor_pb2.OneofDescriptorProto()
        o.CopyFrom(m.oneof_decl[old])
        oneofs.append(o)
    for c in copies:
        if c.HasField("oneof_index"):
            c.oneof_index = remap[c.oneof_index]
        if c.HasField("options"):
            _sort_options(c.options)
    del m.field[:]
    m.field.extend(copies)
    del m.oneof_decl[:]
    m.oneof_decl.extend(oneofs)
    ranges = sorted((r.start, r.end) for r in m.reserved_range)
    del m.reserved_range[:]
    for start, end in ranges:
        m.reserved_range.add(start=start, end=end)
    names = sorted(m.reserved_name)
    del m.reserved_name[:]
    m.reserved_name.extend(names)
    _sort_options(m.options)
    for n in m.nested_type:
        _normalize_message(n)
    for e in m.enum_type:
        _normalize_enum(e)


def _normalize_enum(e: descriptor_pb2.EnumDescriptorProto) -> None:
    values = []
    for v in sorted(e.value, key=lambda v: (v.number, v.name)):
        c = descriptor_pb2.EnumValueDescriptorProto()
        c.CopyFrom(v)
        values.append(c)
    del e.value[:]
    e.value.extend(values)
    ranges = sorted((r.start, r.end) for r in e.reserved_range)
    del e.reserved_range[:]
    for start, end in ranges:
        e.reserved_range.add(start=start, end=end)
    names = sorted(e.reserved_name)
    del e.reserved_name[:]
    e.reserved_name.extend(names)
    _sort_options(e.options)
