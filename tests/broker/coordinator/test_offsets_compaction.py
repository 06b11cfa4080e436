"""__consumer_offsets is compacted by the log cleaner, and a coordinator loading the compacted log gets the
last commits (Kafka relies on the same: the topic is the store, compaction bounds it)."""

from __future__ import annotations

import uuid

from broker.coordinator.offset_store import iter_log_records
from broker.coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from broker.server import EmbeddedBroker
from tests.broker.coordinator.test_group_coordinator import (
    GROUP_SETTINGS,
    _commit,
    _coordinated_by,
    _create_topic,
    _fetch,
)
from tests.broker.wire import Wire


def test_the_cleaner_compacts_the_offsets_topic_and_a_restart_loads_the_last_commits(tmp_path):
    name = f"memory:compact-{uuid.uuid4().hex[:8]}"
    g = "g-compact"
    settings = {**GROUP_SETTINGS, "offsets_topic_segment_bytes": 4096}
    b = EmbeddedBroker(0, zookeeper_connect=name, log_dir=tmp_path, **settings).start()
    part = partition_for(g, GROUP_SETTINGS["offsets_topic_num_partitions"])
    try:
        _create_topic(b, "events", 2)
        _coordinated_by(b, g)
        with Wire(b.bootstrap_servers) as w:
            for i in range(300):  # many commits of the same two keys: many segments
                assert _commit(w, g, "events", {0: i, 1: 1000 + i}) == {0: 0, 1: 0}
        plog = b.broker.log_manager.get_log(OFFSETS_TOPIC, part)
        before = plog.log_end_offset
        segments_before = len(plog.segments)
        stats = b.call(lambda: b.broker.run_blocking(lambda: b.broker.log_manager.run_cleaner_once(force=True)))
        assert stats and segments_before > 2
        with Wire(b.bootstrap_servers) as w:
            _, got = _fetch(w, g, "events", [0, 1])
        assert got == {0: (299, 0), 1: (1299, 0)}
    finally:
        b.stop()
    b = EmbeddedBroker(0, zookeeper_connect=name, log_dir=tmp_path, **settings).start()
    try:
        _coordinated_by(b, g)
        plog = b.broker.log_manager.get_log(OFFSETS_TOPIC, part)
        kept = b.call(lambda: _count(iter_log_records(plog)))
        assert kept < before / 10, f"{kept} of {before} records kept after compaction"
        with Wire(b.bootstrap_servers) as w:
            _, got = _fetch(w, g, "events", [0, 1])
        assert got == {0: (299, 0), 1: (1299, 0)}  # loaded from the compacted log: the last commits
    finally:
        b.stop()


async def _count(records) -> int:
    return sum(1 for _ in records)
