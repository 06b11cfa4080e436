"""Error responses built from the declared schemas: a whole request answered with one error code, and the
per-partition split and merge that fail some partitions of a request while the rest is served.

Pure functions over ``spark_kafkalog.protocol`` declarations; safe from any thread.

How a request maps onto its response (``paired_arrays``): at each level, an array of structs in the response
mirrors one array of the request, found by name (``topics`` <- ``topics``), else by the request array whose
name shares a word with it (``results_by_partition`` <- ``partitions``, ``coordinators`` <- ``coordinator_keys``)
or whose elements share key fields with its elements (``responses`` <- ``topic_data``: both have ``name``).
Each request element gives one response element whose key fields (``KEY_FIELDS``: topic, partition, group,
transactional id, resource...) are copied from the request element (a partition is ``index``,
``partition``, ``partition_index`` or ``partition_id`` on either side); an element of a request array of
primitives (``partition_indexes: []int32``) fills the first key field of that type. Every int16 field named
``error_code`` or ``*_error_code`` holds the error; in structs that carry one, int64 fields without a
declared default are -1 (offsets, watermarks, producer ids: what Kafka answers with an error), other fields
take their declared defaults. ``_NOT_MIRRORED`` lists the response arrays that must stay empty although a
request array looks like their source.

Partition levels: a *partition entry* is a request element with a partition key field, or an int32 of a
request array mirrored into such elements; a *topic entry* is an element with a topic key (``name``,
``topic``, ``topic_name``; ``topic_id`` resolved to a name by the caller's resolver) whose mirrored array
holds partition entries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from spark_kafkalog.protocol import ApiSpec, ErrorCode, Message
from spark_kafkalog.protocol.schema import _UNSET, FieldSpec, StructSpec

PARTITION_KEYS = ("partition_index", "partition", "index", "partition_id")
TOPIC_KEYS = ("name", "topic", "topic_name")
KEY_FIELDS = frozenset(
    PARTITION_KEYS
    + TOPIC_KEYS
    + (
        "topic_id",
        "group_id",
        "transactional_id",
        "key",
        "member_id",
        "group_instance_id",
        "resource_type",
        "resource_name",
    )
)
"""Fields copied from a request element into the response element that answers it (and that identify an
element when two responses are merged)."""

_NOT_MIRRORED = frozenset({("ListTransactions", "transaction_states")})
_IGNORED_WORDS = frozenset({"by", "and", "below", "v3", "result", "results", "response", "responses", "data"})

TopicResolver = Callable[[Any], str | None]
"""Topic id (uuid) -> topic name, or None when unknown (``MetadataCache.topic_by_id``)."""


def is_error_field(f: FieldSpec) -> bool:
    return f.prim == "int16" and f.kind == "prim" and (f.name == "error_code" or f.name.endswith("_error_code"))


def _words(name: str) -> set[str]:
    out = set()
    for w in name.split("_"):
        if w.endswith("ies"):
            w = w[:-3] + "y"
        elif w.endswith("xes"):
            w = w[:-2]
        elif w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        if w not in _IGNORED_WORDS:
            out.add(w)
    return out


def _fields_at(spec: StructSpec, version: int) -> list[FieldSpec]:
    return [f for f in spec.fields if f.in_version(version)]


def _first_key(spec: StructSpec, version: int, names: tuple[str, ...]) -> FieldSpec | None:
    by_name = {f.name: f for f in _fields_at(spec, version) if f.kind == "prim"}
    for n in names:
        if n in by_name:
            return by_name[n]
    return None


def partition_key(spec: StructSpec, version: int) -> FieldSpec | None:
    """The partition key field of a struct at ``version``, if it has one."""
    return _first_key(spec, version, PARTITION_KEYS)


def _score(resp: FieldSpec, req: FieldSpec, version: int) -> int:
    """How well request array ``req`` fits as the source of response array ``resp`` (0: not at all)."""
    score = 2 * len(_words(resp.name) & _words(req.name))
    elem = resp.struct_spec
    if req.struct is not None:
        req_keys = {f.name for f in _fields_at(req.struct, version)} & KEY_FIELDS
        resp_keys = {f.name for f in _fields_at(elem, version)} & KEY_FIELDS
        score += len(req_keys & resp_keys)
    else:
        target = next((f for f in _fields_at(elem, version) if f.name in KEY_FIELDS and f.prim == req.prim), None)
        if target is None:
            return 0
        score += len(_words(target.name) & _words(req.name))
    return score


@lru_cache(maxsize=4096)
def paired_arrays(api_name: str, req: StructSpec, resp: StructSpec, version: int) -> tuple[tuple[str, str], ...]:
    """(response array field, request array field) pairs at this level for ``version`` (see module doc)."""
    candidates = [f for f in _fields_at(req, version) if f.kind == "array"]
    pairs: list[tuple[str, str]] = []
    used: set[str] = set()
    for rf in _fields_at(resp, version):
        if rf.kind != "array" or rf.struct is None or (api_name, rf.name) in _NOT_MIRRORED:
            continue
        same = next((c for c in candidates if c.name == rf.name and c.name not in used), None)
        if same is None:
            scored = [(_score(rf, c, version), i, c) for i, c in enumerate(candidates) if c.name not in used]
            scored = [s for s in scored if s[0] > 0]
            if not scored:
                continue
            same = max(scored, key=lambda s: (s[0], -s[1]))[2]
        used.add(same.name)
        pairs.append((rf.name, same.name))
    return tuple(pairs)


def _field(spec: StructSpec, name: str) -> FieldSpec:
    return spec.field(name)


def _copy_key(resp_f: FieldSpec, req_spec: StructSpec, req_msg: Message, version: int) -> tuple[bool, Any]:
    """The request element's value for key field ``resp_f`` (partition keys match each other's names)."""
    names: tuple[str, ...] = PARTITION_KEYS if resp_f.name in PARTITION_KEYS else (resp_f.name,)
    if resp_f.name in TOPIC_KEYS:
        names = TOPIC_KEYS
    src = _first_key(req_spec, version, names)
    if src is None or src.prim != resp_f.prim:
        return False, None
    return True, getattr(req_msg, src.name)


def build_struct(
    api_name: str,
    resp: StructSpec,
    req: StructSpec | None,
    req_msg: Message | None,
    version: int,
    code: int,
    *,
    partitions_only: bool = False,
    key_value: Any = _UNSET,
) -> Message:
    """One response struct answering ``req_msg`` (or the primitive ``key_value``) with ``code``.

    ``partitions_only``: only error fields of structs with a partition key get ``code``; the others are 0.
    """
    fields = _fields_at(resp, version)
    has_error = any(is_error_field(f) for f in fields)
    in_scope = not partitions_only or partition_key(resp, version) is not None
    pairs = dict(paired_arrays(api_name, req, resp, version)) if req is not None else {}
    values: dict[str, Any] = {}
    for f in fields:
        if is_error_field(f):
            values[f.name] = int(code) if in_scope else 0
        elif f.kind == "array" and f.struct is not None:
            source = pairs.get(f.name)
            items = getattr(req_msg, source) if source is not None and req_msg is not None else None
            if source is None or items is None:
                values[f.name] = []
                continue
            assert req is not None
            src_f = _field(req, source)
            if src_f.struct is not None:
                values[f.name] = [
                    build_struct(api_name, f.struct, src_f.struct, item, version, code, partitions_only=partitions_only)
                    for item in items
                ]
            else:
                values[f.name] = [
                    build_struct(
                        api_name, f.struct, None, None, version, code, partitions_only=partitions_only, key_value=item
                    )
                    for item in items
                ]
        elif f.kind == "struct":
            values[f.name] = build_struct(api_name, f.struct_spec, None, None, version, code, partitions_only=True)
        elif f.name in KEY_FIELDS and key_value is not _UNSET and f.prim == _prim_of(key_value, f):
            values[f.name] = key_value
            key_value = _UNSET
        elif f.name in KEY_FIELDS and req is not None and req_msg is not None:
            found, value = _copy_key(f, req, req_msg, version)
            if found:
                values[f.name] = value
        elif has_error and f.prim == "int64" and f.kind == "prim" and f.default is _UNSET:
            values[f.name] = -1
    return resp.cls(**values)


def _prim_of(value: Any, f: FieldSpec) -> str | None:
    """``f.prim`` when ``value`` can fill a field of that primitive type (the element of a primitive array)."""
    if isinstance(value, bool):
        return "bool" if f.prim == "bool" else None
    if isinstance(value, int):
        return f.prim if f.prim in ("int8", "int16", "int32", "int64") else None
    if isinstance(value, str):
        return "string" if f.prim == "string" else None
    return f.prim if f.prim == "uuid" else None


def error_response(api: ApiSpec, version: int, request: Message, code: int | ErrorCode) -> Message:
    """The response to ``request`` at ``version`` with ``code`` in every error field, mirroring its entries."""
    return build_struct(api.name, api.response, api.request, request, version, int(code))


# -- per-partition faults -----------------------------------------------------------------------------
@dataclass(frozen=True)
class PartitionMatch:
    """The partitions a fault targets: ``topic`` (by name) and one ``partition`` or all (None)."""

    topic: str
    partition: int | None = None

    def topic_matches(self, name: str | None) -> bool:
        return name == self.topic

    def partition_matches(self, partition: int) -> bool:
        return self.partition is None or partition == self.partition


def _topic_of(spec: StructSpec, msg: Message, version: int, resolve: TopicResolver | None) -> str | None:
    key = _first_key(spec, version, TOPIC_KEYS)
    if key is not None and key.prim == "string":
        return getattr(msg, key.name)
    id_field = _first_key(spec, version, ("topic_id",))
    if id_field is not None and resolve is not None:
        return resolve(msg.topic_id)  # type: ignore[attr-defined]  # a generated class with a topic_id field
    return None


def _clone(msg: Message, **changes: Any) -> Message:
    values = {f.name: getattr(msg, f.name) for f in msg._spec.fields}
    values.update(changes)
    clone = type(msg)(**values)
    clone.unknown_tags = msg.unknown_tags
    return clone


def _partition_array(
    api_name: str, req: StructSpec, resp: StructSpec, version: int
) -> tuple[str, FieldSpec, FieldSpec] | None:
    """(request field, its spec, response field spec) of this struct's mirrored array of partition entries."""
    for resp_name, req_name in paired_arrays(api_name, req, resp, version):
        rf, qf = resp.field(resp_name), req.field(req_name)
        elem_has_partition = (
            partition_key(qf.struct, version) is not None if qf.struct is not None else qf.prim == "int32"
        )
        if elem_has_partition and partition_key(rf.struct_spec, version) is not None:
            return req_name, qf, rf
    return None


