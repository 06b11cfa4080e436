"""Registries racing on one log agree, and a replay of the compacted log agrees with them: random
interleavings of registrations and deletes by two instances whose appends yield to each other."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from broker.schema_registry.errors import RegistryError
from broker.schema_registry.registry import SchemaRegistry
from broker.schema_registry.state import RegistryState
from broker.schema_registry.store import MemoryLog, MemorySchemaStore
from tests.broker.schema_registry.fake_schemas import parse_fields


class YieldingStore(MemorySchemaStore):
    """Lets the other registry run between planning a write and appending it (where real races happen)."""

    async def append(self, key, value):
        await asyncio.sleep(0)
        return await super().append(key, value)


def summary(state: RegistryState):
    return sorted((e.subject, e.version, e.id, e.schema, e.deleted) for e in state.entries())


def compacted(records, *, keep_tombstones):
    last: dict[bytes, int] = {}
    for position, (key, _value) in enumerate(records):
        last[key] = position
    kept = sorted(last.values())
    return [records[p] for p in kept if keep_tombstones or records[p][1] is not None]


async def scenario(seed: int):
    rng = random.Random(seed)
    log = MemoryLog()
    registries = [SchemaRegistry(YieldingStore(log), parser=parse_fields, default_compatibility="NONE") for _ in "ab"]
    for r in registries:
        await r.start()

    async def op(r: SchemaRegistry):
        subject = rng.choice("xyz")
        kind = rng.random()
        try:
            if kind < 0.6:
                text = json.dumps(sorted(rng.sample("abcdef", rng.randint(1, 3))))
                got = await r.register(subject, None, text, [])
                held = r.state.subjects[subject][got.version]
                assert (held.id, held.schema) == (got.id, got.schema.canonical)
            elif kind < 0.75:
                await r.delete_subject(subject)
            elif kind < 0.9:
                await r.delete_subject(subject, permanent=True)
            else:
                await r.delete_version(subject, "latest")
        except RegistryError as e:
            assert e.error_code in (40401, 40402, 40404, 40405, 40406, 40407), e

    for _ in range(12):
        await asyncio.gather(*(op(rng.choice(registries)) for _ in range(rng.randint(1, 4))))
    views = [summary(r.state) for r in registries]
    return log, views


@pytest.mark.parametrize("seed", range(25))
def test_instances_and_compacted_replays_agree(seed):
    log, (a, b) = asyncio.run(scenario(seed))
    assert a == b
    for keep in (True, False):
        fresh = RegistryState()
        for key, value in compacted(log.records, keep_tombstones=keep):
            fresh.apply_bytes(key, value)
        assert summary(fresh) == a, f"compacted replay (tombstones kept: {keep}) differs"
    ids: dict[int, str] = {}
    for _subject, _version, schema_id, text, _deleted in a:
        assert ids.setdefault(schema_id, text) == text, f"id {schema_id} holds two schemas"


def test_the_scenarios_do_race():
    """The interleavings above make registries lose races (records the replay ignores), so the agreement
    they check covers the repair path."""
    ignored = 0
    for seed in range(25):
        log, _ = asyncio.run(scenario(seed))
        state = RegistryState()
        for key, value in log.records:
            state.apply_bytes(key, value)
        ignored += state.ignored
    assert ignored > 0
