"""Replication keys (section ``replication``, read by ``broker.replication`` and the controller), in
documentation order."""

from __future__ import annotations

from .schema import ConfigKey

RACK_AWARE_CLASS = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
REPLICA_SELECTORS = (RACK_AWARE_CLASS, "rack-aware", "leader")
"""The values of ``replica.selector.class`` (``broker.replication.replica_selector.selector_for`` builds them)."""

_K = ConfigKey

REPLICATION_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "replica.lag.time.max.ms",
        "long",
        30000,
        "A follower not caught up for this long leaves the ISR.",
        at_least=1,
        section="replication",
    ),
    _K(
        "replica.fetch.max.bytes",
        "int",
        1048576,
        "Bytes per partition a follower fetches.",
        at_least=0,
        section="replication",
    ),
    _K(
        "replica.fetch.wait.max.ms",
        "int",
        500,
        "Long-poll wait of follower fetches.",
        at_least=0,
        section="replication",
    ),
    _K(
        "replica.fetch.backoff.ms",
        "int",
        1000,
        "Pause of a follower's fetching of a partition (or from a broker) after an error.",
        at_least=0,
        section="replication",
    ),
    _K(
        "replica.selector.class",
        "string",
        None,
        f"Selector of the preferred read replica (KIP-392) the leader names to a consumer's Fetch v11+: `{RACK_AWARE_CLASS}` "
        "(or `rack-aware`) names a live in-sync replica in the consumer's `client.rack` (the leader if it is there, "
        "else the most caught-up one) and the consumer then fetches from it; unset or `leader`: consumers read "
        "from the leader. Any replica serves a consumer's Fetch v11+ up to its high watermark whatever this is.",
        choices=REPLICA_SELECTORS,
        section="replication",
    ),
    _K(
        "unclean.leader.election.enable",
        "boolean",
        False,
        "Allow an out-of-sync replica to become leader.",
        section="replication",
    ),
    _K(
        "auto.leader.rebalance.enable",
        "boolean",
        True,
        "The controller moves leadership back to each partition's preferred (first) replica when it is alive "
        "and in the ISR and its broker's imbalance exceeds `leader.imbalance.per.broker.percentage`.",
        section="replication",
    ),
    _K(
        "leader.imbalance.check.interval.seconds",
        "int",
        300,
        "How often the controller checks the leader imbalance.",
        at_least=1,
        section="replication",
    ),
    _K(
        "leader.imbalance.per.broker.percentage",
        "int",
        10,
        "Share (percent) of the partitions a broker is preferred for but does not lead above which the "
        "controller triggers a preferred-replica election.",
        at_least=0,
        at_most=100,
        section="replication",
    ),
    _K(
        "controlled.shutdown.enable",
        "boolean",
        True,
        "A stopping broker first asks the controller (ControlledShutdown) to move the leadership of its "
        "partitions to other in-sync replicas.",
        section="replication",
    ),
    _K(
        "controlled.shutdown.max.retries",
        "int",
        3,
        "Attempts of the controlled shutdown before the broker stops anyway.",
        at_least=1,
        section="replication",
    ),
    _K(
        "controlled.shutdown.retry.backoff.ms",
        "int",
        5000,
        "Wait between controlled shutdown attempts.",
        at_least=0,
        section="replication",
    ),
)
