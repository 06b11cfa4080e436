"""Every declaration matches Kafka's JSON message specs field by field, within our declared versions."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.protocol.apis import API_BY_KEY, DATA_BY_NAME
from spark_kafkalog.protocol.schema import _PRIM_DEFAULTS, _UNSET, FieldSpec, StructSpec, VersionRange

from .spec_files import load_spec, requires_specs, snake

pytestmark = requires_specs

# Versions Kafka 4.x added after the JSON specs in ../shared were taken (what Kafka 4.4's clients send): compared
# here up to the spec's last version; the fields of the versions past it are compared with Kafka 4.4's own specs,
# read from the peers' kafka-clients jar, by tests/compat/test_spec_conformance_kafka44.py (and
# tests/protocol/test_consumer_group_describe.py checks ConsumerGroupDescribe v1 against bytes Kafka 4.4 wrote).
AHEAD_OF_SPEC = {
    "Produce": 13,
    "TxnOffsetCommit": 6,
    "OffsetCommit": 10,
    "OffsetFetch": 10,
    "ConsumerGroupDescribe": 1,
    "Fetch": 18,
    "Metadata": 13,
    "DescribeLogDirs": 5,
    "DeleteGroups": 3,
    "DescribeCluster": 2,
    "ListOffsets": 11,
    "DescribeGroups": 6,
    "ListTransactions": 2,
    "AlterPartitionReassignments": 1,
    "ApiVersions": 5,
    "WriteShareGroupState": 1,
}

# APIs whose declared versions ../shared's specs do not describe at all: KIP-932's share-group APIs became stable
# (ShareGroupHeartbeat/ShareGroupDescribe/ShareFetch/ShareAcknowledge v1, Kafka 4.1) after those specs were taken,
# which hold only the early-access v0 Kafka 4.4 no longer serves; ReadShareGroupStateSummary's v0 response gained
# LeaderEpoch before it was released; the share-group offset APIs (90-92) are missing from them. They are compared field by field, in every declared version, with Kafka 4.4's own specs by
# tests/compat/test_spec_conformance_kafka44.py.
KAFKA_44_ONLY = frozenset(
    (
        "ShareGroupHeartbeat",
        "ShareGroupDescribe",
        "ShareFetch",
        "ShareAcknowledge",
        "ReadShareGroupStateSummary",
        "DescribeShareGroupOffsets",
        "AlterShareGroupOffsets",
        "DeleteShareGroupOffsets",
    )
)


def _spec_default(jf: dict, f: FieldSpec):
    """The default the spec gives ``jf``, or the standard default of its type when it gives none."""
    raw = jf.get("default")
    if raw is None:
        return [] if f.kind == "array" else f.struct.cls() if f.kind == "struct" else _PRIM_DEFAULTS[f.prim]
    if raw == "null":
        return None
    t = jf["type"]
    if t == "bool":
        return {"true": True, "false": False}[str(raw).lower()]
    if t in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        return int(str(raw), 0)
    if t == "float64":
        return float(raw)
    if t == "uuid":
        return uuid.UUID(raw) if raw else uuid.UUID(int=0)
    return raw


def _compare_struct(ours: StructSpec, jfields: list, common: dict, rng: VersionRange, path: str, problems: list):
    theirs = [
        jf
        for jf in jfields
        if VersionRange.parse(jf.get("versions", "0+")) is not None
        and VersionRange.parse(jf.get("versions", "0+")).intersect(rng) is not None
    ]
    our_names = [f.name for f in ours.fields if f.versions.intersect(rng) is not None]
    their_names = [snake(jf["name"]) for jf in theirs]
    if our_names != their_names:
        problems.append(f"{path}: fields {our_names} != spec {their_names}")
        return
    for f, jf in zip([f for f in ours.fields if f.versions.intersect(rng) is not None], theirs):
        fpath = f"{path}.{f.name}"
        jv = VersionRange.parse(jf.get("versions", "0+")).intersect(rng)
        if f.versions.intersect(rng) != jv:
            problems.append(f"{fpath}: versions {f.versions.intersect(rng)} != spec {jv}")
            continue
        jnull = VersionRange.parse(jf.get("nullableVersions", "none"))
        jnull = jnull.intersect(jv) if jnull else None
        onull = f.nullable.intersect(jv) if f.nullable else None
        if onull != jnull:
            problems.append(f"{fpath}: nullable {onull} != spec {jnull}")
        jtag = jf.get("tag")
        if f.tag != jtag:
            problems.append(f"{fpath}: tag {f.tag} != spec {jtag}")
        elif jtag is not None:
            tv = VersionRange.parse(jf["taggedVersions"]).intersect(rng)
            if tv != jv:
                problems.append(f"{fpath}: tagged versions {tv} differ from versions {jv} (not expressible)")
        jt = jf["type"]
        if f.type_str != jt:
            problems.append(f"{fpath}: type {f.type_str} != spec {jt}")
            continue
        if (f.default is not _UNSET) != ("default" in jf):
            problems.append(
                f"{fpath}: default= declared {'but' if f.default is not _UNSET else 'not, but'} the spec "
                f"{'gives none' if f.default is not _UNSET else 'gives ' + repr(jf['default'])}"
            )
        if f.struct is not None:
            sub = jf.get("fields") or common.get(jt.removeprefix("[]"))
            if sub is None:
                problems.append(f"{fpath}: spec struct {jt} has no fields")
            else:
                _compare_struct(f.struct, sub, common, jv, fpath, problems)
        if f.make_default() != _spec_default(jf, f):
            problems.append(f"{fpath}: default {f.make_default()!r} != spec {jf.get('default')!r}")


@pytest.mark.parametrize(
    "key", sorted(k for k, a in API_BY_KEY.items() if a.name not in KAFKA_44_ONLY), ids=lambda k: API_BY_KEY[k].name
)
def test_declaration_matches_kafka_spec(key):
    api = API_BY_KEY[key]
    problems: list[str] = []
    for kind, struct in (("Request", api.request), ("Response", api.response)):
        spec = load_spec(api.name + kind)
        assert spec["apiKey"] == api.key, f"{api.name}{kind}: api key {api.key} != spec {spec['apiKey']}"
        valid = VersionRange.parse(spec["validVersions"])
        assert valid is not None
        compared = api.versions.intersect(valid)  # the versions the spec describes
        if api.name in AHEAD_OF_SPEC and valid.hi < AHEAD_OF_SPEC[api.name]:
            valid = VersionRange(valid.lo, AHEAD_OF_SPEC[api.name])
        assert api.versions.intersect(valid) == api.versions, f"{api.name}: {api.versions} not within {valid}"
        flex = VersionRange.parse(spec["flexibleVersions"])
        ours = api.flexible.intersect(api.versions) if api.flexible else None
        theirs = flex.intersect(api.versions) if flex else None
        assert ours == theirs, f"{api.name}{kind}: flexible {ours} != spec {theirs}"
        common = {c["name"]: c["fields"] for c in spec.get("commonStructs", [])}
        assert compared is not None, f"{api.name}: no version of {api.versions} is in the spec"
        _compare_struct(struct, spec["fields"], common, compared, api.name + kind, problems)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(DATA_BY_NAME))
def test_data_declaration_matches_kafka_spec(name):
    data = DATA_BY_NAME[name]
    spec = load_spec(name)
    valid = VersionRange.parse(spec["validVersions"])
    assert data.versions.intersect(valid) == data.versions
    problems: list[str] = []
    common = {c["name"]: c["fields"] for c in spec.get("commonStructs", [])}
    _compare_struct(data.struct, spec["fields"], common, data.versions, name, problems)
    assert not problems, "\n".join(problems)


def test_request_header_fields_match_kafka_spec():
    spec = load_spec("RequestHeader")
    names = [snake(f["name"]) for f in spec["fields"]]
    # hand-written in messages.py: api_key, api_version, correlation_id, client_id (int16 length always)
    assert names == ["request_api_key", "request_api_version", "correlation_id", "client_id"]
    client_id = spec["fields"][3]
    assert client_id["flexibleVersions"] == "none" and client_id["nullableVersions"] == "1+"
