"""``JsonSchema``: a JSON Schema document as Confluent Schema Registry stores and compares it.

Parsing: the text is a JSON object or boolean, checked against the meta-schema of the draft its ``$schema``
names (absent: draft-07, Confluent's default; draft-04/06, 2019-09 and 2020-12 are known too) with
``jsonschema``; a schema that is not JSON or not valid for its draft raises ``InvalidSchemaError``.

References: ``resolved`` maps each reference's ``name`` (a ``$ref`` URL such as ``"address.json"``) to the
referenced ``JsonSchema``. Those documents (and theirs, recursively) become resources of a ``referencing``
registry under their names (and, when the document has an ``$id``, under the name resolved against it), so
validation, the Arrow type derivation and the compatibility check follow ``$ref`` into them as they follow
local ``#/definitions/...`` and ``#/$defs/...`` pointers.

Forms:

- ``canonical``: the document as compact JSON in its own key order (``{"type":"object","properties":...}``,
  no spaces, non-ASCII kept), as Jackson prints what Confluent's registry parsed.
- ``normalized()``: Confluent's ``JsonSchema.normalize``: every object's keys sorted, recursively, and the
  references sorted by (name, subject, version) without duplicates.
- ``name``: the top-level ``title`` (what RecordNameStrategy uses), None without one.

Immutable and thread-safe (the validator is built once, on first use, under the GIL; building it twice is
harmless).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

import jsonschema
import referencing
import referencing.jsonschema
from jsonschema.exceptions import SchemaError
from referencing._core import Resolver
from referencing.exceptions import Unresolvable

from spark_kafkalog.schemas.json_schema.compatibility import backward_errors
from spark_kafkalog.schemas.json_schema.walk import compact_json
from spark_kafkalog.schemas.parsed_schema import JSON, InvalidSchemaError, ParsedSchema, SchemaReference

DEFAULT_DIALECT = "http://json-schema.org/draft-07/schema#"
"""The draft of a schema without ``$schema`` (Confluent's default)."""


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    return value


class JsonSchema(ParsedSchema):
    """A parsed JSON Schema (see the module's docstring)."""

    schema_type = JSON

    def __init__(
        self,
        document: dict[str, Any] | bool,
        references: tuple[SchemaReference, ...] = (),
        resolved: Mapping[str, JsonSchema] | None = None,
    ) -> None:
        if not isinstance(document, dict | bool):
            raise InvalidSchemaError(f"a JSON Schema is an object or a boolean, not {type(document).__name__}")
        self._document = document
        self._references = tuple(references)
        self._resolved = dict(resolved or {})
        self._canonical = compact_json(document)
        dialect = document.get("$schema", DEFAULT_DIALECT) if isinstance(document, dict) else DEFAULT_DIALECT
        if not isinstance(dialect, str):
            raise InvalidSchemaError(f"$schema must be a string URI, not {dialect!r}")
        self._validator_class = jsonschema.validators.validator_for({"$schema": dialect}, default=None)
        if self._validator_class is None:
            raise InvalidSchemaError(
                f"unknown JSON Schema draft {dialect!r} ($schema): draft-04, draft-06, draft-07, 2019-09 or 2020-12"
            )
        try:
            self._validator_class.check_schema(document)
        except SchemaError as e:
            where = "/".join(str(p) for p in e.absolute_path)
            raise InvalidSchemaError(
                f"invalid JSON Schema at '#/{where}': {e.message} (checked against {dialect})"
            ) from None
        self._specification = referencing.jsonschema.specification_with(dialect, default=referencing.jsonschema.DRAFT7)
        self._registry = self._build_registry()
        self._validator: Any = None

    def _build_registry(self) -> referencing.Registry[Any]:
        resources: dict[str, referencing.Resource[Any]] = {}
        own_id = self._document.get("$id") if isinstance(self._document, dict) else None
        for name, other in self._resolved.items():
            for uri, resource in other._resources().items():
                if uri:  # a referenced document without $id is known by its reference name only
                    resources.setdefault(uri, resource)
            resource = other._specification.create_resource(other._document)
            resources[name] = resource
            if isinstance(own_id, str):
                resources.setdefault(urljoin(own_id, name), resource)
        resources[self.base_uri] = self._specification.create_resource(self._document)
        return referencing.Registry().with_resources(resources.items())

    def _resources(self) -> dict[str, referencing.Resource[Any]]:
        return {uri: self._registry[uri] for uri in self._registry}

    @property
    def base_uri(self) -> str:
        """The document's ``$id`` (absolute or not), or ``""``: where its ``$ref`` values resolve from."""
        own_id = self._document.get("$id") if isinstance(self._document, dict) else None
        return own_id if isinstance(own_id, str) else ""

    @property
    def document(self) -> dict[str, Any] | bool:
        """The parsed document (do not mutate it)."""
        return self._document

    @property
    def canonical(self) -> str:
        return self._canonical

    @property
    def references(self) -> tuple[SchemaReference, ...]:
        return self._references

    @property
    def resolved(self) -> dict[str, JsonSchema]:
        """The referenced schemas by reference name, as given to the constructor."""
        return dict(self._resolved)

    @property
    def name(self) -> str | None:
        title = self._document.get("title") if isinstance(self._document, dict) else None
        return title if isinstance(title, str) else None

    def resolver(self) -> Resolver[Any]:
        """A ``referencing`` resolver at the document's root (``$ref`` lookups follow references)."""
        return self._registry.resolver(self.base_uri)

    def normalized(self) -> JsonSchema:
        refs = tuple(sorted(set(self._references), key=lambda r: (r.name, r.subject, r.version)))
        return JsonSchema(_sorted_keys(self._document), refs, self._resolved)

    def is_backward_compatible(self, previous: ParsedSchema) -> list[str]:
        return backward_errors(self, previous)

    def _get_validator(self) -> Any:
        if self._validator is None:
            self._validator = self._validator_class(
                self._document,
                registry=self._registry,
                format_checker=self._validator_class.FORMAT_CHECKER,
            )
        return self._validator

    def validate(self, instance: Any) -> None:
        """Raise ``ValueError`` naming the JSON path of the first place ``instance`` breaks the schema (and the
        broken rule); a ``$ref`` that cannot be resolved raises ``ValueError`` naming it."""
        try:
            error = jsonschema.exceptions.best_match(self._get_validator().iter_errors(instance))
        except Unresolvable as e:
            raise ValueError(f"unresolvable $ref in the schema: {e}") from None
        if error is not None:
            raise ValueError(f"{error.json_path}: {error.message}")

    def is_valid(self, instance: Any) -> bool:
        try:
            return bool(self._get_validator().is_valid(instance))
        except Unresolvable:
            return False


def parse(text: str, references: tuple[SchemaReference, ...], resolved: Mapping[str, ParsedSchema]) -> JsonSchema:
    """Parse JSON Schema ``text`` whose ``references`` are in ``resolved`` (by reference name); see the module's
    docstring. Anything wrong raises ``InvalidSchemaError`` naming it."""
    try:
        document = json.loads(text)
    except (TypeError, ValueError) as e:
        raise InvalidSchemaError(f"a JSON Schema must be JSON: {e}") from None
    others: dict[str, JsonSchema] = {}
    for ref in references:
        other = resolved.get(ref.name)
        if not isinstance(other, JsonSchema):
            kind = "missing" if other is None else f"a {other.schema_type} schema"
            raise InvalidSchemaError(f"reference {ref.name!r} ({ref.subject} version {ref.version}) is {kind}")
        others[ref.name] = other
    return JsonSchema(document, tuple(references), others)
