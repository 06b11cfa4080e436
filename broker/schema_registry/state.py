"""The registry's state as a pure function of the ``_schemas`` records it has applied, in log order.

Every registry instance replaying the same records reaches the same state (no clocks, no randomness, no
parsing): the replay works on schema texts as stored. Rules, applied record by record:

- SCHEMA value for (subject, version) with (id, schema): ignored when a stored version (live or
  soft-deleted) binds the id to another schema (type, text, references), or the (subject, version) holds
  another id or schema; first in the log wins. Otherwise it is stored (the same schema again only changes
  ``deleted``: soft delete or undo).
- SCHEMA tombstone: the (subject, version) is dropped (a permanent delete).
- DELETE_SUBJECT (subject, v): every version ``<= v`` of the subject is marked deleted.
- CLEAR_SUBJECT (subject): all the subject's versions are dropped.
- CONFIG / MODE value: the subject's (None: global) config or mode; tombstone: removed.
- NOOP and unknown records: nothing.

The conflict rule looks only at what is stored, so a replay of the compacted topic agrees with one of the
whole log (compaction drops only records a later record of the same key supersedes; the registry
supersedes each ignored record of its own with a repair record, see ``registry``). Ids a permanent delete
freed are remembered apart (``known_ids``, ``max_id``) only to steer new registrations: the same schema
gets its old id back, another schema a new one; an instance that never saw them (it started after
compaction) may reuse such an id, as Confluent's registry may.

Not thread-safe: one owner (the store's reader) applies records; readers run on the same event loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from broker.schema_registry.records import (
    ClearSubjectKey,
    ClearSubjectValue,
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
    decode_record,
)
from spark_kafkalog.schemas import SchemaReference

Content = tuple[str, str, tuple[SchemaReference, ...]]
"""A schema's identity: (schema type, schema text, references)."""


