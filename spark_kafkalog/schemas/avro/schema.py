"""``AvroSchema``: an Avro schema parsed with fastavro, printed as Avro Java's ``Schema.toString()`` prints it.

Parsing: the JSON text (a record, any other complex type, a union list or a bare primitive such as
``"string"``) is validated by ``fastavro.parse_schema`` plus the checks fastavro leaves out (names, duplicate
fields and enum symbols, fixed sizes). References: each referenced ``AvroSchema``'s named types (and those of
its own references) are visible to the schema by their full names, as Confluent's parser sees them.

Canonical form (what the registry stores and compares; Confluent's ``AvroSchema.canonicalString()``, i.e.
Avro's ``Schema.toString(referencedSchemas, false)``), compact JSON with attributes in Avro Java's order:

==========  ==================================================================================
type        attributes, in order
==========  ==================================================================================
primitive   ``"int"``; with properties ``{"type":"int",<props>}`` (``logicalType`` is a property)
record      type, name, namespace, doc, fields, <props>, aliases
field       name, type, doc, default, order (unless ascending), aliases, <props>
enum        type, name, namespace, doc, symbols, default, <props>, aliases
fixed       type, name, namespace, doc, size, <props>, aliases
array/map   type, items / values, <props>
union       the list of its branches
==========  ==================================================================================

``namespace`` appears only where it differs from the enclosing one (``""`` to leave a namespace); a named
type is defined where it is first met and referred to by name afterwards (by its short name within its own
namespace); types of referenced schemas are referred to by name. Properties keep their order; the reserved
attributes Avro Java drops for a type (e.g. ``doc`` of a primitive) are dropped.

Normalized form (``normalized()``, what ``normalize=true`` registers): the canonical printing with every
name fully qualified (no ``namespace`` attribute, references by full name), aliases fully qualified and
sorted, properties sorted by key; field order, defaults and docs stay (they matter to readers).

Instances are immutable and thread-safe.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import fastavro

from spark_kafkalog.schemas.avro.names import PRIMITIVES, split_name
from spark_kafkalog.schemas.parsed_schema import AVRO, InvalidSchemaError, ParsedSchema, SchemaReference

NAMED = frozenset({"record", "error", "enum", "fixed"})
_SCHEMA_RESERVED = frozenset(
    {"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"}
)
_ENUM_RESERVED = _SCHEMA_RESERVED | {"default"}
_FIELD_RESERVED = frozenset({"default", "doc", "name", "order", "type", "aliases"})
_FASTAVRO_KEYS = frozenset({"__fastavro_parsed", "__named_schemas"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def qualify(name: str, space: str) -> str:
    """The full name of ``name`` written inside namespace ``space`` (a dotted name is already full)."""
    return name if "." in name or not space else f"{space}.{name}"


def relative(full: str, space: str) -> str:
    """How Avro Java writes a reference to ``full`` inside namespace ``space`` (``Name.getQualified``)."""
    own, short = split_name(full)
    return short if own == space or not own else full


class AvroSchema(ParsedSchema):
    """One Avro schema; ``schema_json`` is the JSON as given, ``fastavro_schema`` the parsed form fastavro's
    ``schemaless_reader``/``schemaless_writer`` take (its ``__named_schemas`` hold the referenced types too)."""

    schema_type = AVRO

    def __init__(
        self,
        schema_json: Any,
        references: tuple[SchemaReference, ...] = (),
        resolved: Mapping[str, ParsedSchema] | None = None,
        *,
        normalize: bool = False,
    ) -> None:
        self._json = schema_json
        self._references = tuple(references)
        self._resolved = dict(resolved or {})
        # Named types of the referenced schemas (transitively): full name -> fastavro definition.
        seed: dict[str, Any] = {}
        self._referenced_names: list[str] = []
        for reference in self._references:
            other = self._resolved.get(reference.name)
            if not isinstance(other, AvroSchema):
                kind = "missing" if other is None else f"a {other.schema_type} schema"
                raise InvalidSchemaError(f"Avro reference {reference.name!r} ({reference.subject}) is {kind}")
            seed.update(other.named_types)
            for name in [*other._referenced_names, *other.defined_names]:
                if name not in self._referenced_names:
                    self._referenced_names.append(name)
        try:
            _check(schema_json, "", set(seed))
            named = dict(seed)
            self._parsed = fastavro.parse_schema(_inherit_null_namespaces(schema_json), named_schemas=named)
        except InvalidSchemaError:
            raise
        except Exception as e:  # fastavro raises SchemaParseException, UnknownType, ValueError, TypeError ...
            raise InvalidSchemaError(f"Invalid Avro schema: {type(e).__name__}: {e}") from None
        self._named: dict[str, Any] = named
        self._own_names = [n for n in named if n not in seed]
        self._normalize = normalize
        self._canonical = _Printer(known=self._referenced_names, normalize=normalize).text(self._parsed)

    # -- ParsedSchema ---------------------------------------------------------------------------------
    @property
    def canonical(self) -> str:
        return self._canonical

    @property
    def references(self) -> tuple[SchemaReference, ...]:
        return self._references

    @property
    def name(self) -> str | None:
        """The full name of a record schema (None for other types)."""
        top = self.definition(self._parsed)
        if isinstance(top, dict) and top.get("type") in ("record", "error"):
            return str(top["name"])
        return None

    def normalized(self) -> AvroSchema:
        if self._normalize:
            return self
        return AvroSchema(self._json, self._references, self._resolved, normalize=True)

    def is_backward_compatible(self, previous: ParsedSchema) -> list[str]:
        from spark_kafkalog.schemas.avro.compatibility import incompatibilities

        if not isinstance(previous, AvroSchema):
            return [f"Incompatible because of different schema type: {previous.schema_type} -> {AVRO}"]
        return [str(i) for i in incompatibilities(self, previous)]

    def formatted(self, fmt: str | None = None) -> str:
        """``resolved``: the canonical form with the referenced types defined inline where first used."""
        if fmt == "resolved":
            return _Printer(named=self._named, normalize=self._normalize).text(self._parsed)
        return self._canonical

    # -- Avro specifics -------------------------------------------------------------------------------
    @property
    def schema_json(self) -> Any:
        """The schema's JSON as given (dict, list or str)."""
        return self._json

    @property
    def fastavro_schema(self) -> Any:
        """The fastavro-parsed schema, full names everywhere, referenced types included."""
        return self._parsed

    @property
    def named_types(self) -> dict[str, Any]:
        """Every named type visible to this schema (its own and the referenced ones): full name -> definition."""
        return dict(self._named)

    @property
    def defined_names(self) -> list[str]:
        """The full names of the named types this schema defines itself, in order of definition."""
        return list(self._own_names)

    def definition(self, node: Any) -> Any:
        """``node`` with a name reference replaced by the named type's definition (else ``node``)."""
        if isinstance(node, str) and node not in PRIMITIVES:
            return self._named.get(node, node)
        return node


