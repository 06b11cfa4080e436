"""``auto.create.topics.enable``: Metadata creates a missing topic (with ``num.partitions`` and
``default.replication.factor``) only when the setting is on and the request allows it; an illegal name is
INVALID_TOPIC_EXCEPTION and never created in either mode; Produce and Fetch never create topics."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ..conftest import start_brokers
from ..requests import batch, fetch, produce, unique
from ..wire import Wire

K = ApiKey
MD = API_BY_KEY[K.METADATA].Request
ILLEGAL = ["x" * 250, "a/b", "..", ".", "", "orders\n", "caf\u00e9", "with space"]


@pytest.fixture(scope="module", params=[True, False], ids=["enabled", "disabled"])
def mode(request, tmp_path_factory):
    """(enabled, broker): a broker with ``auto.create.topics.enable`` on or off and 3 partitions by default."""
    (b,) = start_brokers(1, tmp_path_factory, auto_create_topics_enable=request.param, num_partitions=3)
    yield request.param, b
    b.stop()


@pytest.fixture
def wire(mode):
    with Wire(mode[1].bootstrap_servers) as w:
        yield w


def metadata(w, names, version=12, allow=True):
    fields = {"allow_auto_topic_creation": allow} if version >= 4 else {}
    return w.call(K.METADATA, version, topics=[MD.MetadataRequestTopic(name=n) for n in names], **fields).topics


def exists(b, name) -> bool:
    in_registry = name in b.broker.registry.topics() or name in b.broker.metadata.topics
    dirs = [p for d in b.config.log_dirs for p in Path(d).iterdir() if p.name.startswith(f"{name}-")] if name else []
    return in_registry or bool(dirs)


@pytest.mark.parametrize("version", [1, 3, 4, 9, 12])
def test_metadata_creates_a_missing_topic_only_when_enabled(wire, mode, version):
    enabled, b = mode
    name = unique()
    (t,) = metadata(wire, [name], version=version)
    if enabled:
        assert t.error_code in (ErrorCode.NONE, ErrorCode.LEADER_NOT_AVAILABLE)
        assert exists(b, name)
        assert len(b.broker.registry.topics()[name].partitions) == 3  # num.partitions
        assert {len(r) for r in b.broker.registry.topics()[name].partitions.values()} == {1}  # the default RF
    else:
        assert t.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert not exists(b, name)


def test_metadata_v4_and_later_never_create_when_the_request_disallows_it(wire, mode):
    _, b = mode
    name = unique()
    (t,) = metadata(wire, [name], version=12, allow=False)
    assert t.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert not exists(b, name)


@pytest.mark.parametrize("version", [1, 4, 12])
def test_illegal_names_are_answered_invalid_and_never_created(wire, mode, version):
    _, b = mode
    before = set(b.broker.registry.topics())
    topics = metadata(wire, ILLEGAL, version=version)
    assert [(t.name, t.error_code) for t in topics] == [(n, ErrorCode.INVALID_TOPIC_EXCEPTION) for n in ILLEGAL]
    assert set(b.broker.registry.topics()) == before
    assert not any(exists(b, n) for n in ILLEGAL if n not in ("", ".", ".."))


def test_produce_and_fetch_never_create_topics(wire, mode):
    _, b = mode
    name = unique()
    assert produce(wire, name, batch([b"x"])).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert fetch(wire, name, 0).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert not exists(b, name)
