"""Differential checks: one scripted sequence of raw requests sent to kafkalog and to Apache Kafka, compared.

A script is a list of ``Step``s. Each step is one request at an explicit version, encoded with the
project's protocol classes (or given as raw bytes) and sent over a plain socket with the step's own
correlation id and the client id ``differential``, so both brokers receive the same bytes (a request built
from an earlier response, e.g. a JoinGroup carrying the member id the broker assigned, necessarily carries
each broker's own value). ``run_script`` returns every decoded response; ``compare_runs`` normalizes both
runs with the allow-list below and walks them field by field, listing every difference (first one first,
none when they agree) as ``step 'join' (JoinGroup v5): members[0].member_id: kafkalog 'a' != kafka 'b'``.

Record data (``records`` fields) is decoded into batches: every v2 header field, and every record (offset, timestamp, key, value, headers), so a Fetch is compared batch by batch.

The allow-list (``ALLOWANCES``) names each normalization and why it is legitimate; a normalization rewrites
a field in both runs the same way, so whatever it keeps (e.g. -1 for "no node", or which member is which)
is still compared.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.protocol import API_BY_KEY, decode_response, encode_request
from spark_kafkalog.records import iter_batches

CLIENT_ID = "differential"
ZERO_UUID_VALUES = (None, b"\x00" * 16, "00000000-0000-0000-0000-000000000000")

Context = dict[str, Any]  # step label -> the decoded response (this broker's run)


@dataclass
class Step:
    """One request of a script.

    ``request`` is a message of ``API_BY_KEY[api_key].Request`` or a function of the run's context (the
    responses so far, by label) that builds one; ``raw`` replaces the whole frame payload (header and body)
    for requests our encoder refuses to build (an undeclared version), the response then decoded at
    ``response_version``. ``until`` repeats the request (same bytes) until it holds on the response, for
    state the broker reaches asynchronously (a leader elected, transaction markers written); ``compare``
    False leaves the step out of the comparison (a setup step whose answer is not the point).
    """

    label: str
    api_key: int
    version: int
    request: Any = None
    raw: bytes | None = None
    response_version: int | None = None
    until: Callable[[Any], bool] | None = None
    compare: bool = True
    timeout_s: float = 30.0
    differs: str | None = None
    connection: int = 0
    deferred: bool = False
    receives: str | None = None


@dataclass
class Exchange:
    step: Step
    correlation_id: int
    response: Any
    attempts: int = 1


def raw_header(api_key: int, version: int, correlation_id: int, *, flexible: bool) -> bytes:
    """Request header v1 (v2 with an empty tag buffer when ``flexible``) with ``CLIENT_ID``."""
    cid = CLIENT_ID.encode()
    head = struct.pack(">hhih", api_key, version, correlation_id, len(cid)) + cid
    return head + (b"\x00" if flexible else b"")


class _Connection:
    def __init__(self, address: str, timeout_s: float) -> None:
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout_s)

    def close(self) -> None:
        self.sock.close()

    def send(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def receive(self) -> bytes:
        (size,) = struct.unpack(">i", self._read(4))
        return self._read(size)

    def exchange(self, payload: bytes) -> bytes:
        self.send(payload)
        return self.receive()

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            buf += chunk
        return bytes(buf)


def run_script(address: str, steps: list[Step], *, first_correlation_id: int = 1000) -> list[Exchange]:
    """Send ``steps`` in order to ``address`` (one connection per ``Step.connection``); every answer decoded
    (None for a deferred step, whose answer is recorded by the step that ``receives`` it)."""
    context: Context = {}
    exchanges: list[Exchange] = []
    connections: dict[int, _Connection] = {}
    pending: dict[str, tuple[_Connection, int]] = {}
    try:
        for i, step in enumerate(steps):
            cid = first_correlation_id + i
            decode_version = step.version if step.response_version is None else step.response_version
            if step.receives is not None:
                conn, cid = pending.pop(step.receives)
                payload = None
            else:
                if step.connection not in connections:
                    connections[step.connection] = _Connection(address, 60.0)
                conn = connections[step.connection]
                if step.raw is not None:
                    payload = step.raw
                else:
                    body = step.request(context) if callable(step.request) else step.request
                    payload = bytes(encode_request(step.api_key, step.version, cid, body, client_id=CLIENT_ID))
                if step.deferred:
                    conn.send(payload)
                    pending[step.label] = (conn, cid)
                    exchanges.append(Exchange(step, cid, None, 1))
                    continue
            deadline = time.monotonic() + step.timeout_s
            attempts = 0
            while True:
                attempts += 1
                frame = conn.receive() if payload is None else conn.exchange(payload)
                got, response = decode_response(step.api_key, decode_version, frame)
                if step.until is None or step.until(response) or payload is None:
                    break
                if time.monotonic() > deadline:
                    raise AssertionError(f"{address}: step {step.label!r} never satisfied its condition: {response}")
                time.sleep(0.2)
            if got != cid and step.raw is None:
                raise AssertionError(f"{address}: step {step.label!r} answered correlation id {got}, sent {cid}")
            context[step.label] = response
            exchanges.append(Exchange(step, got, response, attempts))
    finally:
        for conn in connections.values():
            conn.close()
    return exchanges


@dataclass(frozen=True)
class Allowance:
    """One intended difference: fields named ``fields`` (anywhere in a response, or only in ``apis``) are
    rewritten by ``rewrite(value, state)`` in both runs before comparing. ``state`` is per run (used to
    renumber ids by order of appearance)."""

    name: str
    reason: str
    fields: frozenset[str]
    rewrite: Callable[[Any, dict], Any]
    apis: frozenset[str] = field(default_factory=frozenset)


def _placeholder(text: str, keep: tuple = (-1, None)) -> Callable[[Any, dict], Any]:
    def rewrite(value: Any, state: dict) -> Any:
        if isinstance(value, list):
            return [x if x in keep else text for x in value]
        return value if value in keep else text

    return rewrite


def _renumber(kind: str, keep: tuple = (-1, None, "")) -> Callable[[Any, dict], Any]:
    """Ids replaced by ``<kind#n>``, n counting distinct ids in order of first appearance in the run."""

    def rewrite(value: Any, state: dict) -> Any:
        if value in keep:
            return value
        seen = state.setdefault(kind, {})
        return f"<{kind}#{seen.setdefault(value, len(seen))}>"

    return rewrite


