"""The ``_schemas`` topic's records: keys and values in Confluent Schema Registry's JSON formats.

A kafkalog registry and a Confluent one can read each other's topic. Keys are JSON objects serialized
compactly with the fields in Confluent's order, so that one logical key is always the same bytes (log
compaction keys on bytes); a null ``subject`` (the global config or mode) is left out as Confluent's
``JsonInclude.NON_EMPTY`` does (``"subject": null`` is accepted when read)::

    SCHEMA          {"keytype":"SCHEMA","subject":"s","version":1,"magic":1}
    CONFIG          {"keytype":"CONFIG","subject":"s","magic":0}       global: {"keytype":"CONFIG","magic":0}
    MODE            {"keytype":"MODE","subject":"s","magic":0}         global: {"keytype":"MODE","magic":0}
    DELETE_SUBJECT  {"keytype":"DELETE_SUBJECT","subject":"s","magic":0}
    CLEAR_SUBJECT   {"keytype":"CLEAR_SUBJECT","subject":"s","magic":0}
    NOOP            {"keytype":"NOOP","magic":0}

Values (a null value is a tombstone)::

    SCHEMA          {"subject":"s","version":1,"id":1,"schemaType":"JSON","references":[{"name","subject",
                     "version"}],"schema":"...","deleted":false}   (schemaType left out for AVRO,
                     references when there are none)
    CONFIG          {"subject":"s","compatibilityLevel":"BACKWARD","normalize":true}  (subject and normalize
                     when set)
    MODE            {"subject":"s","mode":"READONLY"}
    DELETE_SUBJECT  {"subject":"s","version":3}   every version up to 3 is soft-deleted
    CLEAR_SUBJECT   {"subject":"s"}               the subject's versions are dropped from the state

Keys of other types (Confluent's CONTEXT, ASSOC, ...) decode to ``None`` and are skipped by the replay;
so are records that are not JSON objects of these shapes (``decode_record`` returns None for them). Pure
functions and immutable values: thread-safe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from spark_kafkalog.schemas import AVRO, SchemaReference


@dataclass(frozen=True)
class SchemaKey:
    """The key of one version of a subject."""

    subject: str
    version: int


@dataclass(frozen=True)
class ConfigKey:
    """The key of a subject's compatibility config (``subject`` None: the global one)."""

    subject: str | None


@dataclass(frozen=True)
class ModeKey:
    """The key of a subject's mode (``subject`` None: the global one)."""

    subject: str | None


@dataclass(frozen=True)
class DeleteSubjectKey:
    subject: str


@dataclass(frozen=True)
class ClearSubjectKey:
    subject: str


@dataclass(frozen=True)
class NoopKey:
    pass


Key = SchemaKey | ConfigKey | ModeKey | DeleteSubjectKey | ClearSubjectKey | NoopKey


@dataclass(frozen=True)
class SchemaValue:
    """One registered version: the schema text as the registry stores it (its canonical form)."""

    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = AVRO
    references: tuple[SchemaReference, ...] = ()
    deleted: bool = False

    @property
    def content(self) -> tuple[str, str, tuple[SchemaReference, ...]]:
        """The schema's identity: equal contents are the same schema and share one id."""
        return (self.schema_type, self.schema, self.references)


@dataclass(frozen=True)
class ConfigValue:
    subject: str | None
    compatibility_level: str | None
    normalize: bool | None = None

    def to_json(self) -> dict[str, Any]:
        """The registry's answer shape (``GET /config``): compatibilityLevel and normalize when set."""
        body: dict[str, Any] = {}
        if self.compatibility_level is not None:
            body["compatibilityLevel"] = self.compatibility_level
        if self.normalize is not None:
            body["normalize"] = self.normalize
        return body


@dataclass(frozen=True)
class ModeValue:
    subject: str | None
    mode: str


@dataclass(frozen=True)
class DeleteSubjectValue:
    subject: str
    version: int


@dataclass(frozen=True)
class ClearSubjectValue:
    subject: str


@dataclass(frozen=True)
class NoopValue:
    pass


Value = SchemaValue | ConfigValue | ModeValue | DeleteSubjectValue | ClearSubjectValue | NoopValue


