"""Group, committed-offset and transaction keys (sections ``groups`` and ``transactions``, read by
``broker.coordinator``), in documentation order."""

from __future__ import annotations

from .schema import ConfigKey

_K = ConfigKey

GROUP_KEYS: tuple[ConfigKey, ...] = (
    _K("offsets.topic.num.partitions", "int", 50, "Partitions of `__consumer_offsets`.", at_least=1, section="groups"),
    _K(
        "offsets.topic.replication.factor",
        "int",
        3,
        "Replication factor of `__consumer_offsets` (Kafka's default 3). Created with at most as many replicas as "
        "brokers are alive then (a warning says so when fewer), so a one-broker cluster works unchanged.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.min.session.timeout.ms",
        "int",
        6000,
        "Smallest session timeout a member may ask for.",
        at_least=0,
        section="groups",
    ),
    _K(
        "group.max.session.timeout.ms",
        "int",
        1800000,
        "Largest session timeout a member may ask for.",
        at_least=0,
        section="groups",
    ),
    _K(
        "group.initial.rebalance.delay.ms",
        "int",
        3000,
        "Wait for more members before the first rebalance.",
        at_least=0,
        section="groups",
    ),
    _K(
        "group.max.size",
        "int",
        2147483647,
        "Most members a group may have; a further JoinGroup is answered GROUP_MAX_SIZE_REACHED.",
        at_least=1,
        section="groups",
    ),
    _K(
        "offsets.topic.segment.bytes",
        "int",
        104857600,
        "Segment size of `__consumer_offsets` (small segments make its compaction and loading faster).",
        at_least=1024,
        section="groups",
    ),
    _K(
        "offsets.retention.minutes",
        "int",
        10080,
        "Committed offsets of a group are removed this long after it became empty (after the commit for groups "
        "that only commit, and for topics a consumer group no longer subscribes to; Kafka: 7 days).",
        at_least=1,
        section="groups",
    ),
    _K(
        "offsets.retention.check.interval.ms",
        "int",
        600000,
        "How often the coordinator looks for expired offsets.",
        at_least=1,
        section="groups",
    ),
    _K(
        "offsets.commit.timeout.ms",
        "int",
        5000,
        "How long an offset commit waits for its append to `__consumer_offsets` to be acknowledged by all "
        "in-sync replicas before it fails with REQUEST_TIMED_OUT.",
        at_least=1,
        section="groups",
    ),
    _K(
        "offset.metadata.max.bytes",
        "int",
        4096,
        "Largest metadata string of a committed offset (OFFSET_METADATA_TOO_LARGE beyond).",
        at_least=0,
        section="groups",
    ),
)

TRANSACTION_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "transaction.state.log.num.partitions",
        "int",
        50,
        "Partitions of `__transaction_state`.",
        at_least=1,
        section="transactions",
    ),
    _K(
        "transaction.state.log.replication.factor",
        "int",
        3,
        "Replication factor of `__transaction_state` (capped at the brokers alive when it is created, with a warning).",
        at_least=1,
        section="transactions",
    ),
    _K(
        "transaction.state.log.min.isr",
        "int",
        2,
        "`min.insync.replicas` of `__transaction_state` (capped at its replication factor).",
        at_least=1,
        section="transactions",
    ),
    _K(
        "transaction.state.log.segment.bytes",
        "int",
        104857600,
        "Segment size of `__transaction_state`.",
        at_least=1024,
        section="transactions",
    ),
    _K(
        "transaction.max.timeout.ms",
        "int",
        900000,
        "Largest `transaction.timeout.ms` a producer may ask for (INVALID_TRANSACTION_TIMEOUT beyond).",
        at_least=1,
        section="transactions",
    ),
    _K(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "int",
        10000,
        "How often the coordinator aborts transactions open longer than their timeout (fencing their producers).",
        at_least=1,
        section="transactions",
    ),
    _K(
        "transactional.id.expiration.ms",
        "int",
        604800000,
        "A transactional id without a transaction for this long is removed (Kafka: 7 days).",
        at_least=1,
        section="transactions",
    ),
    _K(
        "transaction.remove.expired.transaction.cleanup.interval.ms",
        "int",
        3600000,
        "How often the coordinator looks for expired transactional ids.",
        at_least=1,
        section="transactions",
    ),
    _K(
        "transaction.version",
        "int",
        2,
        "The finalized `transaction.version` feature level ApiVersions advertises (Kafka 4.x's feature): 2 turns "
        "on transactions v2 (KIP-890 part 2: EndTxn v5 bumps the producer epoch on every transaction end, Produce "
        "v12 and TxnOffsetCommit v5 add their partition to the transaction implicitly); 1 writes "
        "`__transaction_state` values in their flexible v1 form only; 0 keeps the old protocol and record format. "
        "Clients that do not read the feature keep the old protocol at every level.",
        at_least=0,
        at_most=2,
        section="transactions",
    ),
    _K(
        "transaction.partition.verification.enable",
        "boolean",
        True,
        "Before a leader appends a transactional batch of a producer with no transaction ongoing on that "
        "partition, it asks the transaction coordinator whether the partition is in the transaction "
        "(KIP-890 part 1); a partition not added is refused with INVALID_TXN_STATE.",
        section="transactions",
    ),
)
