"""KIP-848 consumer group keys (section ``groups``, read by ``broker.coordinator.group_consumer_protocol``), in
documentation order. Names, defaults and meanings are Kafka 4.x's."""

from __future__ import annotations

from .schema import ConfigKey

_K = ConfigKey

REBALANCE_PROTOCOLS = ("classic", "consumer")
MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")

CONSUMER_GROUP_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "group.coordinator.rebalance.protocols",
        "list",
        REBALANCE_PROTOCOLS,
        "The group protocols the coordinator serves: `classic` (JoinGroup/SyncGroup/Heartbeat; always on) and "
        "`consumer` (KIP-848's ConsumerGroupHeartbeat and ConsumerGroupDescribe). Without `consumer`, those two "
        "APIs answer UNSUPPORTED_VERSION and ApiVersions does not offer them.",
        section="groups",
    ),
    _K(
        "group.consumer.assignors",
        "list",
        ("uniform", "range"),
        "The server-side assignors of consumer groups, by name (`uniform`, `range`) or by Kafka's class names "
        "(`org.apache.kafka.coordinator.group.assignor.UniformAssignor`, `...RangeAssignor`); the first is used "
        "when no member names one (`group.remote.assignor`).",
        section="groups",
    ),
    _K(
        "group.consumer.session.timeout.ms",
        "int",
        45000,
        "A consumer group member that sends no ConsumerGroupHeartbeat for this long is removed from its group "
        "(its partitions are reassigned).",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.consumer.heartbeat.interval.ms",
        "int",
        5000,
        "How often consumer group members heartbeat (sent to them in every ConsumerGroupHeartbeat answer).",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.consumer.min.session.timeout.ms",
        "int",
        45000,
        "The smallest `consumer.session.timeout.ms` a group config (`kafkalog configs --entity-type groups`) may set.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.consumer.max.session.timeout.ms",
        "int",
        60000,
        "The largest `consumer.session.timeout.ms` a group config (`kafkalog configs --entity-type groups`) may set.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.consumer.min.heartbeat.interval.ms",
        "int",
        5000,
        "The smallest `consumer.heartbeat.interval.ms` a group config (`kafkalog configs --entity-type groups`) may set.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.consumer.max.heartbeat.interval.ms",
        "int",
        15000,
        "The largest `consumer.heartbeat.interval.ms` a group config (`kafkalog configs --entity-type groups`) may set.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.consumer.max.size",
        "int",
        2147483647,
        "Most members a consumer group may have; a further member is answered GROUP_MAX_SIZE_REACHED.",
        at_least=1,
        section="groups",
    ),
    _K(
        "group.consumer.migration.policy",
        "string",
        "bidirectional",
        "Conversion between classic and consumer groups (KIP-848): `upgrade` turns a classic group into a "
        "consumer group when a member joins with ConsumerGroupHeartbeat, `downgrade` turns a consumer group back "
        "into a classic group when its last consumer-protocol member leaves and classic members remain, "
        "`bidirectional` both, `disabled` neither (a member of the other protocol is refused).",
        choices=MIGRATION_POLICIES,
        section="groups",
    ),
)
