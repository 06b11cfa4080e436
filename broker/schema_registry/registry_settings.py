"""``RegistrySettings``: the compatibility config and the mode, of a subject or global.

Config: ``{"compatibilityLevel": L, "normalize"?: b}`` per subject or global (a CONFIG record each); a
subject without a level uses the global one, else ``default_compatibility``. Mode: READWRITE (the default),
READONLY, READONLY_OVERRIDE or IMPORT per subject or global (a MODE record each); changes are refused when
``mode_mutability`` is off (42205). Switching a scope to IMPORT without ``force`` needs it to hold no live
schema (42205) and drops its soft-deleted versions first (42206 when one is referenced), as Confluent does.

Concurrency: event-loop only; each change holds ``_write_lock`` and catches up to the log end first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from broker.schema_registry import errors
from broker.schema_registry.errors import RegistryError
from broker.schema_registry.records import ConfigKey, ConfigValue, ModeKey, ModeValue, SchemaKey
from broker.schema_registry.registry_base import RegistryBase
from spark_kafkalog.schemas import COMPATIBILITY_LEVELS

MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")


class RegistrySettings(RegistryBase):
    """Config and mode: ``get_config``/``set_config``/``delete_config``, ``get_mode``/``set_mode``/
    ``delete_mode`` (coroutines raising ``RegistryError``)."""

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