@dataclass
class RegistryState:
    """Subjects, versions, ids, configs and modes after the records applied so far."""

    subjects: dict[str, dict[int, SchemaValue]] = field(default_factory=dict)
    """subject -> version -> value (soft-deleted versions included, ``deleted`` set)."""
    id_keys: dict[int, set[tuple[str, int]]] = field(default_factory=dict)
    """id -> the stored (subject, version) pairs holding it (never empty)."""
    content_ids: dict[Content, int] = field(default_factory=dict)
    """Stored schema -> the id of its first stored version."""
    references_to: dict[tuple[str, int], set[tuple[str, int]]] = field(default_factory=dict)
    """(subject, version) -> the stored (subject, version) pairs whose references name it."""
    known_ids: dict[int, Content] = field(default_factory=dict)
    """Every id ever stored -> its schema (kept after permanent deletes; steers proposals only)."""
    known_contents: dict[Content, int] = field(default_factory=dict)
    """Every schema ever stored -> the id it was first stored with (steers proposals only)."""
    configs: dict[str | None, ConfigValue] = field(default_factory=dict)
    modes: dict[str | None, str] = field(default_factory=dict)
    max_id: int = 0
    applied: int = 0
    """How many records were applied (including skipped ones)."""
    ignored: int = 0
    """How many SCHEMA records were ignored as conflicting."""

    # -- replay ------------------------------------------------------------------------------------------

    def apply_bytes(self, key: bytes | None, value: bytes | None) -> None:
        """Apply one record as read from the topic (unknown or malformed records are skipped)."""
        decoded = decode_record(key, value)
        self.applied += 1
        if decoded is not None:
            self._apply(*decoded)

    def apply(self, key: Key, value: Value | None) -> None:
        """Apply one decoded record."""
        self.applied += 1
        self._apply(key, value)

    def _apply(self, key: Key, value: Value | None) -> None:
        if isinstance(key, SchemaKey):
            if value is None:
                self._drop(key.subject, key.version)
            elif isinstance(value, SchemaValue):
                self._apply_schema(key, value)
        elif isinstance(key, ConfigKey):
            if value is None:
                self.configs.pop(key.subject, None)
            elif isinstance(value, ConfigValue):
                self.configs[key.subject] = ConfigValue(key.subject, value.compatibility_level, value.normalize)
        elif isinstance(key, ModeKey):
            if value is None:
                self.modes.pop(key.subject, None)
            elif isinstance(value, ModeValue):
                self.modes[key.subject] = value.mode
        elif isinstance(key, DeleteSubjectKey) and isinstance(value, DeleteSubjectValue):
            versions = self.subjects.get(key.subject, {})
            for version, entry in versions.items():
                if version <= value.version and not entry.deleted:
                    versions[version] = replace(entry, deleted=True)
        elif isinstance(key, ClearSubjectKey) and isinstance(value, ClearSubjectValue):
            for version in list(self.subjects.get(key.subject, {})):
                self._drop(key.subject, version)

    def _apply_schema(self, key: SchemaKey, value: SchemaValue) -> None:
        value = replace(value, subject=key.subject, version=key.version)
        content = value.content
        holders = self.id_keys.get(value.id)
        bound = None if not holders else self._content_at(next(iter(holders)))
        current = self.subjects.get(key.subject, {}).get(key.version)
        if (bound is not None and bound != content) or (
            current is not None and (current.id != value.id or current.content != content)
        ):
            self.ignored += 1
            return
        self.subjects.setdefault(key.subject, {})[key.version] = value
        if current is None:
            where = (key.subject, key.version)
            self.id_keys.setdefault(value.id, set()).add(where)
            self.content_ids.setdefault(content, value.id)
            for ref in value.references:
                self.references_to.setdefault((ref.subject, ref.version), set()).add(where)
            self.known_ids[value.id] = content
            self.known_contents.setdefault(content, value.id)
            self.max_id = max(self.max_id, value.id)

    def _content_at(self, where: tuple[str, int]) -> Content:
        return self.subjects[where[0]][where[1]].content

    def _drop(self, subject: str, version: int) -> None:
        versions = self.subjects.get(subject)
        if versions is None or version not in versions:
            return
        entry = versions.pop(version)
        if not versions:
            del self.subjects[subject]
        where = (subject, version)
        holders = self.id_keys[entry.id]
        holders.discard(where)
        if not holders:
            del self.id_keys[entry.id]
        if self.content_ids.get(entry.content) == entry.id and not holders:
            del self.content_ids[entry.content]
        for ref in entry.references:
            referrers = self.references_to.get((ref.subject, ref.version))
            if referrers is not None:
                referrers.discard(where)
                if not referrers:
                    del self.references_to[(ref.subject, ref.version)]

    # -- queries -----------------------------------------------------------------------------------------

    def value_of(self, key: Key) -> Value | None:
        """The value this state holds for ``key`` (what a repair re-appends); None when it holds none."""
        if isinstance(key, SchemaKey):
            return self.subjects.get(key.subject, {}).get(key.version)
        if isinstance(key, ConfigKey):
            return self.configs.get(key.subject)
        if isinstance(key, ModeKey):
            mode = self.modes.get(key.subject)
            return None if mode is None else ModeValue(key.subject, mode)
        return None

    def versions_of(self, subject: str, *, deleted: bool = False) -> list[SchemaValue]:
        """The subject's versions, oldest first; soft-deleted ones only with ``deleted``."""
        versions = self.subjects.get(subject, {})
        return [versions[v] for v in sorted(versions) if deleted or not versions[v].deleted]

    def entries(self) -> Iterator[SchemaValue]:
        """Every version of every subject (soft-deleted included), by subject then version."""
        for subject in sorted(self.subjects):
            versions = self.subjects[subject]
            for version in sorted(versions):
                yield versions[version]

    def entries_with_id(self, schema_id: int) -> list[SchemaValue]:
        """The versions registered with ``schema_id`` (soft-deleted included), by subject then version."""
        return [self.subjects[s][v] for s, v in sorted(self.id_keys.get(schema_id, ()))]

    def id_of(self, content: Content) -> int | None:
        """The id a registration of ``content`` takes: a stored version's, else the one it had before a
        permanent delete; None for a schema never stored."""
        found = self.content_ids.get(content)
        if found is not None:
            return found
        known = self.known_contents.get(content)
        if known is not None and self.id_is_free_for(known, content):
            return known
        return None

    def id_is_free_for(self, schema_id: int, content: Content) -> bool:
        """Whether a version of ``content`` may take ``schema_id`` (no stored version binds it to another
        schema)."""
        holders = self.id_keys.get(schema_id)
        return not holders or self._content_at(next(iter(holders))) == content

    def referenced_by(self, subject: str, version: int) -> list[SchemaValue]:
        """The versions whose references name (subject, version) (soft-deleted included)."""
        return [self.subjects[s][v] for s, v in sorted(self.references_to.get((subject, version), ()))]
