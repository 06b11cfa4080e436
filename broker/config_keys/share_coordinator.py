"""Share coordinator keys (KIP-932; section ``groups``, read by ``broker.share.share_coordinator``), in
documentation order. Names, defaults and meanings are Kafka 4.4's ``ShareCoordinatorConfig``."""

from __future__ import annotations

from .schema import ConfigKey

_K = ConfigKey

SHARE_COORDINATOR_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "share.coordinator.state.topic.num.partitions",
        "int",
        50,
        "Partitions of `__share_group_state`, the share-partitions' persisted state (share groups, KIP-932).",
        at_least=1,
        section="groups",
    ),
    _K(
        "share.coordinator.state.topic.replication.factor",
        "int",
        3,
        "Replication factor of `__share_group_state` (capped at the brokers alive when it is created, with a warning).",
        at_least=1,
        section="groups",
    ),
    _K(
        "share.coordinator.state.topic.min.isr",
        "int",
        2,
        "`min.insync.replicas` of `__share_group_state` (capped at its replication factor).",
        at_least=1,
        section="groups",
    ),
    _K(
        "share.coordinator.state.topic.segment.bytes",
        "int",
        104857600,
        "Segment size of `__share_group_state`.",
        at_least=1024,
        section="groups",
    ),
    _K(
        "share.coordinator.snapshot.update.records.per.snapshot",
        "int",
        500,
        "A share-partition's state is written as a ShareSnapshot (the whole state) followed by ShareUpdate records "
        "(what one write changed); after this many updates the next write is a new snapshot.",
        at_least=0,
        at_most=500,
        section="groups",
    ),
    _K(
        "share.coordinator.state.topic.prune.interval.ms",
        "int",
        300000,
        "How often the share coordinator deletes the records of `__share_group_state` that no share-partition's "
        "state needs any more (those before the oldest last snapshot).",
        at_least=1,
        section="groups",
    ),
)
