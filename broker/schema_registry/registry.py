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

The parts (one module each, put together here): ``registry_base`` (the shared fields, the bounded log
access, parsing, scopes, version look-up, the compatibility check), ``registry_reads`` (the queries),
``registry_registration`` (registration: id and version allocation, and the writes of several registry
instances on one ``_schemas`` topic with the repair of the records the log ignored), ``registry_deletes`` and
``registry_settings`` (config and mode).

Writes (registrations, deletes, config and mode changes) run one at a time per instance (a lock), catch up
to the log end first and return once their records are applied, so a caller reads its own writes. Reads
answer from the state as the store has applied it so far (another instance's write shows up once its tail
reader applied it, a few milliseconds later).

Concurrency: all coroutines run on one event loop (the broker's); the registry is not thread-safe.
"""

from __future__ import annotations

import asyncio

from broker.schema_registry.registry_base import Parser
from broker.schema_registry.registry_deletes import RegistryDeletes
from broker.schema_registry.registry_reads import RegistryQueries
from broker.schema_registry.registry_registration import RegistryRegistration
from broker.schema_registry.registry_settings import RegistrySettings
from broker.schema_registry.store import SchemaStore
from spark_kafkalog.schemas import COMPATIBILITY_LEVELS, parse_schema


class SchemaRegistry(RegistryQueries, RegistryRegistration, RegistryDeletes, RegistrySettings):
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
        self._parsed = {}
        self._ready = False

    # -- lifecycle ---------------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True once ``start`` has replayed the log."""
        return self._ready

    async def start(self) -> None:
        """Replay the log (the store's own timeout applies; its errors propagate as they are)."""
        await self._store.start()
        self._ready = True

    async def stop(self) -> None:
        self._ready = False
        await self._store.stop()
