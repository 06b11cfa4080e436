"""The versions Apache Kafka 4.4's Java client negotiates with kafkalog (``kafka-broker-api-versions``): for every
API kafkalog serves, the usable version is the newest Kafka 4.4's client has (its message specs, read from the
peers' kafka-clients jar: the newest stable version), except the few listed in ``BEHIND_KAFKA_44`` where
kafkalog's documented newest is older; and what kafkalog advertises is exactly what its handlers serve. ApiVersions'
features (group.version, transaction.version) and v5's cluster/node check answer as a live Kafka 4.4 broker does."""

from __future__ import annotations

import re

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey

from .test_spec_conformance_kafka44 import _newest_stable, request_specs_44
from .tools import run_tool

pytestmark = pytest.mark.compat

# APIs where kafkalog serves less than Kafka 4.4's newest, and why (docs/broker-apis.md says the same).
BEHIND_KAFKA_44 = {
    ApiKey.WRITE_TXN_MARKERS: 1,  # v2 (KIP-1228) carries each marker's transaction version: not served
    ApiKey.LIST_CLIENT_METRICS_RESOURCES: 0,  # v1 is ListConfigResources (KIP-1142): not served
}

# "\tProduce(0): 0 to 13 [usable: 13]," / "\tSaslHandshake(17): 0 to 1 [usable: 1]," / "... 0 [usable: 0],"
_LINE = re.compile(r"^\s*(?P<name>[A-Za-z]+)\((?P<key>\d+)\): (?P<range>.+?),?$")
_RANGE = re.compile(r"^(?P<lo>\d+)(?: to (?P<hi>\d+))? \[usable: (?P<usable>\d+)\]$")


def negotiated(output: str) -> dict[int, tuple[int, int, int] | str]:
    """API key -> (min, max, usable) kafkalog advertises and the client would use, or the tool's word
    (UNSUPPORTED: the client knows the API, the broker does not serve it)."""
    out: dict[int, tuple[int, int, int] | str] = {}
    for line in output.splitlines():
        m = _LINE.match(line)
        if m is None:
            continue
        r = _RANGE.match(m["range"])
        key = int(m["key"])
        out[key] = m["range"] if r is None else (int(r["lo"]), int(r["hi"] or r["lo"]), int(r["usable"]))
    return out


def test_kafka_44_client_uses_the_newest_version_of_every_api_kafkalog_serves(kafkalog):
    out = run_tool("kafka-broker-api-versions", "--bootstrap-server", kafkalog.bootstrap_servers).stdout
    got = negotiated(out)
    served = {key: (lo, hi) for key, lo, hi in kafkalog.broker.handlers.version_ranges()}
    specs = request_specs_44()
    problems = []
    for key, (lo, hi) in sorted(served.items()):
        spec = specs[key]
        if spec["validVersions"] == "none":  # ControlledShutdown: Kafka 4.x's client no longer knows it
            continue
        want = BEHIND_KAFKA_44.get(key, _newest_stable(spec))
        answer = got.get(key)
        if answer != (lo, hi, want) or hi != want:
            problems.append(f"{API_BY_KEY[key].name}({key}): served {lo}-{hi}, tool says {answer}, want usable {want}")
    assert not problems, "\n".join(problems) + "\n" + out
    for key, behind in BEHIND_KAFKA_44.items():  # still behind: a served newer version must leave the list
        assert behind < _newest_stable(specs[key]), API_BY_KEY[key].name


@pytest.fixture(scope="module")
def kafka44(tmp_path_factory):
    from .kafka_broker import KafkaBroker
    from .peers import KAFKA_44

    broker = KafkaBroker(KAFKA_44, tmp_path_factory.mktemp("kafka44-api-versions"))
    broker.start()
    yield broker
    broker.stop()


def _api_versions(bootstrap: str, version: int, **fields):
    from tests.broker.wire import Wire

    R = API_BY_KEY[ApiKey.API_VERSIONS].Request
    with Wire(bootstrap) as w:
        return w.call(ApiKey.API_VERSIONS, version, R(client_software_name="t", client_software_version="1", **fields))


def test_group_and_transaction_features_and_the_v5_target_check_answer_as_kafka_44(kafka44, kafkalog):
    answers = {}
    for name, bootstrap in (("kafka", kafka44.bootstrap_servers), ("kafkalog", kafkalog.bootstrap_servers)):
        plain = _api_versions(bootstrap, 4)
        wanted = ("group.version", "transaction.version")
        answers[name] = (
            {f.name: (f.min_version, f.max_version) for f in plain.supported_features if f.name in wanted},
            {f.name: (f.min_version_level, f.max_version_level) for f in plain.finalized_features if f.name in wanted},
            _api_versions(bootstrap, 5, cluster_id="not-this-cluster", node_id=0).error_code,
            _api_versions(bootstrap, 5, cluster_id="not-this-cluster").error_code,
        )
    assert answers["kafkalog"] == answers["kafka"]
    assert answers["kafka"][1] == {"group.version": (1, 1), "transaction.version": (2, 2)}
