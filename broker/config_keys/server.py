"""Broker identity and networking, ZooKeeper, and topic-creation keys (sections ``broker``, ``zookeeper``
and ``topics`` of ``docs/configuration.md``), in documentation order."""

from __future__ import annotations

from .schema import ConfigKey

_K = ConfigKey

BROKER_KEYS: tuple[ConfigKey, ...] = (
    _K("broker.id", "int", None, "Unique id of this broker in the cluster.", at_least=0, required=True),
    _K("broker.rack", "string", None, "Rack of the broker, reported in Metadata."),
    _K(
        "listeners",
        "list",
        ("PLAINTEXT://127.0.0.1:9092",),
        "Listeners as `NAME://host:port,...`; NAME is free (`CLIENT`, `INTERNAL`), its protocol comes from "
        "`listener.security.protocol.map`. The default binds loopback only (Kafka's binds every interface): a "
        "broker reachable from the network is a choice made here. An empty host binds every interface, port 0 "
        "picks a free port.",
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
        "Addresses published in ZooKeeper and Metadata, with names from `listeners`; defaults to `listeners` (an empty "
        "host advertises this machine's name). Metadata answers with the endpoints of the listener a request came in on.",
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
    _K(
        "max.incremental.fetch.session.cache.slots",
        "int",
        1000,
        "Incremental fetch sessions (KIP-227) the broker keeps; when full, a new session takes the place of a "
        "stale one (unused for 2 minutes) or, by Kafka's rules, of a smaller or a consumer's session; 0: Fetch "
        "requests are always answered in full.",
        at_least=0,
    ),
)

ZOOKEEPER_KEYS: tuple[ConfigKey, ...] = (
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
)

TOPIC_KEYS: tuple[ConfigKey, ...] = (
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
        "max.request.partition.size.limit",
        "int",
        2000,
        "Most partitions one DescribeTopicPartitions response carries (Kafka's key, KIP-966): the request's "
        "`response_partition_limit` is capped by it, and the rest is paged with the response's `next_cursor`.",
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
)
