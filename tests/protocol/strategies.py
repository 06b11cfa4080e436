"""Values for any declared struct at any version: hypothesis strategies and deterministic samples."""

from __future__ import annotations

import itertools
import uuid

from hypothesis import strategies as st

from spark_kafkalog.protocol.schema import FieldSpec, StructSpec

_INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
    "uint16": (0, (1 << 16) - 1),
    "uint32": (0, (1 << 32) - 1),
}


def _prim_strategy(prim: str) -> st.SearchStrategy:
    if prim in _INT_RANGES:
        lo, hi = _INT_RANGES[prim]
        return st.integers(lo, hi)
    if prim == "bool":
        return st.booleans()
    if prim == "float64":
        return st.floats(allow_nan=False)
    if prim == "uuid":
        return st.uuids()
    if prim == "string":
        return st.text(max_size=12)
    return st.binary(max_size=24)  # bytes, records


def _field_strategy(f: FieldSpec, version: int, flexible: bool) -> st.SearchStrategy:
    if f.kind == "prim":
        base = _prim_strategy(f.prim)
    elif f.kind == "struct":
        base = struct_strategy(f.struct, version, flexible)
    elif f.prim:
        base = st.lists(_prim_strategy(f.prim), max_size=3)
    else:
        base = st.lists(struct_strategy(f.struct, version, flexible), max_size=2)
    if f.nullable_in(version):
        return st.one_of(st.none(), base)
    return base


def struct_strategy(spec: StructSpec, version: int, flexible: bool) -> st.SearchStrategy:
    """Instances of ``spec.cls`` valid at ``version``; absent fields keep their defaults."""
    kwargs = {f.name: _field_strategy(f, version, flexible) for f in spec.fields if f.in_version(version)}
    known_tags = {f.tag for f in spec.fields if f.tag is not None}
    if flexible:
        kwargs["unknown_tags"] = st.one_of(
            st.none(),
            st.dictionaries(
                st.integers(0, 200).filter(lambda t: t not in known_tags), st.binary(max_size=6), min_size=1, max_size=2
            ),
        )
    return st.builds(spec.cls, **kwargs)


def sample(spec: StructSpec, version: int, counter: itertools.count | None = None) -> object:
    """A deterministic instance with a distinct non-default value in every field present at ``version``.

    Arrays get one element (two for arrays of primitives), nullable fields are filled (not null),
    record data gets a few bytes. Used for golden bytes and for the kafka-python oracle.
    """
    counter = counter if counter is not None else itertools.count(1)
    values = {}
    for f in spec.fields:
        if not f.in_version(version):
            continue
        if f.kind == "prim":
            values[f.name] = _sample_prim(f.prim, next(counter))
        elif f.kind == "struct":
            values[f.name] = sample(f.struct, version, counter)
        elif f.prim:
            values[f.name] = [_sample_prim(f.prim, next(counter)), _sample_prim(f.prim, next(counter))]
        else:
            values[f.name] = [sample(f.struct, version, counter)]
    return spec.cls(**values)


def _sample_prim(prim: str, n: int):
    if prim in _INT_RANGES:
        lo, hi = _INT_RANGES[prim]
        return lo + (n * 7919 + 3) % (min(hi, 1 << 20) - lo) if lo < 0 else n % hi
    if prim == "bool":
        return True
    if prim == "float64":
        return n + 0.5
    if prim == "uuid":
        return uuid.UUID(int=(n * 0x9E3779B97F4A7C15) & ((1 << 128) - 1))
    if prim == "string":
        return f"s{n}"
    return bytes(f"b{n}", "ascii")