# Topic configs both kafkalog and Kafka (3.9 and 4.4) define; CreateTopics v5+ answers with every config of
# the new topic, and each broker version has its own set (Kafka 4.4: compression.gzip.level, ...).
COMMON_TOPIC_CONFIGS = frozenset(
    {
        "cleanup.policy",
        "compression.type",
        "delete.retention.ms",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "index.interval.bytes",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "message.timestamp.type",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "min.insync.replicas",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.index.bytes",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
    }
)


# Configs whose source is the peer's own setup: the harness sets log.flush.interval.messages in Kafka's
# server.properties (STATIC_BROKER_CONFIG), and a KRaft cluster stores a cluster-wide min.insync.replicas
# (DYNAMIC_DEFAULT_BROKER_CONFIG); on kafkalog both are defaults. Their values are still compared.
PEER_SET_CONFIGS = frozenset({"flush.messages", "min.insync.replicas"})


def _common_configs(value: Any, state: dict) -> Any:
    if value is None:
        return None
    kept = sorted((dict(c) for c in value if c["name"] in COMMON_TOPIC_CONFIGS), key=lambda c: c["name"])
    for c in kept:
        if c["name"] in PEER_SET_CONFIGS:
            c["config_source"] = "<peer-set>"
    return kept


def _out_of_range_offsets(partitions: Any, state: dict) -> Any:
    out = []
    for p in partitions:
        if p.get("error_code") == 1:  # OFFSET_OUT_OF_RANGE
            p = dict(p, high_watermark="<offset>", last_stable_offset="<offset>", log_start_offset="<offset>")
        out.append(p)
    return out


DELETE_HORIZON_BIT = 0x40  # batch attribute: base_timestamp holds the delete horizon (KIP-534)


