"""The (API, version) pairs the target clients actually send (protocol-clients.md, section 6)."""

GOLDEN_CASES: tuple[tuple[str, int], ...] = (
    ("ApiVersions", 3), ("ApiVersions", 4),
    ("Metadata", 4), ("Metadata", 12),
    ("Produce", 7), ("Produce", 9),
    ("Fetch", 11), ("Fetch", 12),
    ("ListOffsets", 2), ("ListOffsets", 7),
    ("FindCoordinator", 2), ("FindCoordinator", 3),
    ("JoinGroup", 5), ("JoinGroup", 7),
    ("SyncGroup", 3), ("SyncGroup", 5),
    ("Heartbeat", 3), ("Heartbeat", 4),
    ("LeaveGroup", 1), ("LeaveGroup", 5),
    ("OffsetCommit", 7), ("OffsetCommit", 8),
    ("OffsetFetch", 7),
    ("InitProducerId", 4),
    ("OffsetForLeaderEpoch", 2), ("OffsetForLeaderEpoch", 4),
    ("CreateTopics", 4), ("CreateTopics", 7),
    ("DeleteTopics", 1), ("DeleteTopics", 4), ("DeleteTopics", 6),
)
