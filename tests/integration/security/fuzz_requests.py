"""Fuzzed Kafka requests aimed at a cluster's real state, for the hostile-client test.

``RequestFuzzer(rng, served, names).next()`` returns one framed request: a random API among ``served`` (key ->
the broker's (min, max) versions from ApiVersions) at a random served version, with a valid header and a body
built field by field from the API's declared schema (``spark_kafkalog.protocol``): every string field is drawn
from ``names`` by what the field holds (topic, group, transactional id, principal, host, config name, ...) so the
requests name the topics, groups and ACLs that exist; integers mostly small and plausible (partition 0, the
resource-type and operation codes of ACLs, ``acks`` -1/0/1), record fields a valid v2 batch. About half the bodies
are then mutated byte-wise with the abuse bench's ``_mutate`` (``bench.abuse``): bytes flipped, truncated,
inserted. The header (API key, version, correlation id, client id) is never mutated, so the broker can always
tell which API it is failing to decode.

Deterministic for a given ``rng`` seed; not thread-safe (one fuzzer per thread).
"""

from __future__ import annotations

import random
import struct
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from bench.abuse import _mutate
from spark_kafkalog.protocol import API_BY_KEY
from spark_kafkalog.protocol.codec import encode_struct
from spark_kafkalog.protocol.primitives import Writer
from spark_kafkalog.records.batch_builder import build_batch

__all__ = ["NamePool", "RequestFuzzer"]


@dataclass
class NamePool:
    """The names the fuzzed requests use: the cluster's real ones plus a few new ones."""

    topics: list[str]
    groups: list[str]
    transactional_ids: list[str] = field(default_factory=lambda: ["tx-hostile"])
    principals: list[str] = field(default_factory=lambda: ["User:*", "User:bob", "User:admin"])
    config_names: list[str] = field(
        default_factory=lambda: ["retention.ms", "cleanup.policy", "min.insync.replicas", "producer_byte_rate"]
    )

    def for_field(self, field_name: str, rng: random.Random) -> str:
        n = field_name.lower()
        if "principal" in n or n in ("user", "entity_name", "name") and rng.random() < 0.2:
            return rng.choice(self.principals + ["bob", "admin"])
        if "host" in n:
            return rng.choice(["*", "127.0.0.1"])
        if "transactional" in n:
            return rng.choice(self.transactional_ids)
        if "group" in n or "member" in n:
            return rng.choice(self.groups) if "group" in n else ""
        if "config" in n or n in ("key",):
            return rng.choice(self.config_names)
        if "resource_name" in n:
            return rng.choice(self.topics + self.groups + ["*", "kafka-cluster"])
        if "topic" in n or n == "name":
            return rng.choice(self.topics + ["*", f"hostile-{uuid.uuid4().hex[:6]}"])
        if "value" in n:
            return rng.choice(["1", "-1", "compact", "1000000"])
        return rng.choice(self.topics + self.groups + ["", "*"])


_SMALL_INTS = (-1, 0, 0, 0, 1, 1, 2, 3, 4, 5, 8, 12, 100, 1000)


class RequestFuzzer:
    def __init__(self, rng: random.Random, served: dict[int, tuple[int, int]], names: NamePool) -> None:
        self.rng = rng
        self.served = {k: v for k, v in served.items() if k in API_BY_KEY}
        self.keys = sorted(self.served)
        self.names = names
        self._cid = 0

    def next(self) -> tuple[int, int, int, bytes]:
        """``(api_key, version, correlation_id, framed request)``."""
        rng = self.rng
        key = rng.choice(self.keys)
        lo, hi = self.served[key]
        api = API_BY_KEY[key]
        lo, hi = max(lo, api.min_version), min(hi, api.max_version)
        version = rng.randint(lo, hi)
        flexible = api.is_flexible(version)
        self._cid = (self._cid + 1) & 0x7FFFFFFF
        header = Writer()
        header.int16(key)
        header.int16(version)
        header.int32(self._cid)
        header.nullable_string("hostile")
        if flexible:
            header.uvarint(0)
        body = self._struct(api.request, version, depth=0)
        encoded = bytes(encode_struct(api.request, version, flexible, body).getvalue())
        if rng.random() < 0.5:
            encoded = _mutate(encoded, rng)
        payload = bytes(header.getvalue()) + encoded
        return key, version, self._cid, struct.pack(">i", len(payload)) + payload

    # -- bodies --------------------------------------------------------------------------------------------------
    def _struct(self, spec: Any, version: int, depth: int) -> Any:
        values = {}
        for f in spec.fields:
            if not f.in_version(version):
                continue
            if f.kind == "prim":
                values[f.name] = self._prim(f, version)
            elif f.kind == "struct":
                values[f.name] = self._struct(f.struct_spec, version, depth + 1)
            else:
                count = 0 if depth > 3 else self.rng.choice((0, 1, 1, 1, 2, 3))
                if f.prim:
                    values[f.name] = [self._prim(f, version, element=True) for _ in range(count)]
                else:
                    values[f.name] = [self._struct(f.struct_spec, version, depth + 1) for _ in range(count)]
        return spec.cls(**values)

    def _prim(self, f: Any, version: int, *, element: bool = False) -> Any:
        rng = self.rng
        prim = f.prim_type
        nullable = not element and f.nullable_in(version)
        if nullable and rng.random() < 0.1:
            return None
        name = f.name.lower()
        if prim in ("int8", "int16", "int32", "int64"):
            bits = int(prim[3:])
            if "acks" in name:
                return rng.choice((-1, 1, 0))
            if "resource_type" in name:
                return rng.choice((2, 2, 3, 4, 5, 1))
            if "operation" in name:
                return rng.randint(1, 14)
            if "permission" in name:
                return rng.choice((2, 3, 1))
            if "pattern_type" in name:
                return rng.choice((3, 4, 1, 2))
            if "wait" in name or "timeout" in name:
                return rng.choice((0, 10, 100))
            if "replica_id" in name or "broker_id" in name or "leader" in name:
                return rng.choice((-1, 0, 1))
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            if rng.random() < 0.9:
                return min(rng.choice(_SMALL_INTS), hi)
            return rng.randint(lo, hi)
        if prim in ("uint16", "uint32"):
            return rng.choice((0, 1, 100))
        if prim == "bool":
            return rng.random() < 0.5
        if prim == "float64":
            return rng.choice((0.0, 1.0, 1e6, -1.0))
        if prim == "uuid":
            return uuid.UUID(int=0) if rng.random() < 0.7 else uuid.UUID(int=rng.getrandbits(128))
        if prim == "string":
            return self.names.for_field(f.name, rng)
        if prim == "records":
            now = int(time.time() * 1000)
            n = rng.randint(1, 3)
            return bytes(build_batch([(now, b"k", b"hostile-%d" % i, []) for i in range(n)]))
        return rng.randbytes(rng.randint(0, 24))  # bytes: SASL tokens, metadata blobs, assignments