def _delete_horizon(batches: Any, state: dict) -> Any:
    if not batches:
        return batches
    out = []
    for b in batches:
        if "attributes" in b and any(r["value"] is None for r in b["records"]):
            b = dict(b, attributes=b["attributes"] & ~DELETE_HORIZON_BIT, base_timestamp="<base>", batch_length="<len>")
        out.append(b)
    return out


LOG_APPEND_TIME_BIT = 0x08  # batch attribute: the broker stamped max_timestamp (the records' timestamp)


def _log_append_times(batches: Any, state: dict) -> Any:
    if not batches:
        return batches
    out = []
    for b in batches:
        if b.get("attributes", 0) & LOG_APPEND_TIME_BIT:
            b = dict(b, max_timestamp="<time>", records=[dict(r, timestamp="<time>") for r in b["records"]])
        out.append(b)
    return out


def _members_by_first_appearance(members: Any, state: dict) -> Any:
    seen = state.get("member", {})
    return sorted(members, key=lambda m: seen.get(m["member_id"], len(seen)))


def _control_batch_times(batches: Any, state: dict) -> Any:
    if not batches:
        return batches
    out = []
    for b in batches:
        if b.get("attributes", 0) & 0x20:  # a control batch (transaction marker)
            b = dict(b, base_timestamp="<time>", max_timestamp="<time>")
            b["records"] = [dict(r, timestamp="<time>") for r in b["records"]]
        out.append(b)
    return out


