"""``SchemaRegistry``: Confluent Schema Registry's operations over a ``SchemaStore``, with Confluent's semantics
and error codes (``RegistryError``).

Semantics (Confluent's):

- Registering a schema already live in the subject answers its existing version and id; a schema
  registered elsewhere (any subject, even soft-deleted or permanently deleted) gets its existing id. New
  versions number one above the subject's highest version still stored (soft-deleted ones count;
  permanently deleted ones do not). Registration checks compatibility against the live versions at the
  subject's level (subject config, else global, else the default) and refuses with 409 and the reasons
  plus Confluent's context lines (``{oldSchemaVersion: n}``, ``{oldSchema: '...'}``,
  ``{validateFields: 'false', compatibility: 'L'}``). Re-registering a schema whose older soft-deleted
  versions hold the same id tombstones those (unless referenced), as Confluent does.
- Modes: READONLY and READONLY_OVERRIDE refuse writes (42205); IMPORT accepts registrations with an
  explicit id and version and skips compatibility; READWRITE refuses explicit ids.
- "latest" (or -1) is the newest live version. Soft-deleted versions are seen only with ``deleted=True``;
  a permanent delete needs a soft delete first (40405/40407); a version referenced by another schema
  cannot be deleted (42206).
- Stored schema text is the parsed schema's ``canonical`` form (``normalized()`` first when the request or
  the subject's config asks to normalize).

Writes with several registry instances on one ``_schemas`` topic (no leader): one write at a time per
instance (a lock). A registration catches up to the log end, proposes max id + 1 (or the schema's existing
id) and the next version, appends, and reads back (``append`` returns once the record is applied). The
replay keeps the first record binding an id or a (subject, version) and ignores later conflicting ones
(``state``), so every instance agrees. When our record was ignored, another instance won, and we retry
from the catch-up (at most ``MAX_ATTEMPTS`` times, then 50001); the loser must not be the last record of
its key, or compaction would turn it into a registration. If another schema holds the key, we re-append
that schema's record at once. If the key is unbound (we lost the id to another key), the retry usually
writes the same key again, superseding the loser; when the registration ends elsewhere (or fails), a
tombstone goes to each such key still unbound. Both repairs are decided right after catching up to the log
end: a write by another instance to the same key between that catch-up and the repair record could be
overwritten (a window of one append; Confluent avoids it with a single elected leader).

Reads answer from the state as the store has applied it so far (another instance's write shows up once its
tail reader applied it, a few milliseconds later); writes catch up to the log end first.

Concurrency: all coroutines run on one event loop (the broker's); the registry is not thread-safe.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from broker.schema_registry import errors
from broker.schema_registry.errors import RegistryError
from broker.schema_registry.model import RegisteredSchema
from broker.schema_registry.records import (
    ConfigKey,
    ConfigValue,
    DeleteSubjectKey,
    DeleteSubjectValue,
    Key,
    ModeKey,
    ModeValue,
    SchemaKey,
    SchemaValue,
    Value,
)
from broker.schema_registry.state import Content, RegistryState
from broker.schema_registry.store import SchemaStore, StoreError, StoreTimeoutError
from spark_kafkalog.schemas import (
    COMPATIBILITY_LEVELS,
    SCHEMA_TYPES,
    InvalidSchemaError,
    ParsedSchema,
    SchemaReference,
    compatibility_errors,
    parse_schema,
)
from spark_kafkalog.schemas.providers import schema_type_of

log = logging.getLogger(__name__)

T = TypeVar("T")

MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
MAX_ATTEMPTS = 10
MAX_VERSION = 2**31 - 1
_PARSE_CACHE_LIMIT = 10_000
_CONTEXT = "."
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


class SchemaRegistry:
    """One registry instance over ``store`` (see the module docstring). All methods are coroutines raising
    ``RegistryError``; ``parser`` is ``spark_kafkalog.schemas.parse_schema`` (tests may pass another)."""

    def __init__(
        self,
        store: SchemaStore,
        *,
        default_compatibility: str = "BACKWARD",
        mode_mutability: bool = True,
        timeout_s: float = 30.0,
        parser: Parser = parse_schema,
    ) -> None:
        level = default_compatibility.upper()
        if level not in COMPATIBILITY_LEVELS:
            raise ValueError(f"schema.registry.compatibility.level: unknown level {default_compatibility!r}")
        self._store = store
        self.default_compatibility = level
        self.mode_mutability = mode_mutability
        self.timeout_s = timeout_s
        self._parser = parser
        self._write_lock = asyncio.Lock()
        self._parsed: dict[Content, ParsedSchema] = {}
        self._ready = False

    # -- lifecycle ---------------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True once ``start`` has replayed the log."""
        return self._ready

    @property
    def state(self) -> RegistryState:
        return self._store.state

    async def start(self) -> None:
        """Replay the log (the store's own timeout applies; its errors propagate as they are)."""
        await self._store.start()
        self._ready = True

    async def stop(self) -> None:
        self._ready = False
        await self._store.stop()

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
            raise errors.operation_not_permitted(f"Subject {subject} in context {_CONTEXT} is in read-only mode")

    def _has_subject(self, subject: str, *, deleted: bool) -> bool:
        return bool(self.state.versions_of(subject, deleted=deleted))

    # -- reads -------------------------------------------------------------------------------------------

    async def schema_types(self) -> list[str]:
        return list(SCHEMA_TYPES)

    async def schema_by_id(self, schema_id: int, *, subject: str | None = None) -> RegisteredSchema:
        """The schema with ``schema_id`` (a version holding it; the one in ``subject`` when it has one);
        40403 when no stored version holds it."""
        entries = self.state.entries_with_id(schema_id)
        if not entries:
            raise errors.schema_not_found(schema_id)
        if subject is not None:
            mine = [e for e in entries if e.subject == subject]
            entries = mine or entries
        live = [e for e in entries if not e.deleted]
        return self._registered((live or entries)[0])

    async def subject_versions_by_id(
        self, schema_id: int, *, subject: str | None = None, deleted: bool = False
    ) -> list[tuple[str, int]]:
        """The (subject, version) pairs holding ``schema_id``; 40403 when none is stored."""
        entries = self.state.entries_with_id(schema_id)
        if not entries:
            raise errors.schema_not_found(schema_id)
        return [
            (e.subject, e.version)
            for e in entries
            if (deleted or not e.deleted) and (subject is None or e.subject == subject)
        ]

    async def schemas(
        self,
        *,
        subject_prefix: str = "",
        deleted: bool = False,
        latest_only: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[RegisteredSchema]:
        """Every version (by subject, then version) of subjects starting with ``subject_prefix``."""
        picked: list[SchemaValue] = []
        for subject in sorted(self.state.subjects):
            if not subject.startswith(subject_prefix):
                continue
            versions = self.state.versions_of(subject, deleted=deleted)
            picked.extend(versions[-1:] if latest_only else versions)
        picked = picked[max(offset, 0) :]
        if limit is not None and limit >= 0:
            picked = picked[:limit]
        return [self._registered(e) for e in picked]

    async def subjects(self, *, prefix: str = "", deleted: bool = False, deleted_only: bool = False) -> list[str]:
        """Subjects with a live version (``deleted``: or a soft-deleted one; ``deleted_only``: subjects with
        a soft-deleted version), sorted."""
        found = []
        for subject, versions in self.state.subjects.items():
            if not subject.startswith(prefix):
                continue
            flags = [e.deleted for e in versions.values()]
            if deleted_only:
                keep = any(flags)
            else:
                keep = deleted or not all(flags)
            if keep and flags:
                found.append(subject)
        return sorted(found)

    async def versions(self, subject: str, *, deleted: bool = False, deleted_only: bool = False) -> list[int]:
        """The subject's versions, ascending; 40401 when it has none of the kind asked."""
        entries = self.state.versions_of(subject, deleted=deleted or deleted_only)
        if deleted_only:
            entries = [e for e in entries if e.deleted]
        if not entries:
            raise errors.subject_not_found(subject)
        return [e.version for e in entries]

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

    async def get_version(self, subject: str, version: int | str, *, deleted: bool = False) -> RegisteredSchema:
        """One version ("latest"/-1: the newest live one); 40401, 40402, 42202."""
        return self._registered(self._entry(subject, version, deleted=deleted))

    async def referenced_by(self, subject: str, version: int | str) -> list[int]:
        """The ids of live schemas referencing (subject, version), ascending."""
        number = parse_version(version)
        if number is None:
            number = self._entry(subject, version, deleted=False).version
        ids = {e.id for e in self.state.referenced_by(subject, number) if not e.deleted}
        return sorted(ids)

    async def lookup(
        self,
        subject: str,
        schema_type: str | None,
        schema_text: str,
        references: Sequence[SchemaReference],
        *,
        normalize: bool = False,
        deleted: bool = False,
    ) -> RegisteredSchema:
        """The version of ``subject`` holding this schema; 40401 (no such subject), 40403 (not in it),
        42201 (does not parse)."""
        parsed = self._parse(schema_type, schema_text, references)
        if not self._has_subject(subject, deleted=deleted):
            raise errors.subject_not_found(subject)
        wanted = {parsed}
        if normalize or self._normalize_in_scope(subject):
            wanted.add(parsed.normalized())
        for entry in reversed(self.state.versions_of(subject, deleted=deleted)):
            stored = self._parsed_entry(entry)
            if stored in wanted or (normalize and stored.normalized() in wanted):
                return self._registered(entry)
        raise errors.schema_not_found()

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

    async def test_compatibility(
        self,
        subject: str,
        version: int | str | None,
        schema_type: str | None,
        schema_text: str,
        references: Sequence[SchemaReference],
        *,
        normalize: bool = False,
    ) -> list[str]:
        """Why the schema may not be registered in ``subject``: against ``version`` only, or (None) against
        the live versions the subject's level names; empty when compatible. 40401/40402/42201/42202."""
        parsed = self._parse(schema_type, schema_text, references)
        if normalize or self._normalize_in_scope(subject):
            parsed = parsed.normalized()
        if version is None:
            previous = self.state.versions_of(subject)
        else:
            number = parse_version(version)
            if number is None and not self.state.versions_of(subject):
                return []
            previous = [self._entry(subject, version, deleted=False)]
        return self._compatibility_messages(subject, parsed, previous)

    # -- registration ------------------------------------------------------------------------------------

    async def register(
        self,
        subject: str,
        schema_type: str | None,
        schema_text: str,
        references: Sequence[SchemaReference],
        *,
        normalize: bool = False,
        schema_id: int | None = None,
        version: int | None = None,
    ) -> RegisteredSchema:
        """Register the schema under ``subject`` (see the module docstring); 409, 42201, 42205, 50001."""
        if schema_id is not None and schema_id < 0:
            schema_id = None
        if version is not None and version <= 0:
            version = None
        async with self._write_lock:
            unbound_losers: set[SchemaKey] = set()
            try:
                for _attempt in range(MAX_ATTEMPTS):
                    await self._sync()
                    existing, outcome = self._plan_registration(
                        subject, schema_type, schema_text, references, normalize, schema_id, version
                    )
                    if existing:
                        return self._registered(outcome)
                    for stale in self._stale_same_id(subject, outcome):
                        await self._append(SchemaKey(subject, stale.version), None)
                    key = SchemaKey(subject, outcome.version)
                    if await self._write_schema(key, outcome, unbound_losers):
                        return self._registered(self.state.subjects[subject][outcome.version])
                    log.info(
                        "schema registry: another instance took id %d or %s version %d first; retrying",
                        outcome.id,
                        subject,
                        outcome.version,
                    )
            finally:
                await self._tombstone_unbound(unbound_losers)
        raise errors.store_error(f"could not register a schema under subject '{subject}' after {MAX_ATTEMPTS} tries")

    def _plan_registration(
        self,
        subject: str,
        schema_type: str | None,
        schema_text: str,
        references: Sequence[SchemaReference],
        normalize: bool,
        schema_id: int | None,
        version: int | None,
    ) -> tuple[bool, SchemaValue]:
        """(False, the record to append), or (True, the live version) when the schema is already
        registered in the subject."""
        mode = self._mode_in_scope(subject)
        importing = mode == "IMPORT"
        self._check_writable(subject)
        if schema_id is not None and not importing:
            raise errors.operation_not_permitted(f"Subject {subject} in context {_CONTEXT} is not in import mode")
        if schema_id is None and mode != "READWRITE":
            raise errors.operation_not_permitted(f"Subject {subject} in context {_CONTEXT} is not in read-write mode")
        parsed = self._parse(schema_type, schema_text, references)
        if normalize or self._normalize_in_scope(subject):
            parsed = parsed.normalized()
        content: Content = (parsed.schema_type, parsed.canonical, tuple(parsed.references))
        stored = self.state.subjects.get(subject, {})
        new_version = max(stored, default=0) + 1
        live = self.state.versions_of(subject)
        existing_id = self.state.id_of(content)
        if existing_id is not None and (schema_id is None or schema_id == existing_id):
            if version is None:
                for entry in reversed(live):
                    if entry.id == existing_id:
                        return True, entry
            schema_id = existing_id
        if version is None:
            for entry in reversed(live):
                if (schema_id is None or schema_id == entry.id) and self._parsed_entry(entry) == parsed:
                    return True, entry
        if not importing:
            messages = self._compatibility_messages(subject, parsed, live)
            if messages:
                raise errors.incompatible_schema(subject, messages)
        if version is None:
            version = new_version
        elif version != new_version and not importing:
            raise RegistryError(422, 42201, "Invalid schema: Version is not one more than previous version")
        held = stored.get(version)
        if held is not None and held.content != content:
            raise errors.operation_not_permitted(
                f"Version {version} of subject {subject} in context {_CONTEXT} holds another schema"
            )
        if schema_id is not None:
            if not self.state.id_is_free_for(schema_id, content):
                raise errors.operation_not_permitted(
                    f"Overwrite new schema with id {schema_id} in context {_CONTEXT} is not permitted."
                )
        else:
            schema_id = self.state.max_id + 1
            while schema_id in self.state.known_ids or schema_id in self.state.id_keys:
                schema_id += 1
        return False, SchemaValue(subject, version, schema_id, content[1], content[0], content[2], False)

    def _stale_same_id(self, subject: str, value: SchemaValue) -> list[SchemaValue]:
        """Soft-deleted older versions of ``subject`` with the id being registered, not referenced."""
        return [
            e
            for e in self.state.versions_of(subject, deleted=True)
            if e.deleted
            and e.id == value.id
            and e.version < value.version
            and not self.state.referenced_by(subject, e.version)
        ]

    async def _write_schema(self, key: SchemaKey, value: SchemaValue, unbound_losers: set[SchemaKey]) -> bool:
        """Append ``value``; True when the log kept it. When the replay ignored it (another instance won):
        if another schema holds ``key``, re-append that one at once (the last record of the key must be the
        winner's for compaction); if ``key`` is unbound (we lost the id), remember it in ``unbound_losers``:
        the retry usually writes the same key again, which supersedes the loser."""
        await self._append(key, value)
        held = self.state.subjects.get(key.subject, {}).get(key.version)
        if held is not None and held.id == value.id and held.content == value.content:
            unbound_losers.discard(key)
            return True
        await self._sync()
        current = self.state.value_of(key)
        if current is not None:
            await self._append(key, current)
            unbound_losers.discard(key)
        else:
            unbound_losers.add(key)
        return False

    async def _tombstone_unbound(self, keys: set[SchemaKey]) -> None:
        """Tombstone each key whose last record is an ignored loser of ours and that nothing bound since,
        so that compaction cannot turn the loser into a registration."""
        if not keys:
            return
        try:
            await self._sync()
            for key in sorted(keys, key=lambda k: (k.subject, k.version)):
                if self.state.value_of(key) is None:
                    await self._append(key, None)
        except RegistryError:
            log.warning("schema registry: could not tombstone the ignored records of %s", keys)

    # -- deletes -----------------------------------------------------------------------------------------

    async def delete_subject(self, subject: str, *, permanent: bool = False) -> list[int]:
        """Soft-delete the subject's live versions, or (``permanent``) drop its soft-deleted ones; the
        versions deleted, ascending. 40401, 40404, 40405, 42205, 42206."""
        async with self._write_lock:
            await self._sync()
            if not self._has_subject(subject, deleted=True):
                raise errors.subject_not_found(subject)
            if not permanent and not self._has_subject(subject, deleted=False):
                raise errors.subject_soft_deleted(subject)
            self._check_writable(subject)
            entries = self.state.versions_of(subject, deleted=permanent)
            for entry in entries:
                referrers = {e.subject for e in self.state.referenced_by(subject, entry.version)}
                if not permanent:
                    referrers = {e.subject for e in self.state.referenced_by(subject, entry.version) if not e.deleted}
                referrers.discard(subject)
                if referrers:
                    raise errors.references_exist(f"{{subject={subject},version={entry.version}}}")
                if permanent and not entry.deleted:
                    raise errors.subject_not_soft_deleted(subject)
            versions = [e.version for e in entries]
            if not permanent:
                await self._append(DeleteSubjectKey(subject), DeleteSubjectValue(subject, versions[-1]))
            else:
                for number in reversed(versions):
                    await self._append(SchemaKey(subject, number), None)
                await self._forget_subject_settings(subject)
            return versions

    async def _forget_subject_settings(self, subject: str) -> None:
        if subject in self.state.modes:
            await self._append(ModeKey(subject), None)
        if subject in self.state.configs:
            await self._append(ConfigKey(subject), None)

    async def delete_version(self, subject: str, version: int | str, *, permanent: bool = False) -> int:
        """Soft-delete one version, or (``permanent``) drop a soft-deleted one; the version number.
        40401, 40402, 40406, 40407, 42202, 42205, 42206."""
        async with self._write_lock:
            await self._sync()
            number = parse_version(version)
            if number is None:
                entry = self._entry(subject, version, deleted=True)  # the newest live one; 40402 if none
            else:
                if not self._has_subject(subject, deleted=True):
                    raise errors.subject_not_found(subject)
                found = self.state.subjects.get(subject, {}).get(number)
                if found is None:
                    raise errors.version_not_found(number)
                entry = found
            if entry.deleted and not permanent:
                raise errors.version_soft_deleted(subject, entry.version)
            self._check_writable(subject)
            referrers = self.state.referenced_by(subject, entry.version)
            if any(permanent or not e.deleted for e in referrers):
                raise errors.references_exist(f"{{subject={subject},version={entry.version}}}")
            if permanent and not entry.deleted:
                raise errors.version_not_soft_deleted(subject, entry.version)
            key = SchemaKey(subject, entry.version)
            if not permanent:
                await self._append(
                    key,
                    SchemaValue(
                        subject, entry.version, entry.id, entry.schema, entry.schema_type, entry.references, True
                    ),
                )
            else:
                await self._append(key, None)
                if not self._has_subject(subject, deleted=True):
                    await self._forget_subject_settings(subject)
            return entry.version

    # -- config ------------------------------------------------------------------------------------------

    async def get_config(self, subject: str | None = None, *, default_to_global: bool = False) -> dict[str, Any]:
        """``{"compatibilityLevel": L, "normalize"?: b}`` of the subject (None: global); 40408 when the
        subject has none (unless ``default_to_global``)."""
        if subject is not None:
            config = self.state.configs.get(subject)
            if config is not None and config.to_json():
                return config.to_json()
            if not default_to_global:
                raise errors.subject_level_compatibility_not_configured(subject)
        config = self.state.configs.get(None)
        body = config.to_json() if config is not None else {}
        body.setdefault("compatibilityLevel", self.default_compatibility)
        return {"compatibilityLevel": body.pop("compatibilityLevel"), **body}

    async def set_config(self, subject: str | None, body: Mapping[str, Any]) -> dict[str, Any]:
        """Apply a PUT /config body ``{"compatibility": L, "normalize"?: b}`` (``compatibilityLevel`` is
        accepted too); answers ``{"compatibility": L, "normalize"?: b}``. 42203 for an unknown level."""
        raw_level = body.get("compatibility", body.get("compatibilityLevel"))
        normalize = body.get("normalize")
        if normalize is not None and not isinstance(normalize, bool):
            raise RegistryError(422, 422, f"normalize must be true or false, not {normalize!r}")
        if raw_level is None and normalize is None:
            raise errors.invalid_compatibility_level(raw_level)
        level: str | None = None
        if raw_level is not None:
            if not isinstance(raw_level, str) or raw_level.upper() not in COMPATIBILITY_LEVELS:
                raise errors.invalid_compatibility_level(raw_level)
            level = raw_level.upper()
        async with self._write_lock:
            await self._sync()
            if subject is not None:
                self._check_writable(subject)
            old = self.state.configs.get(subject)
            if old is not None:
                level = level if level is not None else old.compatibility_level
                normalize = normalize if normalize is not None else old.normalize
            await self._append(ConfigKey(subject), ConfigValue(subject, level, normalize))
        answer: dict[str, Any] = {}
        if level is not None:
            answer["compatibility"] = level
        if normalize is not None:
            answer["normalize"] = normalize
        return answer

    async def delete_config(self, subject: str | None) -> dict[str, Any]:
        """Remove the subject's (None: the global) config; answers the config removed. 40401 when a
        subject has none."""
        async with self._write_lock:
            await self._sync()
            old = self.state.configs.get(subject)
            if subject is not None and old is None:
                raise errors.subject_not_found(subject)
            if old is not None:
                await self._append(ConfigKey(subject), None)
        body = old.to_json() if old is not None else {}
        if subject is None:
            body.setdefault("compatibilityLevel", self.default_compatibility)
        return body

    # -- mode --------------------------------------------------------------------------------------------

    async def get_mode(self, subject: str | None = None, *, default_to_global: bool = False) -> str:
        """The subject's (None: global) mode; 40409 when the subject has none (unless
        ``default_to_global``)."""
        if subject is not None:
            if subject in self.state.modes:
                return self.state.modes[subject]
            if not default_to_global:
                raise errors.subject_level_mode_not_configured(subject)
        return self.state.modes.get(None, "READWRITE")

    async def set_mode(self, subject: str | None, mode: str, *, force: bool = False) -> str:
        """Set the subject's (None: global) mode; 42204 unknown mode, 42205 when modes are immutable or
        IMPORT is asked while live schemas exist (without ``force``; soft-deleted versions are then
        dropped first, 42206 when one is referenced)."""
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise errors.invalid_mode(mode)
        mode = mode.upper()
        if not self.mode_mutability:
            raise errors.operation_not_permitted("Mode changes are not allowed")
        async with self._write_lock:
            await self._sync()
            if mode == "IMPORT" and not force and self._mode_in_scope(subject) != "IMPORT":
                scope = [subject] if subject is not None else sorted(self.state.subjects)
                if any(self._has_subject(name, deleted=False) for name in scope):
                    raise errors.operation_not_permitted("Cannot import since found existing subjects")
                # Confluent drops the soft-deleted versions left, so that imports may take their versions.
                doomed = [e for name in scope for e in self.state.versions_of(name, deleted=True)]
                for entry in doomed:
                    if self.state.referenced_by(entry.subject, entry.version):
                        raise errors.references_exist(f"{{subject={entry.subject},version={entry.version}}}")
                for entry in doomed:
                    await self._append(SchemaKey(entry.subject, entry.version), None)
            await self._append(ModeKey(subject), ModeValue(subject, mode))
        return mode

    async def delete_mode(self, subject: str) -> str:
        """Remove the subject's mode; answers the mode removed. 40401 when it has none; 42205 when modes
        are immutable."""
        if not self.mode_mutability:
            raise errors.operation_not_permitted("Mode changes are not allowed")
        async with self._write_lock:
            await self._sync()
            old = self.state.modes.get(subject)
            if old is None:
                raise errors.subject_not_found(subject)
            await self._append(ModeKey(subject), None)
        return old