def parse(text: str, references: tuple[SchemaReference, ...], resolved: dict[str, ParsedSchema]) -> AvroSchema:
    """Parse Avro JSON text (see the module's docstring); ``InvalidSchemaError`` names what is wrong."""
    try:
        schema_json = json.loads(text)
    except (TypeError, ValueError) as e:
        raise InvalidSchemaError(f"Invalid Avro schema: not JSON: {e}") from None
    return AvroSchema(schema_json, references, resolved)


# -- validation fastavro leaves out -------------------------------------------------------------------


def _check_name(name: Any, what: str) -> None:
    if not isinstance(name, str) or not all(_NAME.fullmatch(part) for part in name.split(".")):
        raise InvalidSchemaError(f"Invalid Avro schema: illegal {what} name {name!r}")


def _inherit_null_namespaces(node: Any) -> Any:
    """A copy without ``"namespace": null`` in schema positions (Avro Java inherits the enclosing namespace
    there; fastavro would take it as the null namespace). Defaults and other properties are left alone."""
    if isinstance(node, list):
        return [_inherit_null_namespaces(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if not (k == "namespace" and v is None)}
    for key in ("type", "items", "values"):
        if key in out:
            out[key] = _inherit_null_namespaces(out[key])
    if isinstance(out.get("fields"), list):
        out["fields"] = [
            {**f, "type": _inherit_null_namespaces(f["type"])} if isinstance(f, dict) and "type" in f else f
            for f in out["fields"]
        ]
    return out


def _union_key(branch: Any, space: str) -> str:
    """What tells union branches apart: a named type's full name, any other type's kind."""
    if isinstance(branch, dict):
        kind = branch.get("type")
        if kind in NAMED and isinstance(branch.get("name"), str):
            namespace = branch.get("namespace")
            return qualify(branch["name"], namespace if isinstance(namespace, str) else space)
        return kind if isinstance(kind, str) and (kind in PRIMITIVES or kind in ("array", "map")) else str(kind)
    if isinstance(branch, str) and branch not in PRIMITIVES:
        return qualify(branch, space)
    return str(branch)


def _check(node: Any, space: str, seen: set[str]) -> None:
    """Names, duplicate fields and symbols, fixed sizes; recursion over the whole schema JSON."""
    if isinstance(node, list):
        kinds: set[str] = set()
        for branch in node:
            if isinstance(branch, list):
                raise InvalidSchemaError("Invalid Avro schema: a union may not immediately contain a union")
            _check(branch, space, seen)
            key = _union_key(branch, space)
            if key in kinds:
                raise InvalidSchemaError(f"Invalid Avro schema: duplicate in union: {key}")
            kinds.add(key)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if isinstance(kind, (dict, list)):
        _check(kind, space, seen)
        return
    if kind in NAMED:
        if "name" not in node:
            raise InvalidSchemaError(f"Invalid Avro schema: a {kind} needs a name: {json.dumps(node)[:200]}")
        _check_name(node["name"], kind)
        namespace = node.get("namespace")
        if namespace not in (None, "") and not isinstance(namespace, str):
            raise InvalidSchemaError(f"Invalid Avro schema: namespace must be a string, not {namespace!r}")
        full = qualify(node["name"], namespace if isinstance(namespace, str) else space)
        if full in seen:
            raise InvalidSchemaError(f"Invalid Avro schema: can't redefine: {full}")
        seen.add(full)
        inner = split_name(full)[0]
        if kind in ("record", "error"):
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise InvalidSchemaError(f"Invalid Avro schema: record {full} needs a list of fields")
            names: set[str] = set()
            for field in fields:
                if not isinstance(field, dict) or "type" not in field:
                    raise InvalidSchemaError(f"Invalid Avro schema: field without a type in record {full}")
                _check_name(field.get("name"), "field")
                if field["name"] in names:
                    raise InvalidSchemaError(f"Invalid Avro schema: duplicate field {field['name']} in record {full}")
                names.add(field["name"])
                _check(field["type"], inner, seen)
        elif kind == "enum":
            symbols = node.get("symbols")
            if not isinstance(symbols, list):
                raise InvalidSchemaError(f"Invalid Avro schema: enum {full} needs a list of symbols")
            for symbol in symbols:
                _check_name(symbol, "enum symbol")
            if len(set(symbols)) != len(symbols):
                raise InvalidSchemaError(f"Invalid Avro schema: duplicate enum symbol in {full}: {symbols}")
        elif kind == "fixed":
            size = node.get("size")
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise InvalidSchemaError(f"Invalid Avro schema: fixed {full} needs a non-negative integer size")
    elif kind == "array":
        _check(node.get("items"), space, seen)
    elif kind == "map":
        _check(node.get("values"), space, seen)


# -- printing -----------------------------------------------------------------------------------------


class _Printer:
    """Prints a fastavro-parsed schema as Avro Java does (module docstring). ``known``: names printed as
    references from the start (the referenced schemas' types); ``named``: definitions to inline for names
    not yet printed (the ``resolved`` format)."""

    def __init__(self, known: Any = (), named: Mapping[str, Any] | None = None, normalize: bool = False) -> None:
        self._known: set[str] = set(known)
        self._named = named or {}
        self._normalize = normalize

    def text(self, parsed: Any) -> str:
        return json.dumps(self._node(parsed, ""), separators=(",", ":"), ensure_ascii=False)

    def _props(self, node: Mapping[str, Any], reserved: frozenset[str]) -> list[tuple[str, Any]]:
        props = [(k, v) for k, v in node.items() if k not in reserved and k not in _FASTAVRO_KEYS]
        return sorted(props) if self._normalize else props

    def _ref(self, full: str, space: str) -> str:
        return full if self._normalize else relative(full, space)

    def _node(self, node: Any, space: str) -> Any:
        if isinstance(node, list):
            return [self._node(branch, space) for branch in node]
        if isinstance(node, str):
            if node in PRIMITIVES:
                return node
            if node not in self._known and node in self._named:
                return self._node(self._named[node], space)
            return self._ref(node, space)
        kind = node["type"]
        if not isinstance(kind, str):
            return self._node(kind, space)
        if kind in PRIMITIVES:
            props = self._props(node, _SCHEMA_RESERVED)
            return {"type": kind, **dict(props)} if props else kind
        if kind == "array":
            return {
                "type": kind,
                "items": self._node(node["items"], space),
                **dict(self._props(node, _SCHEMA_RESERVED)),
            }
        if kind == "map":
            return {
                "type": kind,
                "values": self._node(node["values"], space),
                **dict(self._props(node, _SCHEMA_RESERVED)),
            }
        if kind not in NAMED:  # {"type": "some.Name"}
            return self._node(kind, space)
        full = node["name"]
        if full in self._known:
            return self._ref(full, space)
        self._known.add(full)
        own = split_name(full)[0]
        out: dict[str, Any] = {"type": kind}
        if self._normalize:
            out["name"] = full
        else:
            out["name"] = split_name(full)[1]
            if own != space:
                out["namespace"] = own
        if "doc" in node:
            out["doc"] = node["doc"]
        if kind in ("record", "error"):
            out["fields"] = [self._field(field, own) for field in node["fields"]]
            out.update(self._props(node, _SCHEMA_RESERVED))
        elif kind == "enum":
            out["symbols"] = list(node["symbols"])
            if node.get("default") is not None:
                out["default"] = node["default"]
            out.update(self._props(node, _ENUM_RESERVED))
        else:
            out["size"] = node["size"]
            out.update(self._props(node, _SCHEMA_RESERVED))
        aliases = node.get("aliases")
        if aliases:
            full_aliases = [qualify(alias, own) for alias in aliases]
            out["aliases"] = sorted(full_aliases) if self._normalize else [relative(a, own) for a in full_aliases]
        return out

    def _field(self, field: Mapping[str, Any], space: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": field["name"], "type": self._node(field["type"], space)}
        if "doc" in field:
            out["doc"] = field["doc"]
        if "default" in field:
            out["default"] = field["default"]
        if field.get("order", "ascending") != "ascending":
            out["order"] = field["order"]
        if field.get("aliases"):
            out["aliases"] = sorted(field["aliases"]) if self._normalize else list(field["aliases"])
        out.update(self._props(field, _FIELD_RESERVED))
        return out
