"""``RegistryQueries``: the read-only operations of ``SchemaRegistry``: schemas by id, subjects, versions,
look-up of a schema in a subject, references and compatibility tests.

Reads answer from the state as the store has applied it so far (another instance's write shows up once its
tail reader applied it, a few milliseconds later); they take no lock and append nothing. "latest" (or -1) is
the newest live version; soft-deleted versions are seen only with ``deleted=True``.

Concurrency: event-loop only (see ``registry_base``).
"""

from __future__ import annotations

from collections.abc import Sequence

from broker.schema_registry import errors
from broker.schema_registry.model import RegisteredSchema
from broker.schema_registry.records import SchemaValue
from broker.schema_registry.registry_base import RegistryBase, parse_version
from spark_kafkalog.schemas import SCHEMA_TYPES, SchemaReference


class RegistryQueries(RegistryBase):
    """The queries (all coroutines raising ``RegistryError``)."""

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
