"""The versions we declare past ../shared's specs match Kafka 4.4's own message specs, read from the
kafka-clients jar `make peers` fetched (reference data read in place, never copied into the project); part of
`make compat`.

``test_spec_conformance`` compares each declaration up to the last version ../shared's specs know; the versions
in its ``AHEAD_OF_SPEC`` are compared here, field by field, against Kafka 4.4's ``common/message/*.json``, and so
are all the declared versions of the APIs in its ``KAFKA_44_ONLY`` (which ../shared's specs do not describe).
Also: no API is declared past the newest stable version Kafka 4.4 has (an unstable version is one its clients
never send and kafkalog must not advertise).
"""

from __future__ import annotations

import json
import zipfile
from functools import cache

import pytest

from spark_kafkalog.protocol.apis import API_BY_KEY
from spark_kafkalog.protocol.schema import VersionRange
from tests.protocol.spec_files import load_spec, requires_specs
from tests.protocol.test_spec_conformance import AHEAD_OF_SPEC, KAFKA_44_ONLY, _compare_struct

from .peers import KAFKA_44

JAR = KAFKA_44.dir / "kafka-clients-4.4.0.jar"

# compat: needs the jars `make peers` fetches (make compat fetches them first)
pytestmark = [requires_specs, pytest.mark.compat]


# Fields Kafka renamed after ../shared's specs (the wire is unchanged): their 4.4 name -> ours.
RENAMED = {("TxnOffsetCommitRequest", "GenerationIdOrMemberEpoch"): "GenerationId"}


def _rename(message: str, fields: list) -> None:
    for f in fields:
        f["name"] = RENAMED.get((message, f["name"]), f["name"])
        _rename(message, f.get("fields", []))


@cache
def load_44_spec(name: str) -> dict:
    """``common/message/<name>.json`` from Kafka 4.4.0's kafka-clients jar (JSON with ``//`` comments)."""
    with zipfile.ZipFile(JAR) as jar:
        text = jar.read(f"common/message/{name}.json").decode()
    spec = json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))
    _rename(name, spec.get("fields", []))
    return spec


@cache
def request_specs_44() -> dict[int, dict]:
    """Kafka 4.4's request specs by api key (names change: ListClientMetricsResources is ListConfigResources)."""
    with zipfile.ZipFile(JAR) as jar:
        names = [n for n in jar.namelist() if n.startswith("common/message/") and n.endswith("Request.json")]
    specs = (load_44_spec(n.removeprefix("common/message/").removesuffix(".json")) for n in names)
    return {s["apiKey"]: s for s in specs}


def _newest_stable(spec: dict) -> int:
    valid = VersionRange.parse(spec["validVersions"])
    assert valid is not None
    return valid.hi - 1 if spec.get("latestVersionUnstable") else valid.hi


@pytest.mark.parametrize("name", sorted(AHEAD_OF_SPEC))
def test_versions_past_the_shared_specs_match_kafka_44(name):
    api = next(a for a in API_BY_KEY.values() if a.name == name)
    problems: list[str] = []
    for kind, struct in (("Request", api.request), ("Response", api.response)):
        shared_hi = VersionRange.parse(load_spec(name + kind)["validVersions"]).hi
        spec = load_44_spec(name + kind)
        ahead = api.versions.intersect(VersionRange(shared_hi + 1, api.versions.hi))
        assert ahead is not None, f"{name}: nothing declared past the shared spec's v{shared_hi}"
        assert api.versions.hi <= _newest_stable(spec), (
            f"{name}: v{api.versions.hi} is past Kafka 4.4's stable versions"
        )
        flex = VersionRange.parse(spec["flexibleVersions"])
        assert (api.flexible.intersect(ahead) if api.flexible else None) == (flex.intersect(ahead) if flex else None)
        common = {c["name"]: c["fields"] for c in spec.get("commonStructs", [])}
        _compare_struct(struct, spec["fields"], common, ahead, f"{name}{kind}", problems)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(KAFKA_44_ONLY))
def test_declarations_the_shared_specs_lack_match_kafka_44(name):
    api = next(a for a in API_BY_KEY.values() if a.name == name)
    problems: list[str] = []
    for kind, struct in (("Request", api.request), ("Response", api.response)):
        spec = load_44_spec(name + kind)
        assert spec["apiKey"] == api.key, f"{name}{kind}: api key {api.key} != spec {spec['apiKey']}"
        valid = VersionRange.parse(spec["validVersions"])
        assert valid is not None and api.versions.intersect(valid) == api.versions, (
            f"{name}: {api.versions} not in {valid}"
        )
        assert api.versions.hi <= _newest_stable(spec), (
            f"{name}: v{api.versions.hi} is past Kafka 4.4's stable versions"
        )
        flex = VersionRange.parse(spec["flexibleVersions"])
        ours = api.flexible.intersect(api.versions) if api.flexible else None
        assert ours == (flex.intersect(api.versions) if flex else None), f"{name}{kind}: flexible versions differ"
        common = {c["name"]: c["fields"] for c in spec.get("commonStructs", [])}
        _compare_struct(struct, spec["fields"], common, api.versions, f"{name}{kind}", problems)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("key", sorted(API_BY_KEY), ids=lambda k: API_BY_KEY[k].name)
def test_no_version_is_declared_past_kafka_44s_newest_stable(key):
    api = API_BY_KEY[key]
    spec = request_specs_44()[key]
    if spec["validVersions"] == "none":
        assert api.name == "ControlledShutdown"  # removed from Kafka 4.x's clients; kafkalog serves older ones
        return
    assert api.versions.hi <= _newest_stable(spec), (
        f"{api.name}: v{api.versions.hi} > Kafka 4.4's {_newest_stable(spec)}"
    )