def _dumps(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def encode_key(key: Key) -> bytes:
    """The key's bytes: compact JSON, fields in Confluent's order (deterministic)."""
    if isinstance(key, SchemaKey):
        return _dumps({"keytype": "SCHEMA", "subject": key.subject, "version": key.version, "magic": 1})
    if isinstance(key, NoopKey):
        return _dumps({"keytype": "NOOP", "magic": 0})
    keytype = {
        ConfigKey: "CONFIG",
        ModeKey: "MODE",
        DeleteSubjectKey: "DELETE_SUBJECT",
        ClearSubjectKey: "CLEAR_SUBJECT",
    }[type(key)]
    body: dict[str, Any] = {"keytype": keytype}
    if key.subject is not None:
        body["subject"] = key.subject
    body["magic"] = 0
    return _dumps(body)


def encode_value(value: Value | None) -> bytes | None:
    """The value's bytes (None for a tombstone)."""
    if value is None:
        return None
    body: dict[str, Any]
    if isinstance(value, SchemaValue):
        body = {"subject": value.subject, "version": value.version, "id": value.id}
        if value.schema_type != AVRO:
            body["schemaType"] = value.schema_type
        if value.references:
            body["references"] = [r.to_json() for r in value.references]
        body["schema"] = value.schema
        body["deleted"] = value.deleted
    elif isinstance(value, ConfigValue):
        body = {} if value.subject is None else {"subject": value.subject}
        body.update(value.to_json())
    elif isinstance(value, ModeValue):
        body = {} if value.subject is None else {"subject": value.subject}
        body["mode"] = value.mode
    elif isinstance(value, DeleteSubjectValue):
        body = {"subject": value.subject, "version": value.version}
    elif isinstance(value, ClearSubjectValue):
        body = {"subject": value.subject}
    else:
        body = {}
    return _dumps(body)


def _loads(data: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def _str(obj: dict[str, Any], name: str) -> str:
    value = obj.get(name)
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, not {value!r}")
    return value


def _opt_str(obj: dict[str, Any], name: str) -> str | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or absent, not {value!r}")
    return value


def _int(obj: dict[str, Any], name: str) -> int:
    value = obj.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, not {value!r}")
    return value


def decode_key(data: bytes) -> Key | None:
    """The key in ``data``; None for other key types and for bytes that are not a key."""
    obj = _loads(data)
    if obj is None:
        return None
    try:
        keytype = obj.get("keytype")
        if keytype == "SCHEMA":
            return SchemaKey(_str(obj, "subject"), _int(obj, "version"))
        if keytype == "CONFIG":
            return ConfigKey(_opt_str(obj, "subject"))
        if keytype == "MODE":
            return ModeKey(_opt_str(obj, "subject"))
        if keytype == "DELETE_SUBJECT":
            return DeleteSubjectKey(_str(obj, "subject"))
        if keytype == "CLEAR_SUBJECT":
            return ClearSubjectKey(_str(obj, "subject"))
        if keytype == "NOOP":
            return NoopKey()
    except ValueError:
        return None
    return None


def decode_value(key: Key, data: bytes | None) -> Value | None:
    """The value of ``key`` in ``data`` (None: a tombstone). Raises ``ValueError`` naming the field when
    ``data`` is not a value of the key's type."""
    if data is None:
        return None
    obj = _loads(data)
    if obj is None:
        raise ValueError(f"the value of {key} is not a JSON object")
    if isinstance(key, SchemaKey):
        refs = obj.get("references") or []
        if not isinstance(refs, list):
            raise ValueError(f"references must be a list, not {refs!r}")
        try:
            references = tuple(SchemaReference.from_json(r) for r in refs)
        except ValueError as e:
            raise ValueError(str(e)) from None
        deleted = obj.get("deleted", False)
        return SchemaValue(
            subject=_str(obj, "subject") if "subject" in obj else key.subject,
            version=_int(obj, "version") if "version" in obj else key.version,
            id=_int(obj, "id"),
            schema=_str(obj, "schema"),
            schema_type=_opt_str(obj, "schemaType") or AVRO,
            references=references,
            deleted=bool(deleted),
        )
    if isinstance(key, ConfigKey):
        normalize = obj.get("normalize")
        return ConfigValue(
            _opt_str(obj, "subject") or key.subject,
            _opt_str(obj, "compatibilityLevel"),
            None if normalize is None else bool(normalize),
        )
    if isinstance(key, ModeKey):
        return ModeValue(_opt_str(obj, "subject") or key.subject, _str(obj, "mode"))
    if isinstance(key, DeleteSubjectKey):
        return DeleteSubjectValue(_opt_str(obj, "subject") or key.subject, _int(obj, "version"))
    if isinstance(key, ClearSubjectKey):
        return ClearSubjectValue(_opt_str(obj, "subject") or key.subject)
    return NoopValue()


def decode_record(key: bytes | None, value: bytes | None) -> tuple[Key, Value | None] | None:
    """A record of the topic as (key, value); None when it is not one this registry knows (skipped)."""
    if key is None:
        return None
    decoded = decode_key(key)
    if decoded is None:
        return None
    try:
        return decoded, decode_value(decoded, value)
    except ValueError:
        return None
