"""A tiny schema type for registry tests: the text is a JSON list of field names; a name ending in ``=``
has a default. A reader is backward compatible with a writer when every reader field missing from the
writer has a default. ``normalized()`` sorts the fields. Its canonical text is the compact JSON list."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from spark_kafkalog.schemas import InvalidSchemaError, ParsedSchema, SchemaReference


class FieldListSchema(ParsedSchema):
    schema_type = "AVRO"

    def __init__(self, fields: list[str], references: tuple[SchemaReference, ...], kind: str = "AVRO") -> None:
        self.fields = fields
        self._references = references
        self.kind = kind

    @property
    def canonical(self) -> str:
        return json.dumps(self.fields, separators=(",", ":"))

    @property
    def references(self) -> tuple[SchemaReference, ...]:
        return self._references

    @property
    def name(self) -> str | None:
        return None

    def normalized(self) -> ParsedSchema:
        return FieldListSchema(sorted(self.fields), self._references)

    def is_backward_compatible(self, previous: ParsedSchema) -> list[str]:
        assert isinstance(previous, FieldListSchema)
        old = {f.rstrip("=") for f in previous.fields}
        return [f"READER_FIELD_MISSING_DEFAULT_VALUE: {f}" for f in self.fields if not f.endswith("=") and f not in old]


def parse_fields(
    schema_type: str | None,
    text: str,
    references: Sequence[SchemaReference] = (),
    resolved: Mapping[str, ParsedSchema] | None = None,
) -> ParsedSchema:
    try:
        fields = json.loads(text)
    except ValueError as e:
        raise InvalidSchemaError(f"not JSON: {e}") from None
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise InvalidSchemaError("a field-list schema is a JSON list of strings")
    missing = [r.name for r in references if r.name not in (resolved or {})]
    if missing:
        raise InvalidSchemaError(f"unresolved references {missing}")
    return FieldListSchema(fields, tuple(references))