def split_request(
    api: ApiSpec, version: int, request: Message, match: PartitionMatch, resolve: TopicResolver | None = None
) -> tuple[Message, Message | None]:
    """``request`` without the partition entries ``match`` names, and a copy holding only those (None when
    the request has none of them). Topic entries left without partitions are dropped from the first."""
    kept, removed = _split(api.name, api.request, api.response, request, version, match, resolve)
    assert kept is not None, "the top level is never dropped"
    return kept, removed


def _split(
    api_name: str,
    req: StructSpec,
    resp: StructSpec,
    msg: Message,
    version: int,
    match: PartitionMatch,
    resolve: TopicResolver | None,
) -> tuple[Message | None, Message | None]:
    part = _partition_array(api_name, req, resp, version)
    if part is not None and _topic_of(req, msg, version, resolve) is not None:  # a topic entry
        if not match.topic_matches(_topic_of(req, msg, version, resolve)):
            return msg, None
        name, qf, _ = part
        items = getattr(msg, name) or []
        if qf.struct is not None:
            key = partition_key(qf.struct, version)
            assert key is not None
            hit = [match.partition_matches(getattr(i, key.name)) for i in items]
        else:
            hit = [match.partition_matches(i) for i in items]
        gone = [i for i, h in zip(items, hit, strict=True) if h]
        if not gone:
            return msg, None
        left = [i for i, h in zip(items, hit, strict=True) if not h]
        return (_clone(msg, **{name: left}) if left else None), _clone(msg, **{name: gone})
    kept_changes: dict[str, Any] = {}
    removed_changes: dict[str, Any] = {}
    for resp_name, req_name in paired_arrays(api_name, req, resp, version):
        qf = req.field(req_name)
        items = getattr(msg, req_name)
        removed_changes[req_name] = []
        if qf.struct is None or not items:
            continue
        rf = resp.field(resp_name)
        left, gone = [], []
        for item in items:
            k, r = _split(api_name, qf.struct, rf.struct_spec, item, version, match, resolve)
            if k is not None:
                left.append(k)
            if r is not None:
                gone.append(r)
        if gone:
            kept_changes[req_name] = left
            removed_changes[req_name] = gone
    if not kept_changes:
        return msg, None
    return _clone(msg, **kept_changes), _clone(msg, **removed_changes)


