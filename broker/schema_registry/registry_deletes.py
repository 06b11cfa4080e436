"""``RegistryDeletes``: deleting a subject or one version, softly or permanently, as Confluent does.

A soft delete marks versions deleted (a DELETE_SUBJECT record for a subject, the version's SCHEMA record
with ``deleted: true`` for one version); a permanent delete tombstones the SCHEMA keys of versions already
soft-deleted (40405/40407 otherwise) and, once a subject has no version left, its mode and config. A version
referenced by another schema cannot be deleted (42206): by a live one for a soft delete, by any for a permanent
one; deleting a whole subject counts only the other subjects' schemas. Read-only modes refuse (42205).

Concurrency: event-loop only; each delete holds ``_write_lock`` and catches up to the log end first.
"""

from __future__ import annotations

from broker.schema_registry import errors
from broker.schema_registry.records import (
    ConfigKey,
    DeleteSubjectKey,
    DeleteSubjectValue,
    ModeKey,
    SchemaKey,
    SchemaValue,
)
from broker.schema_registry.registry_base import RegistryBase, parse_version


class RegistryDeletes(RegistryBase):
    """``delete_subject`` and ``delete_version`` (coroutines raising ``RegistryError``)."""

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