ALLOWANCES: tuple[Allowance, ...] = (
    Allowance(
        "broker-ids",
        "each broker has its own id (kafkalog's test broker 0, Kafka's 1); -1 (no node) is still compared",
        frozenset({"node_id", "leader_id", "controller_id", "replica_nodes", "isr_nodes", "offline_replicas"}),
        _placeholder("<node>"),
    ),
    Allowance(
        "listener-address",
        "each broker listens on a port the OS picked",
        frozenset({"host", "port"}),
        _placeholder("<address>"),
    ),
    Allowance(
        "cluster-id",
        "each cluster has its own id; null is still compared",
        frozenset({"cluster_id"}),
        _placeholder("<cluster>"),
        frozenset({"Metadata", "DescribeCluster"}),
    ),
    Allowance(
        "topic-ids",
        "topic ids are random per cluster; the zero id (none) is still compared",
        frozenset({"topic_id"}),
        _placeholder("<uuid>", ZERO_UUID_VALUES),
    ),
    Allowance(
        "fetch-session-ids",
        "a fetch session's id is random per broker (KIP-227); 0 (no session) is still compared",
        frozenset({"session_id"}),
        _placeholder("<session>", (0,)),
        frozenset({"Fetch"}),
    ),
    Allowance(
        "throttle-time",
        "quota throttling depends on each broker's load; both are unthrottled in these scripts",
        frozenset({"throttle_time_ms"}),
        lambda value, state: 0,
    ),
    Allowance(
        "log-append-time",
        "a LogAppendTime stamp is each broker's clock; -1 (CreateTime) is still compared",
        frozenset({"log_append_time_ms"}),
        _placeholder("<time>"),
    ),
    Allowance(
        "error-messages",
        "free text for humans, not protocol: Kafka's wording differs, kafkalog explains errors Kafka leaves"
        " null (Produce v8+ with INVALID_REQUIRED_ACKS or MESSAGE_TOO_LARGE), and Kafka puts 'NONE' where"
        " kafkalog has null on success (FindCoordinator v1-3); clients act on error_code, which is compared",
        frozenset({"error_message", "batch_index_error_message"}),
        lambda value, state: "<message>",
    ),
    Allowance(
        "aborted-transactions-null-or-empty",
        "no aborted transactions is null in one answer and [] in the other (Kafka gives [] on a partition"
        " error, kafkalog null); clients treat both alike",
        frozenset({"aborted_transactions"}),
        lambda value, state: value or [],
        frozenset({"Fetch"}),
    ),
    Allowance(
        "out-of-range-offsets",
        "with OFFSET_OUT_OF_RANGE Kafka answers high watermark, last stable offset and log start -1;"
        " kafkalog gives the partition's real ones, which its replica fetcher uses to truncate or restart"
        " without a ListOffsets round trip (broker/replication/fetcher.py); clients reset via ListOffsets",
        frozenset({"partitions"}),
        _out_of_range_offsets,
        frozenset({"Fetch"}),
    ),
    Allowance(
        "transaction-marker-times",
        "a control batch (transaction marker) is stamped with the broker's clock when EndTxn is handled",
        frozenset({"records"}),
        _control_batch_times,
        frozenset({"Fetch"}),
    ),
    Allowance(
        "producer-ids",
        "producer ids are allocated per cluster; renumbered in order of appearance, so which batch belongs"
        " to which producer is still compared",
        frozenset({"producer_id"}),
        _renumber("producer"),
    ),
    Allowance(
        "member-ids",
        "member ids are generated per broker (Kafka: client id + '-' + a random UUID); renumbered in order"
        " of appearance, so which member leads and which is answered is still compared",
        frozenset({"member_id", "leader"}),
        _renumber("member"),
        frozenset({"JoinGroup", "SyncGroup", "LeaveGroup", "Heartbeat", "DescribeGroups"}),
    ),
    Allowance(
        "topic-config-set",
        "CreateTopics v5+ lists every config of the new topic and each broker version defines its own set;"
        " only the configs all of them define (COMMON_TOPIC_CONFIGS) are compared, by name",
        frozenset({"configs"}),
        _common_configs,
        frozenset({"CreateTopics"}),
    ),
    Allowance(
        "api-version-ranges",
        "each broker serves its own version range per API (kafkalog's are in docs/protocol.md); which APIs"
        " are listed is still compared",
        frozenset({"min_version", "max_version"}),
        _placeholder("<version>", ()),
        frozenset({"ApiVersions"}),
    ),
    Allowance(
        "log-append-time-batches",
        "a LogAppendTime batch's max timestamp (the timestamp of its records) is each broker's clock; the"
        " timestamp type bit and the base timestamp as produced are compared",
        frozenset({"records"}),
        _log_append_times,
        frozenset({"Fetch"}),
    ),
    Allowance(
        "tombstone-delete-horizon",
        "Kafka's cleaner (KIP-534, 3.1+) marks a cleaned batch holding a tombstone with attribute bit 0x40 and"
        " puts the delete horizon (cleaning time + delete.retention.ms) in its base timestamp, so the record"
        " deltas and the batch length change; kafkalog times tombstone removal by the segment's age (the"
        " pre-KIP-534 rule, broker/log/cleaner.py) and leaves the batch header as written. The records'"
        " own timestamps are still compared",
        frozenset({"records"}),
        _delete_horizon,
        frozenset({"Fetch"}),
    ),
    Allowance(
        "describe-groups-order",
        "Kafka 4's group coordinator answers DescribeGroups shard by shard, not in request order; clients"
        " match the answers by group id. Compared sorted by group id",
        frozenset({"groups"}),
        lambda groups, state: sorted(groups, key=lambda g: g["group_id"]),
        frozenset({"DescribeGroups"}),
    ),
    Allowance(
        "join-member-order",
        "the leader's JoinGroup member list has no defined order (Kafka 4's group coordinator lists a newer"
        " member first, 3.9 and kafkalog in join order); assignors sort members themselves. Compared in the"
        " order the members first appeared",
        frozenset({"members"}),
        _members_by_first_appearance,
        frozenset({"JoinGroup"}),
    ),
    Allowance(
        "batch-crc",
        "a batch's CRC covers its producer id (allow-listed above); the CRC of a written batch is also"
        " recomputed by the broker when it stamps LogAppendTime, so it is derived, not compared",
        frozenset({"crc"}),
        lambda value, state: "<crc>",
    ),
)


def decode_records(data: bytes | None) -> Any:
    """Record data as a list of batches (v2: header fields and records; v0/v1 entries: records only)."""
    if data is None:
        return None
    out = []
    for view in iter_batches(data):
        records = [r._asdict() for r in view.records()]
        if view.magic == 2:
            entry = view.header()._asdict()
            entry["records"] = records
        else:
            entry = {"magic": view.magic, "records": records}
        out.append(entry)
    return out


