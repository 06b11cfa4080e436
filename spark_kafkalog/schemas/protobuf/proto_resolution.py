"""Name resolution of a parsed ``.proto`` file: type references as written become fully-qualified names.

As protoc's output (``FileDescriptor::CopyTo``): a field's type name becomes ``.pkg.Msg`` with ``type`` set to
``TYPE_MESSAGE`` or ``TYPE_ENUM``, an ``extend`` block's extendee and an rpc's input/output types become
``.pkg.Msg`` (and must be messages). Lookup is C++-like scoping over the symbols (messages, nested messages and
enums, enums, services) and package names of the file and of its dependencies (their imports transitively, public
or not): a relative name's first component is searched from the innermost scope outwards; once found as a
message the rest must be inside it; a leading ``.`` means fully qualified. Unknown names raise
``ProtoSyntaxError`` at the reference's line and column. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from google.protobuf import descriptor_pb2

from spark_kafkalog.schemas.protobuf.proto_lexer import Token, syntax_error
from spark_kafkalog.schemas.protobuf.proto_names import FDP, join_name

EXTENDEE = "\0extendee"
"""The type name of a pending reference that is the field's ``extendee`` (an ``extend`` block's message)."""

PendingField = tuple[descriptor_pb2.FieldDescriptorProto, str, Token, str]
"""A field whose type still needs resolving: (field, enclosing scope, the reference's token, type name as
written or ``EXTENDEE``)."""
PendingMethod = tuple[descriptor_pb2.MethodDescriptorProto, str, Token]
"""An rpc whose input and output types (as written) still need resolving: (method, package, the token of
its input type, where an error about either type is reported)."""


def resolve_references(
    f: descriptor_pb2.FileDescriptorProto,
    fields: Iterable[PendingField],
    methods: Iterable[PendingMethod],
    dependencies: Mapping[str, descriptor_pb2.FileDescriptorProto],
) -> None:
    """Resolve the pending references of ``f`` in place; ``dependencies`` maps import paths to files (an
    import missing from it contributes no symbols)."""
    symbols: dict[str, str] = {}
    packages: set[str] = set()
    for dep in _deps(dependencies, f.dependency):
        _collect(dep, symbols, packages)
    _collect(f, symbols, packages)
    for field, scope, tok, type_name in fields:
        if type_name == EXTENDEE:
            target = _resolve(field.extendee, scope, symbols, packages)
            if target is None or symbols[target] != "message":
                raise syntax_error(f"unknown message type {field.extendee!r} to extend", tok)
            field.extendee = "." + target
            continue
        target = _resolve(type_name, scope, symbols, packages)
        if target is None or symbols[target] == "service":
            raise syntax_error(f"unknown type {type_name!r}", tok)
        field.type = FDP.TYPE_ENUM if symbols[target] == "enum" else FDP.TYPE_MESSAGE
        field.type_name = "." + target
    for method, scope, tok in methods:
        for attr in ("input_type", "output_type"):
            target = _resolve(getattr(method, attr), scope, symbols, packages)
            if target is None or symbols[target] != "message":
                raise syntax_error(f"unknown message type {getattr(method, attr)!r} in rpc {method.name}", tok)
            setattr(method, attr, "." + target)


def _collect(f: descriptor_pb2.FileDescriptorProto, symbols: dict[str, str], packages: set[str]) -> None:
    def walk_message(m: descriptor_pb2.DescriptorProto, scope: str) -> None:
        full = join_name(scope, m.name)
        symbols[full] = "message"
        for n in m.nested_type:
            walk_message(n, full)
        for e in m.enum_type:
            symbols[join_name(full, e.name)] = "enum"

    parts = f.package.split(".") if f.package else []
    for i in range(1, len(parts) + 1):
        packages.add(".".join(parts[:i]))
    for m in f.message_type:
        walk_message(m, f.package)
    for e in f.enum_type:
        symbols[join_name(f.package, e.name)] = "enum"
    for s in f.service:
        symbols[join_name(f.package, s.name)] = "service"


def _resolve(name: str, scope: str, symbols: Mapping[str, str], packages: set[str]) -> str | None:
    if name.startswith("."):
        return name[1:] if name[1:] in symbols else None
    first = name.split(".", 1)[0]
    parts = scope.split(".") if scope else []
    for i in range(len(parts), -1, -1):
        prefix = ".".join(parts[:i])
        head = join_name(prefix, first)
        if head in symbols or head in packages:
            candidate = join_name(prefix, name)
            if candidate in symbols:
                return candidate
            if head in symbols and symbols[head] == "message":
                return None  # found the enclosing name but not the rest: protoc stops here too
    return None


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
