"""The registry's state as a pure function of the ``_schemas`` records it has applied, in log order.

Every registry instance replaying the same records reaches the same state (no clocks, no randomness, no
parsing): the replay works on schema texts as stored. Rules, applied record by record:

- SCHEMA value for (subject, version) with (id, schema): ignored when the id is already bound to another
  schema (type, text, references) or the (subject, version) already holds another id or schema; first in
  the log wins. Otherwise it binds (the same schema again only changes ``deleted``: soft delete or undo).
  The id stays bound to its schema for good (never reused), and ``max_id`` grows with every bound id.
- SCHEMA tombstone: the (subject, version) is dropped (a permanent delete).
- DELETE_SUBJECT (subject, v): every version ``<= v`` of the subject is marked deleted.
- CLEAR_SUBJECT (subject): all the subject's versions are dropped.
- CONFIG / MODE value: the subject's (None: global) config or mode; tombstone: removed.
- NOOP and unknown records: nothing.

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
    id_contents: dict[int, Content] = field(default_factory=dict)
    """Every id ever bound -> its schema (kept after permanent deletes: ids are never reused)."""
    content_ids: dict[Content, int] = field(default_factory=dict)
    """Schema -> its id (the first bound)."""
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
                versions = self.subjects.get(key.subject)
                if versions is not None:
                    versions.pop(key.version, None)
                    if not versions:
                        del self.subjects[key.subject]
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
            self.subjects.pop(key.subject, None)

    def _apply_schema(self, key: SchemaKey, value: SchemaValue) -> None:
        value = replace(value, subject=key.subject, version=key.version)
        content = value.content
        bound = self.id_contents.get(value.id)
        current = self.subjects.get(key.subject, {}).get(key.version)
        if (bound is not None and bound != content) or (
            current is not None and (current.id != value.id or current.content != content)
        ):
            self.ignored += 1
            return
        if bound is None:
            self.id_contents[value.id] = content
            self.content_ids.setdefault(content, value.id)
            self.max_id = max(self.max_id, value.id)
        self.subjects.setdefault(key.subject, {})[key.version] = value

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
        return [e for e in self.entries() if e.id == schema_id]

    def referenced_by(self, subject: str, version: int) -> list[SchemaValue]:
        """The versions whose references name (subject, version) (soft-deleted included)."""
        return [e for e in self.entries() if any(r.subject == subject and r.version == version for r in e.references)]
