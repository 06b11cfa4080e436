"""``RegistryRegistration``: registering a schema under a subject: the plan (existing id or version,
compatibility, mode, the id and version to allocate) and the write through the ``_schemas`` log shared by
every registry instance, with the repair of the records the log ignored.

Semantics (Confluent's): registering a schema already live in the subject answers its existing version and
id; a schema registered elsewhere (any subject, even soft-deleted or permanently deleted) gets its existing
id, a new one gets max id + 1. New versions number one above the subject's highest version still stored.
Compatibility is checked against the live versions at the subject's level (409 with Confluent's lines). In
IMPORT mode the id and version may be given and compatibility is not checked; READWRITE refuses explicit
ids; READONLY and READONLY_OVERRIDE refuse (42205). Re-registering a schema whose older soft-deleted versions
hold the same id tombstones those (unless referenced).

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

Concurrency: event-loop only; registrations of one instance are serialized by ``_write_lock``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from broker.schema_registry import errors
from broker.schema_registry.errors import RegistryError
from broker.schema_registry.model import RegisteredSchema
from broker.schema_registry.records import SchemaKey, SchemaValue
from broker.schema_registry.registry_base import DEFAULT_CONTEXT, RegistryBase
from broker.schema_registry.state import Content
from spark_kafkalog.schemas import SchemaReference

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 10
"""Registrations tried per request before giving up with 50001 (each loses only to another instance)."""


class RegistryRegistration(RegistryBase):
    """``register`` and the steps of its write (see the module docstring)."""

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
            raise errors.operation_not_permitted(
                f"Subject {subject} in context {DEFAULT_CONTEXT} is not in import mode"
            )
        if schema_id is None and mode != "READWRITE":
            raise errors.operation_not_permitted(
                f"Subject {subject} in context {DEFAULT_CONTEXT} is not in read-write mode"
            )
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
                f"Version {version} of subject {subject} in context {DEFAULT_CONTEXT} holds another schema"
            )
        if schema_id is not None:
            if not self.state.id_is_free_for(schema_id, content):
                raise errors.operation_not_permitted(
                    f"Overwrite new schema with id {schema_id} in context {DEFAULT_CONTEXT} is not permitted."
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
