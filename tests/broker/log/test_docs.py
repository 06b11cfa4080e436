"""docs/log-format.md names every topic config, its broker synonym, and every file the store writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.log import TOPIC_CONFIG_KEYS
from broker.log.leader_epoch import LEADER_EPOCH_CHECKPOINT
from broker.log.log_manager import (
    CLEAN_SHUTDOWN_FILE,
    CLEANER_CHECKPOINT,
    LOCK_FILE,
    LOG_START_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_CHECKPOINT,
)

DOC = (Path(__file__).resolve().parents[3] / "docs" / "log-format.md").read_text()


@pytest.mark.parametrize("name", sorted(TOPIC_CONFIG_KEYS))
def test_every_topic_config_and_its_synonym_is_documented(name):
    synonym = TOPIC_CONFIG_KEYS[name].synonym
    assert f"| `{name}` | `{synonym}`" in DOC if synonym else f"| `{name}` | none (topic only" in DOC


@pytest.mark.parametrize(
    "name",
    [
        CLEAN_SHUTDOWN_FILE,
        CLEANER_CHECKPOINT,
        LOCK_FILE,
        LOG_START_CHECKPOINT,
        RECOVERY_POINT_CHECKPOINT,
        REPLICATION_CHECKPOINT,
        LEADER_EPOCH_CHECKPOINT,
        ".deleted",
        ".cleaned",
        ".swap",
        ".snapshot",
        ".timeindex",
        "-delete",
    ],
)
def test_every_file_name_is_documented(name):
    assert name in DOC