def normalize(api: str, value: Any, allowances: tuple[Allowance, ...], state: dict, name: str = "") -> Any:
    """``value`` (a response as plain dicts and lists) with the allow-listed rewrites applied, top down (a
    rewritten struct or list is walked on)."""
    if name == "records" and isinstance(value, bytes | type(None)):
        value = decode_records(value)
    for a in allowances:
        if name in a.fields and (not a.apis or api in a.apis):
            value = a.rewrite(value, state)
    if isinstance(value, dict):
        return {k: normalize(api, v, allowances, state, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(api, v, allowances, state) for v in value]
    return value


def iter_differences(left: Any, right: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, left value, right value) of every field that differs, in declaration order (a list of another
    length yields its common prefix's differences, then ``<path>.length``)."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in list(left) + [k for k in right if k not in left]:
            if key not in left or key not in right:
                yield (f"{path}.{key}".lstrip("."), left.get(key, "<absent>"), right.get(key, "<absent>"))
            else:
                yield from iter_differences(left[key], right[key], f"{path}.{key}")
    elif isinstance(left, list) and isinstance(right, list):
        for i, (a, b) in enumerate(zip(left, right, strict=False)):
            yield from iter_differences(a, b, f"{path}[{i}]")
        if len(left) != len(right):
            yield (f"{path}.length".lstrip("."), len(left), len(right))
    elif left != right:
        yield (path.lstrip("."), left, right)


def first_difference(left: Any, right: Any) -> tuple[str, Any, Any] | None:
    return next(iter_differences(left, right), None)


# Whole steps whose answers are known to differ (Step.differs names one), with why.
KNOWN_DIFFERENCES = {
    "duplicate-append-time": "a duplicate idempotent batch (one of the last five of its producer) is answered"
    " with its original base offset by both, but Kafka fills log_append_time_ms from its producer-state"
    " cache (the batch's timestamp) even on a CreateTime topic, where kafkalog answers -1 as for the"
    " original append (a Java producer would report that time as the record's timestamp)",
    "lenient-client-software-name": "kafkalog accepts any ApiVersions v3+ client_software_name/version;"
    " Kafka answers INVALID_REQUEST (42) with no API list when they do not match [a-zA-Z0-9._-]+ (the"
    " reference notes: do not be strict; librdkafka retries at v0 after a 42)",
}


def compare_runs(
    ours: list[Exchange], theirs: list[Exchange], allowances: tuple[Allowance, ...] = ALLOWANCES
) -> list[str]:
    """Every difference between two runs of one script (kafkalog's first), first one first; [] if none."""
    out: list[str] = []
    state_ours: dict = {}
    state_theirs: dict = {}
    for a, b in zip(ours, theirs, strict=True):
        if a.response is None:  # a deferred step: its answer is compared where it is received
            continue
        api = API_BY_KEY[a.step.api_key].name
        plain_a = normalize(api, a.response.to_dict(), allowances, state_ours)
        plain_b = normalize(api, b.response.to_dict(), allowances, state_theirs)
        if not a.step.compare:
            continue
        version = a.step.version if a.step.response_version is None else a.step.response_version
        where = f"step {a.step.label!r} ({api} v{version})"
        found = [f"{path}: kafkalog {x!r} != kafka {y!r}" for path, x, y in iter_differences(plain_a, plain_b)]
        if a.correlation_id != b.correlation_id:
            found.insert(0, f"correlation_id: kafkalog {a.correlation_id} != kafka {b.correlation_id}")
        if a.step.differs is not None:
            if a.step.differs not in KNOWN_DIFFERENCES:
                raise KeyError(f"step {a.step.label!r}: {a.step.differs!r} is not in KNOWN_DIFFERENCES")
            if not found:
                out.append(f"{where}: the same answers, but listed as known difference {a.step.differs!r}")
            continue
        out.extend(f"{where}: {d}" for d in found)
    return out


def differences(address_ours: str, address_theirs: str, steps: list[Step], **kw: Any) -> list[str]:
    """Run ``steps`` on kafkalog then on Kafka; every difference, first one first ([]: the same answers)."""
    ours = run_script(address_ours, steps)
    theirs = run_script(address_theirs, steps)
    return compare_runs(ours, theirs, **kw)