def count_partitions(api: ApiSpec, version: int, request: Message) -> int:
    """How many partition entries ``request`` holds (see the module doc)."""
    return _count(api.name, api.request, api.response, request, version)


def _count(api_name: str, req: StructSpec, resp: StructSpec, msg: Message, version: int) -> int:
    part = _partition_array(api_name, req, resp, version)
    if part is not None:
        return len(getattr(msg, part[0]) or [])
    total = 0
    for resp_name, req_name in paired_arrays(api_name, req, resp, version):
        qf = req.field(req_name)
        if qf.struct is not None:
            rf = resp.field(resp_name)
            total += sum(_count(api_name, qf.struct, rf.struct_spec, i, version) for i in getattr(msg, req_name) or [])
    return total


def is_partitioned(api: ApiSpec) -> bool:
    """Whether some version of ``api`` has topic entries with partition entries (a per-partition fault fits)."""
    for version in range(api.min_version, api.max_version + 1):
        if _has_partitions(api.name, api.request, api.response, version):
            return True
    return False


def _has_partitions(api_name: str, req: StructSpec, resp: StructSpec, version: int) -> bool:
    if _partition_array(api_name, req, resp, version) is not None:
        return True
    for resp_name, req_name in paired_arrays(api_name, req, resp, version):
        qf = req.field(req_name)
        if qf.struct is not None and _has_partitions(api_name, qf.struct, resp.field(resp_name).struct_spec, version):
            return True
    return False


