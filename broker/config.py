"""Broker configuration: Kafka's ``server.properties`` names, types and defaults, validated once.

``BrokerConfig.from_properties`` takes string values (a properties file plus ``--override key=value``)
and returns a typed, immutable config; a bad value raises ``ConfigError`` naming the key, the value and
what was expected. Unknown keys are kept and reported by ``unknown_keys`` (the broker logs them, as
Kafka does) rather than rejected, so a real Kafka ``server.properties`` loads. Log settings (``log.*``,
``message.max.bytes``) are declared here too and handed to ``broker.log.config.LogConfig`` as the
defaults of every topic. ``docs/configuration.md`` is generated from ``CONFIG_KEYS``.

Immutable after construction; safe to share across threads.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A configuration value that is missing, unparsable or out of range; names the key."""


# -- types -------------------------------------------------------------------------------------------
def _int(value: str) -> int:
    return int(value.strip())


def _bool(value: str) -> bool:
    v = value.strip().lower()
    if v in ("true", "false"):
        return v == "true"
    raise ValueError("expected true or false")


def _float(value: str) -> float:
    return float(value.strip())


def _string(value: str) -> str:
    return value.strip()


def _list(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


_PARSERS: dict[str, Callable[[str], Any]] = {
    "int": _int,
    "long": _int,
    "boolean": _bool,
    "double": _float,
    "string": _string,
    "list": _list,
    "password": _string,
}


@dataclass(frozen=True)
class ConfigKey:
    """One documented key: type, default (``None`` = required or unset), valid range, and meaning."""

    name: str
    type: str
    default: Any
    doc: str
    at_least: float | None = None
    at_most: float | None = None
    choices: tuple[str, ...] | None = None
    required: bool = False
    section: str = "broker"
    excluded: tuple[Any, ...] = ()  # values inside the range that are still invalid (gzip level 0)

    def parse(self, raw: str) -> Any:
        try:
            value = _PARSERS[self.type](raw)
        except ValueError as e:
            raise ConfigError(f"{self.name}={raw!r}: expected {self.type} ({e})") from None
        self.check(value)
        return value

    def check(self, value: Any) -> None:
        if self.at_least is not None and value is not None and value < self.at_least:
            raise ConfigError(f"{self.name}={value!r}: must be at least {self.at_least:g}")
        if self.at_most is not None and value is not None and value > self.at_most:
            raise ConfigError(f"{self.name}={value!r}: must be at most {self.at_most:g}")
        if value is not None and value in self.excluded:
            raise ConfigError(f"{self.name}={value!r}: not a valid value ({self.doc})")
        if self.choices is not None and value is not None:
            items = value if isinstance(value, tuple) else (value,)
            bad = [v for v in items if v not in self.choices]
            if bad:
                raise ConfigError(f"{self.name}={value!r}: must be one of {', '.join(self.choices)}")


_K = ConfigKey
_HOUR = 3_600_000

CONFIG_KEYS: tuple[ConfigKey, ...] = (
    # broker identity and networking
    _K("broker.id", "int", None, "Unique id of this broker in the cluster.", at_least=0, required=True),
    _K("broker.rack", "string", None, "Rack of the broker, reported in Metadata."),
    _K(
        "listeners",
        "list",
        ("PLAINTEXT://:9092",),
        "Listeners as `NAME://host:port` (only PLAINTEXT); an empty host binds every interface, port 0 picks a free port.",
    ),
    _K(
        "metrics.port",
        "int",
        -1,
        "Port of the Prometheus metrics endpoint (`http://<metrics.host>:<port>/metrics`); -1 serves none, 0 picks a "
        "free port (logged).",
        at_least=-1,
        at_most=65535,
    ),
    _K(
        "metrics.host",
        "string",
        None,
        "Address the metrics endpoint binds (default: the first listener's host, else all interfaces).",
    ),
    _K(
        "advertised.listeners",
        "list",
        None,
        "Addresses published in ZooKeeper and Metadata; defaults to `listeners` (an empty host advertises this machine's name).",
    ),
    _K(
        "socket.request.max.bytes",
        "int",
        104857600,
        "Largest request frame accepted; a bigger frame closes the connection.",
        at_least=1,
    ),
    _K(
        "socket.send.buffer.bytes",
        "int",
        -1,
        "SO_SNDBUF of client sockets (-1: the OS default with autotuning). Differs from Kafka's 102400 on purpose: "
        "a fixed buffer disables Linux autotuning and cut produce throughput by about a third in `bench/broker_bench.py`.",
        at_least=-1,
    ),
    _K(
        "socket.receive.buffer.bytes",
        "int",
        -1,
        "SO_RCVBUF of client sockets (-1: the OS default with autotuning); Kafka's default is 102400, see above.",
        at_least=-1,
    ),
    _K(
        "queued.max.requests",
        "int",
        500,
        "Requests read ahead per connection while earlier ones are in progress (back-pressure).",
        at_least=1,
    ),
    _K(
        "queued.max.request.bytes",
        "long",
        536870912,
        "Bytes of large request frames (64 KiB or more) being received at once, across all connections; past it, "
        "connections stop reading them until earlier ones complete, the oldest frame always going on (Kafka's "
        "setting; Kafka's default -1 means unbounded, also accepted). Memory follows the bytes clients actually "
        "sent, never the sizes they announce.",
        at_least=-1,
    ),
    _K("connections.max.idle.ms", "long", 600000, "Close connections idle for longer than this.", at_least=1),
    _K(
        "event.loop",
        "string",
        "auto",
        "`asyncio`, `uvloop`, or `auto` (asyncio: uvloop measured no faster, see `bench/results/event_loop.json`).",
        choices=("auto", "asyncio", "uvloop"),
    ),
    # ZooKeeper
    _K(
        "zookeeper.connect",
        "string",
        None,
        "ZooKeeper ensemble `host:port[,host:port...][/chroot]`, or `memory:<name>` for an in-process registry "
        "shared by the brokers of one Python process (embedded use).",
        required=True,
        section="zookeeper",
    ),
    _K("zookeeper.session.timeout.ms", "int", 18000, "ZooKeeper session timeout.", at_least=1, section="zookeeper"),
    _K(
        "zookeeper.connection.timeout.ms",
        "int",
        None,
        "How long to wait for a ZooKeeper connection at start-up (default: the session timeout).",
        at_least=1,
        section="zookeeper",
    ),
    # topics
    _K(
        "num.partitions",
        "int",
        1,
        "Partitions of auto-created topics and of CreateTopics with -1.",
        at_least=1,
        section="topics",
    ),
    _K(
        "default.replication.factor",
        "int",
        1,
        "Replication factor of auto-created topics and of CreateTopics with -1; more than the live brokers is "
        "INVALID_REPLICATION_FACTOR.",
        at_least=1,
        section="topics",
    ),
    _K(
        "auto.create.topics.enable",
        "boolean",
        True,
        "Create a missing topic, with `num.partitions` and `default.replication.factor`, when a Metadata request "
        "names it and allows auto-creation (always before Metadata v4, `allow_auto_topic_creation` from v4). "
        "When false, or when the request disallows it, a missing topic is answered UNKNOWN_TOPIC_OR_PARTITION. "
        "An illegal name is answered INVALID_TOPIC_EXCEPTION and never created. Produce and Fetch never create "
        "topics. Kafka's default (true); set false so that typos and scanners cannot create topics.",
        section="topics",
    ),
    _K(
        "max.partitions.per.request",
        "int",
        5000,
        "Most partitions one CreateTopics or CreatePartitions request (or one Metadata auto-creation) may add, "
        "counted over all its topics. A larger request creates nothing and every topic in it is answered "
        "INVALID_PARTITIONS naming this setting. Kafka has no such limit; it protects the broker and ZooKeeper "
        "from a typo such as 100000 partitions (creating partitions costs about 10 ZooKeeper requests each).",
        at_least=1,
        section="topics",
    ),
    _K(
        "max.broker.partitions",
        "int",
        10000,
        "Most partition replicas a broker may hold (the name of Kafka's KIP-578). A topic whose assignment would "
        "put more on any broker, counting the topics that exist already, is refused with POLICY_VIOLATION naming "
        "the broker, the count and this setting; nothing of it is created. Checked against this broker's view of "
        "the cluster, so topics created at the same moment on other brokers can overshoot it slightly.",
        at_least=1,
        section="topics",
    ),
    _K("delete.topic.enable", "boolean", True, "Allow DeleteTopics.", section="topics"),
    _K("min.insync.replicas", "int", 1, "Minimum ISR size for acks=all produce.", at_least=1, section="topics"),
    # log store (topic defaults; see broker.log.config)
    _K("log.dirs", "list", None, "Directories holding partition logs (default: `log.dir`).", section="log"),
    _K("log.dir", "string", "/tmp/kafka-logs", "Used when `log.dirs` is not set.", section="log"),
    _K(
        "log.segment.bytes",
        "int",
        1073741824,
        "Segment size at which a new segment is rolled.",
        at_least=14,
        section="log",
    ),
    _K("log.roll.ms", "long", None, "Roll a segment this old (default: `log.roll.hours`).", at_least=1, section="log"),
    _K("log.roll.hours", "int", 168, "Roll a segment this old, in hours.", at_least=1, section="log"),
    _K(
        "log.roll.jitter.ms",
        "long",
        None,
        "Most random time subtracted from the roll time of each segment, so that segments of many partitions do "
        "not roll at once (default: `log.roll.jitter.hours`).",
        at_least=0,
        section="log",
    ),
    _K("log.roll.jitter.hours", "int", 0, "`log.roll.jitter.ms` in hours.", at_least=0, section="log"),
    _K("log.index.interval.bytes", "int", 4096, "Bytes between offset index entries.", at_least=0, section="log"),
    _K(
        "log.index.size.max.bytes",
        "int",
        10485760,
        "Largest offset index of a segment (roll when full).",
        at_least=4,
        section="log",
    ),
    _K("message.max.bytes", "int", 1048588, "Largest record batch accepted.", at_least=0, section="log"),
    _K(
        "compression.type",
        "string",
        "producer",
        "Codec batches are stored with: `producer` keeps what the producer sent (its bytes are stored as they "
        "are); `uncompressed`, `gzip`, `snappy`, `lz4` or `zstd` make the leader recompress every batch sent with "
        "another codec (transaction markers excepted).",
        choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        section="log",
    ),
    _K(
        "compression.gzip.level",
        "int",
        -1,
        "gzip level of broker-side recompression (1-9, or -1 for zlib's default).",
        at_least=-1,
        at_most=9,
        excluded=(0,),
        section="log",
    ),
    _K(
        "compression.lz4.level",
        "int",
        9,
        "lz4 level of broker-side recompression (1-17).",
        at_least=1,
        at_most=17,
        section="log",
    ),
    _K(
        "compression.zstd.level",
        "int",
        3,
        "zstd level of broker-side recompression (-131072 to 22).",
        at_least=-131072,
        at_most=22,
        section="log",
    ),
    _K(
        "log.message.timestamp.before.max.ms",
        "long",
        9223372036854775807,
        "With CreateTime, a record whose timestamp is more than this before the broker time is refused "
        "(INVALID_TIMESTAMP).",
        at_least=0,
        section="log",
    ),
    _K(
        "log.message.timestamp.after.max.ms",
        "long",
        9223372036854775807,
        "With CreateTime, a record whose timestamp is more than this after the broker time is refused "
        "(INVALID_TIMESTAMP). Kafka 3.x's default (4.0 lowered it to one hour).",
        at_least=0,
        section="log",
    ),
    _K(
        "log.message.timestamp.difference.max.ms",
        "long",
        9223372036854775807,
        "Deprecated in Kafka 3.6: a bound on both sides, applied with the two above (the smaller wins).",
        at_least=0,
        section="log",
    ),
    _K(
        "log.message.downconversion.enable",
        "boolean",
        True,
        "Down-convert batches for Fetch v0-3 consumers; when false they get UNSUPPORTED_VERSION (followers and "
        "Fetch v4+ are unaffected).",
        section="log",
    ),
    _K(
        "log.message.format.version",
        "string",
        "3.0-IV1",
        "Accepted and ignored, as Kafka 3.x ignores it: batches are always stored as v2 (magic 2).",
        section="log",
    ),
    _K(
        "log.preallocate",
        "boolean",
        False,
        "Only false: kafkalog does not preallocate segment files (true is refused).",
        excluded=(True,),
        section="log",
    ),
    _K(
        "log.local.retention.ms",
        "long",
        -2,
        "Tiered storage's local retention (-2: `retention.ms`); kafkalog has no tiered storage, so it has no effect "
        "(as in Kafka without `remote.storage.enable`).",
        at_least=-2,
        section="log",
    ),
    _K(
        "log.local.retention.bytes",
        "long",
        -2,
        "Tiered storage's local retention in bytes (-2: `retention.bytes`); no effect, see above.",
        at_least=-2,
        section="log",
    ),
    _K(
        "log.retention.ms",
        "long",
        None,
        "Delete segments older than this (-1: never); overrides minutes and hours.",
        at_least=-1,
        section="log",
    ),
    _K("log.retention.minutes", "int", None, "Retention in minutes (overrides hours).", at_least=-1, section="log"),
    _K("log.retention.hours", "int", 168, "Retention in hours.", at_least=-1, section="log"),
    _K(
        "log.retention.bytes",
        "long",
        -1,
        "Delete old segments while a partition is larger than this (-1: no limit).",
        at_least=-1,
        section="log",
    ),
    _K("log.retention.check.interval.ms", "long", 300000, "How often retention runs.", at_least=1, section="log"),
    _K(
        "log.cleanup.policy",
        "list",
        ("delete",),
        "`delete`, `compact`, or both.",
        choices=("delete", "compact"),
        section="log",
    ),
    _K("log.cleaner.enable", "boolean", True, "Run the log cleaner for compacted topics.", section="log"),
    _K(
        "log.cleaner.delete.retention.ms",
        "long",
        86400000,
        "How long tombstones survive compaction.",
        at_least=0,
        section="log",
    ),
    _K(
        "log.cleaner.min.cleanable.ratio",
        "double",
        0.5,
        "Dirty ratio at which a log is compacted.",
        at_least=0,
        section="log",
    ),
    _K(
        "log.cleaner.min.compaction.lag.ms",
        "long",
        0,
        "Records younger than this are not compacted.",
        at_least=0,
        section="log",
    ),
    _K(
        "log.cleaner.max.compaction.lag.ms",
        "long",
        9223372036854775807,
        "A compacted log whose oldest uncompacted record is older than this is compacted even below "
        "`log.cleaner.min.cleanable.ratio`.",
        at_least=1,
        section="log",
    ),
    _K(
        "log.cleaner.backoff.ms",
        "long",
        15000,
        "Pause of the cleaner when nothing is cleanable.",
        at_least=0,
        section="log",
    ),
    _K(
        "log.flush.interval.messages",
        "long",
        9223372036854775807,
        "fsync after this many messages.",
        at_least=1,
        section="log",
    ),
    _K(
        "log.flush.interval.ms",
        "long",
        None,
        "fsync data older than this (default: the scheduler interval).",
        at_least=0,
        section="log",
    ),
    _K(
        "log.flush.scheduler.interval.ms",
        "long",
        9223372036854775807,
        "How often dirty logs are checked for flushing.",
        at_least=0,
        section="log",
    ),
    _K(
        "log.flush.offset.checkpoint.interval.ms",
        "int",
        60000,
        "How often recovery points are checkpointed.",
        at_least=0,
        section="log",
    ),
    _K(
        "log.message.timestamp.type",
        "string",
        "CreateTime",
        "`CreateTime` or `LogAppendTime`.",
        choices=("CreateTime", "LogAppendTime"),
        section="log",
    ),
    _K(
        "log.segment.delete.delay.ms",
        "long",
        60000,
        "Delay before a deleted segment's files are closed.",
        at_least=0,
        section="log",
    ),
    _K(
        "num.recovery.threads.per.data.dir",
        "int",
        1,
        "Threads that load and recover logs at start-up.",
        at_least=1,
        section="log",
    ),
    # replication (broker.replication)
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
    # groups and offsets (broker.coordinator)
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
    # transactions (broker.coordinator.txn_coordinator)
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
)

KEYS_BY_NAME: dict[str, ConfigKey] = {k.name: k for k in CONFIG_KEYS}
# broker keys outside the "log" section that are also topic-config defaults (see broker.log.config)
_LOG_SYNONYMS_ELSEWHERE = frozenset({"min.insync.replicas", "unclean.leader.election.enable"})


@dataclass(frozen=True)
class Listener:
    """One ``NAME://host:port`` listener; ``host == ""`` binds every interface."""

    name: str
    host: str
    port: int

    @classmethod
    def parse(cls, text: str, key: str) -> Listener:
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)://(\[[^\]]*\]|[^:]*):(\d+)", text.strip())
        if not m:
            raise ConfigError(f"{key}={text!r}: expected NAME://host:port, for example PLAINTEXT://:9092")
        name, host, port = m.group(1).upper(), m.group(2).strip("[]"), int(m.group(3))
        if name != "PLAINTEXT":
            raise ConfigError(f"{key}={text!r}: only PLAINTEXT listeners are supported")
        if port > 65535:
            raise ConfigError(f"{key}={text!r}: port {port} out of range")
        return cls(name, host, port)

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


