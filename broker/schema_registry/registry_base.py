"""``RegistryBase``: what the parts of ``SchemaRegistry`` share: its fields, the bounded access to the
``_schemas`` log, parsing (references resolved from the registered versions, results cached), the scopes of
the settings (the subject's, else the global one), version look-up and the compatibility check in Confluent's
manner.

``SchemaRegistry`` (``registry``) sets the fields and puts the parts together: ``registry_reads`` (the
queries), ``registry_registration`` (registering, id allocation and the multi-instance repair),
``registry_deletes`` (soft and permanent deletes) and ``registry_settings`` (config and mode).

The log: ``_sync`` catches the store's state up to the log end; ``_append`` writes one record and returns
once the store has applied it. Both are bounded by ``timeout_s`` (50002 when it runs out; other store failures
are 50001). Every write holds ``_write_lock`` (one write at a time per instance) from its catch-up to its last
append.

Concurrency: all coroutines run on one event loop (the broker's); not thread-safe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

from broker.schema_registry import errors
from broker.schema_registry.model import RegisteredSchema
from broker.schema_registry.records import Key, SchemaValue, Value
from broker.schema_registry.state import Content, RegistryState
from broker.schema_registry.store import SchemaStore, StoreError, StoreTimeoutError
from spark_kafkalog.schemas import InvalidSchemaError, ParsedSchema, SchemaReference, compatibility_errors
from spark_kafkalog.schemas.providers import schema_type_of

T = TypeVar("T")

MAX_VERSION = 2**31 - 1
DEFAULT_CONTEXT = "."
"""The registry's only context (Confluent's default context), named in its error messages."""
_PARSE_CACHE_LIMIT = 10_000
_MAX_LOGGED_SCHEMA = 10 * 1024

Parser = Callable[[str | None, str, Sequence[SchemaReference], Mapping[str, ParsedSchema]], ParsedSchema]


def parse_version(version: int | str) -> int | None:
    """A version path parameter: an int in [1, 2^31-1], or None for "latest" / -1; 42202 otherwise."""
    if isinstance(version, str):
        text = version.strip()
        if text.lower() == "latest":
            return None
        try:
            number = int(text)
        except ValueError:
            raise errors.invalid_version(version) from None
    elif isinstance(version, bool) or not isinstance(version, int):
        raise errors.invalid_version(version)
    else:
        number = version
    if number == -1:
        return None
    if not 1 <= number <= MAX_VERSION:
        raise errors.invalid_version(version)
    return number


class RegistryBase:
    """The fields ``SchemaRegistry.__init__`` sets that the parts use, and the helpers they all call."""

    default_compatibility: str
    """The level of a subject without one when no global one is set (upper case)."""
    mode_mutability: bool
    timeout_s: float
    _store: SchemaStore
    _parser: Parser
    _write_lock: asyncio.Lock
    _parsed: dict[Content, ParsedSchema]

    @property
    def state(self) -> RegistryState:
        return self._store.state

    # -- the log ---------------------------------------------------------------------------------------

    async def _guard(self, work: Awaitable[T]) -> T:
        try:
            return await asyncio.wait_for(work, self.timeout_s)
        except (TimeoutError, StoreTimeoutError) as e:
            raise errors.operation_timeout(str(e) or "the schemas log did not answer in time") from None
        except StoreError as e:
            raise errors.store_error(str(e)) from None

    async def _sync(self) -> None:
        await self._guard(self._store.sync())

    async def _append(self, key: Key, value: Value | None) -> None:
        await self._guard(self._store.append(key, value))

    # -- parsing -----------------------------------------------------------------------------------------

    def _parse(
        self, schema_type: str | None, text: str, references: Sequence[SchemaReference], depth: int = 0
    ) -> ParsedSchema:
        try:
            kind = schema_type_of(schema_type)
        except InvalidSchemaError as e:
            raise errors.invalid_schema(str(e)) from None
        content: Content = (kind, text, tuple(references))
        cached = self._parsed.get(content)
        if cached is not None:
            return cached
        if depth > 32:
            raise errors.invalid_schema("references nest more than 32 levels deep")
        resolved: dict[str, ParsedSchema] = {}
        for ref in references:
            entry = self.state.subjects.get(ref.subject, {}).get(ref.version)
            if entry is None:
                raise errors.invalid_schema(
                    f"reference {ref.name!r}: subject {ref.subject!r} version {ref.version} not found"
                )
            resolved[ref.name] = self._parse(entry.schema_type, entry.schema, entry.references, depth + 1)
        try:
            parsed = self._parser(kind, text, tuple(references), resolved)
        except InvalidSchemaError as e:
            raise errors.invalid_schema(str(e)) from None
        if len(self._parsed) >= _PARSE_CACHE_LIMIT:
            self._parsed.clear()
        self._parsed[content] = parsed
        return parsed

    def _parsed_entry(self, entry: SchemaValue) -> ParsedSchema:
        return self._parse(entry.schema_type, entry.schema, entry.references)

    def _registered(self, entry: SchemaValue) -> RegisteredSchema:
        return RegisteredSchema(entry.subject, entry.version, entry.id, self._parsed_entry(entry), entry.deleted)

    # -- scopes ------------------------------------------------------------------------------------------

    def _level_in_scope(self, subject: str) -> str:
        for scope in (subject, None):
            config = self.state.configs.get(scope)
            if config is not None and config.compatibility_level:
                return config.compatibility_level.upper()
        return self.default_compatibility

    def _normalize_in_scope(self, subject: str) -> bool:
        for scope in (subject, None):
            config = self.state.configs.get(scope)
            if config is not None and config.normalize is not None:
                return config.normalize
        return False

    def _mode_in_scope(self, subject: str | None) -> str:
        if subject is not None and subject in self.state.modes:
            return self.state.modes[subject]
        return self.state.modes.get(None, "READWRITE")

    def _check_writable(self, subject: str) -> None:
        if self._mode_in_scope(subject) in ("READONLY", "READONLY_OVERRIDE"):
            raise errors.operation_not_permitted(f"Subject {subject} in context {DEFAULT_CONTEXT} is in read-only mode")

    def _has_subject(self, subject: str, *, deleted: bool) -> bool:
        return bool(self.state.versions_of(subject, deleted=deleted))

    def _entry(self, subject: str, version: int | str, *, deleted: bool) -> SchemaValue:
        number = parse_version(version)
        if number is None:
            live = self.state.versions_of(subject)
            if not live:
                if self._has_subject(subject, deleted=deleted):
                    raise errors.version_not_found(-1)  # Confluent's id of "latest"
                raise errors.subject_not_found(subject)
            return live[-1]
        entry = self.state.subjects.get(subject, {}).get(number)
        if entry is None or (entry.deleted and not deleted):
            if not self._has_subject(subject, deleted=deleted):
                raise errors.subject_not_found(subject)
            raise errors.version_not_found(number)
        return entry

    # -- compatibility -----------------------------------------------------------------------------------

    def _compatibility_messages(self, subject: str, new: ParsedSchema, previous: Sequence[SchemaValue]) -> list[str]:
        """Why ``new`` may not follow the live ``previous`` versions (oldest first) at the subject's level,
        in Confluent's manner: versions are checked newest first and the first incompatible one answers,
        its reasons followed by ``{oldSchemaVersion: n}``, ``{oldSchema: '...'}`` (cut at 10 KiB) and
        ``{validateFields: 'false', compatibility: 'L'}``; empty when compatible."""
        level = self._level_in_scope(subject)
        if level == "NONE" or not previous:
            return []
        base = level.removesuffix("_TRANSITIVE")
        against = previous if level.endswith("_TRANSITIVE") else previous[-1:]
        for old in reversed(against):
            old_parsed = self._parsed_entry(old)
            if old_parsed.schema_type != new.schema_type:
                found = ["Incompatible because of different schema type"]
            else:
                found = compatibility_errors(new, [old_parsed], base)
            if found:
                text = old_parsed.canonical
                shown = (
                    f"'{text}'" if len(text) <= _MAX_LOGGED_SCHEMA else f"<truncated> '{text[:_MAX_LOGGED_SCHEMA]}...'"
                )
                return [
                    *found,
                    f"{{oldSchemaVersion: {old.version}}}",
                    f"{{oldSchema: {shown}}}",
                    f"{{validateFields: 'false', compatibility: '{level}'}}",
                ]
        return []