def _key(spec: StructSpec, msg: Message, version: int) -> tuple[Any, ...]:
    return tuple(getattr(msg, f.name) for f in _fields_at(spec, version) if f.name in KEY_FIELDS and f.kind == "prim")


def merge_responses(api: ApiSpec, version: int, into: Message, extra: Message) -> Message:
    """Merge ``extra``'s entries into response ``into`` (in place; returned): elements with the same key fields
    merge, a partition entry of ``extra`` replaces ``into``'s, other elements are appended."""
    _merge(api.response, into, extra, version)
    return into


def _merge(spec: StructSpec, into: Message, extra: Message, version: int) -> None:
    for f in _fields_at(spec, version):
        if f.kind != "array" or f.struct is None:
            continue
        more = getattr(extra, f.name) or []
        if not more:
            continue
        mine = getattr(into, f.name)
        if mine is None:
            mine = []
            setattr(into, f.name, mine)
        elem = f.struct
        index = {_key(elem, m, version): i for i, m in enumerate(mine)}
        leaf = partition_key(elem, version) is not None
        for item in more:
            at = index.get(_key(elem, item, version))
            if at is None:
                index[_key(elem, item, version)] = len(mine)
                mine.append(item)
            elif leaf:
                mine[at] = item
            else:
                _merge(elem, mine[at], item, version)


def partition_error_response(api: ApiSpec, version: int, removed: Message, code: int) -> Message:
    """The response entries answering the partition entries of ``removed`` (a ``split_request`` part) with
    ``code``; error fields outside partition entries are 0."""
    return build_struct(api.name, api.response, api.request, removed, version, int(code), partitions_only=True)