@dataclass(frozen=True)
class BrokerConfig:
    """Typed broker configuration. ``values`` holds every declared key (defaults filled in)."""

    values: Mapping[str, Any]
    originals: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def broker_id(self) -> int:
        return self.values["broker.id"]

    @property
    def listeners(self) -> tuple[Listener, ...]:
        return tuple(Listener.parse(x, "listeners") for x in self.values["listeners"])

    @property
    def advertised_listeners(self) -> tuple[Listener, ...]:
        raw = self.values["advertised.listeners"]
        listeners = tuple(Listener.parse(x, "advertised.listeners") for x in raw) if raw is not None else self.listeners
        host = None
        out = []
        for lst in listeners:
            if not lst.host or lst.host == "0.0.0.0":
                host = host or socket.getfqdn()
                lst = Listener(lst.name, host, lst.port)
            out.append(lst)
        return tuple(out)

    @property
    def log_dirs(self) -> tuple[str, ...]:
        return self.values["log.dirs"] or (self.values["log.dir"],)

    @property
    def zookeeper_connect(self) -> str:
        return self.values["zookeeper.connect"]

    @property
    def unknown_keys(self) -> tuple[str, ...]:
        return tuple(sorted(k for k in self.originals if k not in KEYS_BY_NAME))

    def log_properties(self) -> dict[str, str]:
        """The original strings of every key that sets a topic default (``log.*``, ``message.max.bytes``,
        ``min.insync.replicas``, ...), for ``LogConfig.broker_defaults``."""
        section = {k.name for k in CONFIG_KEYS if k.section == "log"} | _LOG_SYNONYMS_ELSEWHERE
        return {k: v for k, v in self.originals.items() if k in section}

    def with_overrides(self, overrides: Mapping[str, str]) -> BrokerConfig:
        return BrokerConfig.from_properties({**self.originals, **overrides})

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> BrokerConfig:
        """Validate ``props`` (strings, or already-typed values from Python callers)."""
        originals = {k: v if isinstance(v, str) else _to_property(v) for k, v in props.items()}
        values: dict[str, Any] = {}
        for key in CONFIG_KEYS:
            if key.name in originals:
                values[key.name] = key.parse(originals[key.name])
            elif key.required:
                raise ConfigError(f"{key.name} is required ({key.doc})")
            else:
                values[key.name] = key.default
        cfg = cls(values, originals)
        cfg.listeners  # noqa: B018 - validates the listener syntax now, not at start-up
        if values["advertised.listeners"] is not None:
            cfg.advertised_listeners  # noqa: B018
        return cfg

    @classmethod
    def from_file(cls, path: str | Path, overrides: Iterable[str] = ()) -> BrokerConfig:
        """Load a properties file, then apply ``key=value`` overrides (later wins)."""
        props = parse_properties(Path(path).read_text(), source=str(path))
        for item in overrides:
            if "=" not in item:
                raise ConfigError(f"override {item!r}: expected key=value")
            k, v = item.split("=", 1)
            props[k.strip()] = v.strip()
        return cls.from_properties(props)


