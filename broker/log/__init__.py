"""The log store: segmented, indexed, crash-safe partition logs with retention and compaction.

``LogManager`` owns every ``PartitionLog`` under ``log.dirs``; a ``PartitionLog`` is a list of
``LogSegment``s (``.log`` + ``.index`` + ``.timeindex``); ``LogConfig`` holds a topic's settings. Reads
return ``FileRegion``s for ``sendfile``. The on-disk format is described in ``docs/log-format.md``.
"""

from broker.log.clock import SYSTEM_CLOCK, Clock, ManualClock
from broker.log.config import TOPIC_CONFIG_KEYS, ConfigEntry, ConfigSource, LogConfig, TopicConfigKey
from broker.log.errors import (
    InvalidOffsetError,
    LogAppendError,
    LogClosedError,
    LogError,
    OffsetOutOfRangeError,
)
from broker.log.file_region import FileRegion
from broker.log.log_manager import LogManager
from broker.log.partition_log import AppendInfo, FetchData, PartitionLog

__all__ = [
    "AppendInfo",
    "Clock",
    "ConfigEntry",
    "ConfigSource",
    "FetchData",
    "FileRegion",
    "InvalidOffsetError",
    "LogAppendError",
    "LogClosedError",
    "LogConfig",
    "LogError",
    "LogManager",
    "ManualClock",
    "OffsetOutOfRangeError",
    "PartitionLog",
    "SYSTEM_CLOCK",
    "TOPIC_CONFIG_KEYS",
    "TopicConfigKey",
]