def _to_property(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def parse_properties(text: str, *, source: str = "<properties>") -> dict[str, str]:
    """Java ``.properties`` syntax: ``key=value`` or ``key: value`` or ``key value``; ``#``/``!`` comments;
    a trailing backslash continues a line; ``\\t \\n \\uXXXX`` escapes."""
    out: dict[str, str] = {}
    logical: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip()
        i += 1
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical.append(line[:-1])
            continue
        logical.append(line)
        entry = "".join(logical)
        logical = []
        m = re.match(r"((?:\\.|[^=:\s])+)\s*[=:\s]\s*(.*)$", entry)
        if not m:
            key, value = entry.strip(), ""
        else:
            key, value = m.group(1), m.group(2)
        try:
            key, value = _unescape(key), _unescape(value)
        except ValueError as e:
            raise ConfigError(f"{source}: line {i}: {e}") from None
        out[key] = value
    return out


def _unescape(s: str) -> str:
    def repl(m: re.Match) -> str:
        c = m.group(1)
        if c.startswith("u"):
            return chr(int(c[1:], 16))
        return {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", repl, s)


def render_docs() -> str:
    """docs/configuration.md, from ``CONFIG_KEYS``."""
    out = [
        "# Configuration reference",
        "",
        "Generated from `broker/config.py` (`make docs`); `tests/broker/test_config.py` fails when it is stale.",
        "Names, types and defaults follow Kafka's `server.properties`. Unknown keys are accepted and logged.",
        "Values are validated at start-up; an error names the key, the value and what was expected.",
        "`kafkalog broker start --config FILE --override key=value` overrides a file's values.",
        "",
    ]
    sections = {
        "broker": "Broker and network",
        "zookeeper": "ZooKeeper",
        "topics": "Topics",
        "log": "Log store (defaults of every topic)",
        "replication": "Replication",
        "groups": "Groups and offsets",
        "transactions": "Transactions",
    }
    for section, title in sections.items():
        out += [f"## {title}", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        for k in CONFIG_KEYS:
            if k.section != section:
                continue
            default = "required" if k.required else "" if k.default is None else _to_property(k.default)
            extra = f" Allowed: {', '.join(k.choices)}." if k.choices and k.type != "string" else ""
            out.append(f"| `{k.name}` | {k.type} | {('`' + default + '`') if default else '-'} | {k.doc}{extra} |")
        out.append("")
    return "\n".join(out)
