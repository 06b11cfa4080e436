"""Differential checks (issue 25): the same raw request sequences to kafkalog and Apache Kafka 3.9 / 4.4.

Each test builds one script (``tests/compat/differential.py``) with a run-unique tag in its topic, group and
transactional ids, runs it on the ``kafkalog`` broker and on the ``kafka`` broker, and asserts that the
responses agree field by field once the allow-listed differences are normalized. Versions are explicit and
served by all three brokers (Kafka 4 dropped the pre-2.1 ones).
"""

from __future__ import annotations

import struct
import time
import uuid

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.records import iter_records
from spark_kafkalog.records.batch_builder import build_batch

from .differential import Step, differences, raw_header

pytestmark = pytest.mark.compat

K = ApiKey
CREATE_V, METADATA_V, PRODUCE_V, FETCH_V, LIST_V = 7, 12, 9, 12, 7


def req(api_key: int, **fields):
    """A request body from nested dicts (missing fields take their defaults)."""
    return API_BY_KEY[api_key].Request.from_dict(fields)


def tag() -> str:
    return uuid.uuid4().hex[:8]


def records(ts: list[int], prefix: str = "k") -> list:
    return [(t, f"{prefix}{i}".encode(), b"v" * (i + 1), [("h", b"x")]) for i, t in enumerate(ts)]


def create(label: str, topics: list[tuple[str, int, int, dict]], **kw) -> Step:
    return Step(
        label,
        K.CREATE_TOPICS,
        CREATE_V,
        req(
            K.CREATE_TOPICS,
            topics=[
                {
                    "name": n,
                    "num_partitions": p,
                    "replication_factor": rf,
                    "configs": [{"name": k, "value": v} for k, v in c.items()],
                }
                for n, p, rf, c in topics
            ],
            timeout_ms=30000,
            **kw,
        ),
    )


def metadata_ready(topic: str, partitions: int) -> list[Step]:
    """Metadata of ``topic`` repeated until every partition has a leader (Kafka elects asynchronously), then
    ListOffsets of every partition until the leader serves it (Kafka 4's metadata can name a leader a
    moment before that broker acts as one: NOT_LEADER_OR_FOLLOWER); the second step is not compared."""

    def ready(r) -> bool:
        t = r.topics[0]
        return t.error_code == 0 and len(t.partitions) == partitions and all(p.leader_id >= 0 for p in t.partitions)

    served = lambda r: all(p.error_code == 0 for t in r.topics for p in t.partitions)  # noqa: E731
    return [
        Step(
            f"metadata {topic}",
            K.METADATA,
            METADATA_V,
            req(K.METADATA, topics=[{"name": topic}], allow_auto_topic_creation=False),
            until=ready,
        ),
        Step(
            f"leaders of {topic} serving",
            K.LIST_OFFSETS,
            LIST_V,
            req(
                K.LIST_OFFSETS,
                replica_id=-1,
                topics=[
                    {"name": topic, "partitions": [{"partition_index": p, "timestamp": -1} for p in range(partitions)]}
                ],
            ),
            until=served,
            compare=False,
        ),
    ]


def produce(label: str, topic: str, batch, *, partition: int = 0, acks: int = -1, transactional_id=None, **kw) -> Step:
    def body(ctx):
        data = batch(ctx) if callable(batch) else batch
        return req(
            K.PRODUCE,
            transactional_id=transactional_id,
            acks=acks,
            timeout_ms=30000,
            topic_data=[{"name": topic, "partition_data": [{"index": partition, "records": bytes(data)}]}],
        )

    return Step(label, K.PRODUCE, PRODUCE_V, body, **kw)


def fetch(label: str, topic: str, offset: int, *, partition: int = 0, isolation: int = 0, **kw) -> Step:
    return Step(
        label,
        K.FETCH,
        FETCH_V,
        req(
            K.FETCH,
            max_wait_ms=50,
            min_bytes=0,
            max_bytes=1 << 20,
            isolation_level=isolation,
            topics=[
                {
                    "topic": topic,
                    "partitions": [{"partition": partition, "fetch_offset": offset, "partition_max_bytes": 1 << 20}],
                }
            ],
        ),
        **kw,
    )


def list_offsets(
    label: str, topic: str, timestamps: list[int], *, isolation: int = 0, partition: int = 0
) -> list[Step]:
    """One ListOffsets v7 per timestamp (Kafka refuses a partition twice in one request)."""
    return [
        Step(
            f"{label} {ts}",
            K.LIST_OFFSETS,
            LIST_V,
            req(
                K.LIST_OFFSETS,
                replica_id=-1,
                isolation_level=isolation,
                topics=[{"name": topic, "partitions": [{"partition_index": partition, "timestamp": ts}]}],
            ),
        )
        for ts in timestamps
    ]


def check(kafkalog, kafka, steps: list[Step]) -> None:
    found = differences(kafkalog.bootstrap_servers, kafka.bootstrap_servers, steps)
    assert not found, f"kafkalog and Kafka {kafka.version} differ at {found[0]}" + "".join(
        f"\n  also {d}" for d in found[1:]
    )


def three_batches(topic: str, t0: int) -> list[Step]:
    """Offsets 0-2 (t0, +10, +20), 3-4 (+30, +40), 5-6 (+35, +50): the max timestamp is not the last batch's
    first record, and +35 sits after an offset with a larger timestamp."""
    return [
        produce("produce a", topic, build_batch(records([t0, t0 + 10, t0 + 20], "a"))),
        produce("produce b", topic, build_batch(records([t0 + 30, t0 + 40], "b"))),
        produce("produce c", topic, build_batch(records([t0 + 35, t0 + 50], "c"))),
    ]


def base_ts() -> int:
    return (int(time.time()) // 60) * 60_000 - 3_600_000


def test_list_offsets_by_timestamp_and_sentinels(kafkalog, kafka):
    topic, t0 = f"diff-ts-{tag()}", base_ts()
    stamps = [t0 - 100, t0, t0 + 10, t0 + 15, t0 + 36, t0 + 45, t0 + 50, t0 + 1000, -1, -2, -3]
    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {})]),
            *metadata_ready(topic, 1),
            *list_offsets("list on the empty log", topic, [t0, -1, -2, -3]),
            *three_batches(topic, t0),
            *list_offsets("list", topic, stamps),
        ],
    )


def test_fetch_mid_batch_returns_the_whole_batch(kafkalog, kafka):
    topic, t0 = f"diff-mid-{tag()}", base_ts()
    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {})]),
            *metadata_ready(topic, 1),
            *three_batches(topic, t0),
            fetch("fetch at 1 (inside batch a)", topic, 1),
            fetch("fetch at 4 (last of batch b)", topic, 4),
            fetch("fetch at the end", topic, 7),
        ],
    )


def test_out_of_range_offsets_and_delete_records(kafkalog, kafka):
    topic, t0 = f"diff-oor-{tag()}", base_ts()

    def delete(label: str, offset: int) -> Step:
        return Step(
            label,
            K.DELETE_RECORDS,
            2,
            req(
                K.DELETE_RECORDS,
                topics=[{"name": topic, "partitions": [{"partition_index": 0, "offset": offset}]}],
                timeout_ms=30000,
            ),
        )

    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {})]),
            *metadata_ready(topic, 1),
            *three_batches(topic, t0),
            fetch("fetch past the end", topic, 100),
            delete("delete records beyond the high watermark", 100),
            delete("delete records to 3", 3),
            fetch("fetch below the log start", topic, 1),
            fetch("fetch at the log start", topic, 3),
            *list_offsets("list after delete", topic, [t0 - 100, t0 + 10, -2, -1, -3]),
        ],
    )


def test_transactions_aborted_list_and_last_stable_offset(kafkalog, kafka):
    topic, txn, t0 = f"diff-txn-{tag()}", f"diff-txn-{tag()}", base_ts()

    def pid(ctx):
        return ctx["init producer id"].producer_id, ctx["init producer id"].producer_epoch

    def tx_batch(seq: int, stamps: list[int], prefix: str):
        def build(ctx):
            producer_id, epoch = pid(ctx)
            return build_batch(
                records(stamps, prefix),
                producer_id=producer_id,
                producer_epoch=epoch,
                base_sequence=seq,
                transactional=True,
            )

        return build

    def add_partitions(label: str) -> Step:
        def body(ctx):
            producer_id, epoch = pid(ctx)
            return req(
                K.ADD_PARTITIONS_TO_TXN,
                v3_and_below_transactional_id=txn,
                v3_and_below_producer_id=producer_id,
                v3_and_below_producer_epoch=epoch,
                v3_and_below_topics=[{"name": topic, "partitions": [0]}],
            )

        # CONCURRENT_TRANSACTIONS (51) while the previous transaction's markers are being written
        until = lambda r: r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code != 51  # noqa: E731
        return Step(label, K.ADD_PARTITIONS_TO_TXN, 3, body, until=until)

    def end(label: str, committed: bool) -> Step:
        def body(ctx):
            producer_id, epoch = pid(ctx)
            return req(
                K.END_TXN, transactional_id=txn, producer_id=producer_id, producer_epoch=epoch, committed=committed
            )

        return Step(label, K.END_TXN, 3, body)

    settled = lambda r: r.responses[0].partitions[0].last_stable_offset == r.responses[0].partitions[0].high_watermark  # noqa: E731
    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {})]),
            *metadata_ready(topic, 1),
            Step(
                "find transaction coordinator",
                K.FIND_COORDINATOR,
                3,
                req(K.FIND_COORDINATOR, key=txn, key_type=1),
                until=lambda r: r.error_code == 0,
            ),
            Step(
                "init producer id",
                K.INIT_PRODUCER_ID,
                4,
                req(K.INIT_PRODUCER_ID, transactional_id=txn, transaction_timeout_ms=60000),
                until=lambda r: r.error_code not in (14, 15, 16, 51),
            ),
            add_partitions("add partition (aborted txn)"),
            produce("produce aborted", topic, tx_batch(0, [t0, t0 + 1], "abort"), transactional_id=txn),
            fetch("read_committed fetch, transaction open", topic, 0, isolation=1),
            *list_offsets("read_committed latest, transaction open", topic, [-1], isolation=1),
            *list_offsets("read_uncommitted latest, transaction open", topic, [-1]),
            end("abort", False),
            add_partitions("add partition (committed txn)"),
            produce("produce committed", topic, tx_batch(2, [t0 + 2, t0 + 3, t0 + 4], "commit"), transactional_id=txn),
            end("commit", True),
            fetch("read_committed fetch after commit", topic, 0, isolation=1, until=settled),
            fetch("read_uncommitted fetch after commit", topic, 0),
            *list_offsets("read_committed latest after commit", topic, [-1], isolation=1),
        ],
    )


def test_error_codes_for_bad_input(kafkalog, kafka):
    t = tag()
    topic, small = f"diff-bad-{t}", f"diff-small-{t}"
    big = build_batch([(base_ts(), b"k", b"x" * 4000, [])])
    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {}), (small, 1, 1, {"max.message.bytes": "1024"})]),
            *metadata_ready(topic, 1),
            *metadata_ready(small, 1),
            create(
                "create bad topics",
                [
                    (f"diff-zero-partitions-{t}", 0, 1, {}),
                    (f"diff-zero-rf-{t}", 1, 0, {}),
                    (f"diff-rf-3-{t}", 1, 3, {}),
                    (f"diff bad name {t}", 1, 1, {}),
                    (f"diff-bad-policy-{t}", 1, 1, {"cleanup.policy": "bogus"}),
                    (f"diff-unknown-config-{t}", 1, 1, {"no.such.config": "1"}),
                    (topic, 1, 1, {}),
                ],
            ),
            Step(
                "metadata of an unknown topic",
                K.METADATA,
                METADATA_V,
                req(K.METADATA, topics=[{"name": f"diff-missing-{t}"}], allow_auto_topic_creation=False),
            ),
            produce("produce to an unknown topic", f"diff-missing-{t}", build_batch(records([base_ts()]))),
            produce("produce to an unknown partition", topic, build_batch(records([base_ts()])), partition=5),
            produce("produce with acks=2", topic, build_batch(records([base_ts()])), acks=2),
            produce("produce a batch over max.message.bytes", small, big),
            fetch("fetch of an unknown partition", topic, 0, partition=5),
            *list_offsets("list offsets of an unknown partition", topic, [-1], partition=5),
        ],
    )


def test_api_versions_unsupported_version_and_invalid_client_name(kafkalog, kafka):
    body = b"\x05diff\x041.0\x00"  # compact client_software_name "diff", version "1.0", no tags
    check(
        kafkalog,
        kafka,
        [
            Step(
                "api versions v127",
                K.API_VERSIONS,
                127,
                raw=raw_header(K.API_VERSIONS, 127, 1000, flexible=True) + body,
                response_version=0,
            ),
            Step(
                "api versions v3 with an invalid client software name",
                K.API_VERSIONS,
                3,
                req(K.API_VERSIONS, client_software_name="bad name!", client_software_version="1.0"),
                differs="lenient-client-software-name",
            ),
        ],
    )


def group_steps(group: str, topic: str) -> list[Step]:
    meta = (
        struct.pack(">h", 0)
        + struct.pack(">i", 1)
        + struct.pack(">h", len(topic))
        + topic.encode()
        + struct.pack(">i", -1)
    )

    def join(label: str, member=lambda ctx: "", protocols=(("range", meta),)) -> Step:
        return Step(
            label,
            K.JOIN_GROUP,
            5,
            lambda ctx: req(
                K.JOIN_GROUP,
                group_id=group,
                session_timeout_ms=30000,
                rebalance_timeout_ms=30000,
                member_id=member(ctx),
                protocol_type="consumer",
                protocols=[{"name": n, "metadata": m} for n, m in protocols],
            ),
            until=lambda r: r.error_code not in (14, 15, 16),
        )

    def me(ctx) -> str:
        return ctx["join without a member id"].member_id

    def gen(ctx) -> int:
        return ctx["join with the member id"].generation_id

    def commit(label: str, member, generation, grp: str = group) -> Step:
        return Step(
            label,
            K.OFFSET_COMMIT,
            7,
            lambda ctx: req(
                K.OFFSET_COMMIT,
                group_id=grp,
                generation_id_or_member_epoch=generation(ctx),
                member_id=member(ctx),
                topics=[
                    {
                        "name": topic,
                        "partitions": [{"partition_index": 0, "committed_offset": 2, "committed_metadata": "m"}],
                    }
                ],
            ),
        )

    def heartbeat(label: str, member) -> Step:
        return Step(
            label,
            K.HEARTBEAT,
            3,
            lambda ctx: req(K.HEARTBEAT, group_id=group, generation_id=gen(ctx), member_id=member(ctx)),
        )

    def describe(label: str) -> Step:
        return Step(label, K.DESCRIBE_GROUPS, 4, req(K.DESCRIBE_GROUPS, groups=[group, f"{group}-unknown"]))

    def offset_fetch(label: str, grp: str) -> Step:
        return Step(
            label,
            K.OFFSET_FETCH,
            7,
            req(K.OFFSET_FETCH, group_id=grp, topics=[{"name": topic, "partition_indexes": [0, 3]}]),
        )

    return [
        Step(
            "find group coordinator",
            K.FIND_COORDINATOR,
            3,
            req(K.FIND_COORDINATOR, key=group, key_type=0),
            until=lambda r: r.error_code == 0,
        ),
        Step(  # as a client would before asking about another group (its offsets partition may still load)
            "find the unknown group's coordinator",
            K.FIND_COORDINATOR,
            3,
            req(K.FIND_COORDINATOR, key=f"{group}-unknown", key_type=0),
            until=lambda r: r.error_code == 0,
        ),
        join("join without a member id"),
        join("join with the member id", me),
        Step(
            "sync as leader",
            K.SYNC_GROUP,
            3,
            lambda ctx: req(
                K.SYNC_GROUP,
                group_id=group,
                generation_id=gen(ctx),
                member_id=me(ctx),
                assignments=[{"member_id": me(ctx), "assignment": b"\x00\x00assignment"}],
            ),
        ),
        heartbeat("heartbeat", me),
        describe("describe the stable group"),
        commit("offset commit", me, gen),
        offset_fetch("offset fetch", group),
        offset_fetch("offset fetch of an unknown group", f"{group}-unknown"),
        commit("offset commit, wrong generation", me, lambda ctx: gen(ctx) + 7),
        commit("offset commit, unknown member", lambda ctx: "nobody", gen),
        commit("offset commit, unknown group and member", lambda ctx: "nobody", lambda ctx: 5, f"{group}-other"),
        heartbeat("heartbeat of an unknown member", lambda ctx: "nobody"),
        join("join with no protocols", me, protocols=()),
        Step(
            "leave",
            K.LEAVE_GROUP,
            3,
            lambda ctx: req(K.LEAVE_GROUP, group_id=group, members=[{"member_id": me(ctx)}]),
        ),
        heartbeat("heartbeat after leaving", me),
        describe("describe the empty group"),
    ]


def test_group_join_sync_heartbeat_leave_and_bad_members(kafkalog, kafka):
    t = tag()
    topic, group = f"diff-grp-{t}", f"diff-grp-{t}"
    check(
        kafkalog,
        kafka,
        [create("create", [(topic, 1, 1, {})]), *metadata_ready(topic, 1), *group_steps(group, topic)],
    )


def pause(label: str, seconds: float) -> Step:
    """A step that only lets time pass on each broker (an ApiVersions answered, then a sleep; not compared)."""

    def wait(response) -> bool:
        time.sleep(seconds)
        return True

    body = req(K.API_VERSIONS, client_software_name="d", client_software_version="1")
    return Step(label, K.API_VERSIONS, 3, body, until=wait, compare=False)


def test_compacted_topic_after_cleaning(kafkalog, kafka):
    """Keys rewritten and one deleted (a tombstone kept: delete.retention.ms is a day), the segment rolled by
    segment.ms; once each broker's cleaner ran (every log.cleaner.backoff.ms, 15 s by default on both), a
    Fetch from 0 returns the retained records in their batches, with offset gaps."""
    topic, t0 = f"diff-compact-{tag()}", base_ts()
    configs = {
        "cleanup.policy": "compact",
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "min.compaction.lag.ms": "0",
        "delete.retention.ms": "86400000",
    }

    def keyed(pairs: list[tuple[bytes, bytes | None]], ts: int):
        return build_batch([(ts + i, k, v, []) for i, (k, v) in enumerate(pairs)])

    def cleaned(r) -> bool:
        data = r.responses[0].partitions[0].records
        return bool(data) and 0 not in [rec.offset for rec in iter_records(bytes(data))]

    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, configs)]),
            *metadata_ready(topic, 1),
            produce("produce 1", topic, keyed([(b"k1", b"a"), (b"k2", b"a"), (b"k3", b"a")], t0)),
            produce("produce 2", topic, keyed([(b"k1", b"b"), (b"k2", None)], t0 + 10)),
            produce("produce 3", topic, keyed([(b"k4", b"a")], t0 + 20)),
            # kafkalog rolls when segment.ms passed on its clock since the segment's first append, Kafka when
            # the new batch's timestamp is segment.ms past the segment's first one: both happen here
            pause("let segment.ms pass", 0.5),
            produce("produce 4 (rolls the segment)", topic, keyed([(b"k3", b"b")], t0 + 1000)),
            fetch("fetch from 0 once cleaned", topic, 0, until=cleaned, timeout_s=60),
            *list_offsets("list after cleaning", topic, [-2, -1, t0, t0 + 5]),
        ],
    )


def test_group_rebalance_of_two_members(kafkalog, kafka):
    """A second member joins a stable group (REBALANCE_IN_PROGRESS on the first's heartbeat, its join held
    until the first rejoins), the follower's SyncGroup waits for the leader's, then the second leaves."""
    t = tag()
    topic, group = f"diff-reb-{t}", f"diff-reb-{t}"
    meta = b"\x00\x00\x00\x00\x00\x01" + struct.pack(">h", len(topic)) + topic.encode() + b"\xff\xff\xff\xff"

    def ident(label: str):
        return lambda ctx: ctx[label].member_id

    a, b = ident("a joins without a member id"), ident("b joins without a member id")

    def join(label: str, member, conn: int, **kw) -> Step:
        return Step(
            label,
            K.JOIN_GROUP,
            5,
            lambda ctx: req(
                K.JOIN_GROUP,
                group_id=group,
                session_timeout_ms=30000,
                rebalance_timeout_ms=30000,
                member_id=member(ctx) if member else "",
                protocol_type="consumer",
                protocols=[{"name": "range", "metadata": meta}],
            ),
            connection=conn,
            **kw,
        )

    def sync(label: str, member, generation_of: str, conn: int, assign: bool = False, **kw) -> Step:
        def body(ctx):
            assignments = []
            if assign:
                assignments = [  # by member, not by position: the member list's order is allow-listed
                    {"member_id": m.member_id, "assignment": b"for a" if m.member_id == a(ctx) else b"for b"}
                    for m in ctx[generation_of].members
                ]
            return req(
                K.SYNC_GROUP,
                group_id=group,
                generation_id=ctx[generation_of].generation_id,
                member_id=member(ctx),
                assignments=assignments,
            )

        return Step(label, K.SYNC_GROUP, 3, body, connection=conn, **kw)

    def heartbeat(label: str, member, generation_of: str, conn: int, **kw) -> Step:
        return Step(
            label,
            K.HEARTBEAT,
            3,
            lambda ctx: req(
                K.HEARTBEAT, group_id=group, generation_id=ctx[generation_of].generation_id, member_id=member(ctx)
            ),
            connection=conn,
            **kw,
        )

    rebalancing = lambda r: r.error_code == 27  # noqa: E731
    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 2, 1, {})]),
            *metadata_ready(topic, 2),
            Step(
                "find group coordinator",
                K.FIND_COORDINATOR,
                3,
                req(K.FIND_COORDINATOR, key=group, key_type=0),
                until=lambda r: r.error_code == 0,
            ),
            join("a joins without a member id", None, 0, until=lambda r: r.error_code not in (14, 15, 16)),
            join("a joins", a, 0),
            sync("a syncs", a, "a joins", 0, assign=True),
            heartbeat("a heartbeats", a, "a joins", 0),
            join("b joins without a member id", None, 1),
            join("b joins (held)", b, 1, deferred=True),
            heartbeat("a heartbeats during the rebalance", a, "a joins", 0, until=rebalancing),
            join("a rejoins", a, 0),
            join("b's join answered", b, 1, receives="b joins (held)"),
            sync("b syncs (held)", b, "a rejoins", 1, deferred=True),
            sync("a syncs generation 2", a, "a rejoins", 0, assign=True),
            sync("b's sync answered", b, "a rejoins", 1, receives="b syncs (held)"),
            heartbeat("a heartbeats generation 2", a, "a rejoins", 0),
            heartbeat("b heartbeats generation 2", b, "a rejoins", 1),
            heartbeat("b heartbeats with generation 1", b, "a joins", 1),
            Step(
                "b leaves",
                K.LEAVE_GROUP,
                3,
                lambda ctx: req(K.LEAVE_GROUP, group_id=group, members=[{"member_id": b(ctx)}]),
                connection=1,
            ),
            heartbeat("a heartbeats after b left", a, "a rejoins", 0, until=rebalancing),
            join("a rejoins alone", a, 0),
            sync("a syncs generation 3", a, "a rejoins alone", 0, assign=True),
            heartbeat("a heartbeats generation 3", a, "a rejoins alone", 0),
        ],
    )


def test_log_append_time_topic(kafkalog, kafka):
    topic, t0 = f"diff-lat-{tag()}", base_ts()
    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {"message.timestamp.type": "LogAppendTime"})]),
            *metadata_ready(topic, 1),
            produce("produce", topic, build_batch(records([t0, t0 + 10]))),
            fetch("fetch", topic, 0),
            *list_offsets("list", topic, [-2, -1]),
        ],
    )


def test_idempotent_producer_sequences(kafkalog, kafka):
    topic, t0 = f"diff-idem-{tag()}", base_ts()

    def idempotent(seq: int, n: int, epoch_bump: int = 0):
        def build(ctx):
            init = ctx["init producer id"]
            stamps = [t0 + seq + i for i in range(n)]
            return build_batch(
                records(stamps),
                producer_id=init.producer_id,
                producer_epoch=init.producer_epoch + epoch_bump,
                base_sequence=seq,
            )

        return build

    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {})]),
            *metadata_ready(topic, 1),
            Step(
                "init producer id",
                K.INIT_PRODUCER_ID,
                4,
                req(K.INIT_PRODUCER_ID, transactional_id=None, transaction_timeout_ms=60000),
                until=lambda r: r.error_code not in (14, 15, 16),  # Kafka: producer id blocks still loading
            ),
            produce("sequence 0", topic, idempotent(0, 2)),
            produce("sequence 2", topic, idempotent(2, 3)),
            produce("sequence 2 again (a duplicate)", topic, idempotent(2, 3), differs="duplicate-append-time"),
            produce("sequence 0 again (an older duplicate)", topic, idempotent(0, 2), differs="duplicate-append-time"),
            produce("sequence 9 (a gap)", topic, idempotent(9, 1)),
            produce("sequence 5", topic, idempotent(5, 1)),
            fetch("fetch", topic, 0),
        ],
    )


def test_leader_epoch_checks(kafkalog, kafka):
    """current_leader_epoch newer than the leader's (UNKNOWN_LEADER_EPOCH) in Fetch, ListOffsets and
    OffsetForLeaderEpoch; -1 (no check) and the current epoch accepted; the end offset of epoch 0 and of an
    epoch the log never had."""
    topic, t0 = f"diff-epoch-{tag()}", base_ts()

    def list_with(label: str, epoch: int) -> Step:
        return Step(
            label,
            K.LIST_OFFSETS,
            LIST_V,
            req(
                K.LIST_OFFSETS,
                replica_id=-1,
                topics=[
                    {
                        "name": topic,
                        "partitions": [{"partition_index": 0, "current_leader_epoch": epoch, "timestamp": -1}],
                    }
                ],
            ),
        )

    def fetch_with(label: str, epoch: int) -> Step:
        step = fetch(label, topic, 0)
        step.request.topics[0].partitions[0].current_leader_epoch = epoch
        return step

    def end_offset(label: str, current: int, epoch: int) -> Step:
        return Step(
            label,
            K.OFFSET_FOR_LEADER_EPOCH,
            4,
            req(
                K.OFFSET_FOR_LEADER_EPOCH,
                replica_id=-1,
                topics=[
                    {
                        "topic": topic,
                        "partitions": [{"partition": 0, "current_leader_epoch": current, "leader_epoch": epoch}],
                    }
                ],
            ),
        )

    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {})]),
            *metadata_ready(topic, 1),
            *three_batches(topic, t0),
            fetch_with("fetch, epoch 0", 0),
            fetch_with("fetch, epoch 7 (newer)", 7),
            list_with("list offsets, epoch -1", -1),
            list_with("list offsets, epoch 7 (newer)", 7),
            end_offset("end offset of epoch 0", -1, 0),
            end_offset("end offset of epoch 0, current epoch 0", 0, 0),
            end_offset("end offset of epoch 3 (never had)", -1, 3),
            end_offset("end offset, current epoch 7 (newer)", 7, 0),
        ],
    )


def test_transactional_producer_fenced_by_a_new_epoch(kafkalog, kafka):
    topic, txn, t0 = f"diff-fence-{tag()}", f"diff-fence-{tag()}", base_ts()

    def init(label: str) -> Step:
        return Step(
            label,
            K.INIT_PRODUCER_ID,
            4,
            req(K.INIT_PRODUCER_ID, transactional_id=txn, transaction_timeout_ms=60000),
            until=lambda r: r.error_code not in (14, 15, 16, 51),
        )

    def add(label: str, ids: str) -> Step:
        def body(ctx):
            r = ctx[ids]
            return req(
                K.ADD_PARTITIONS_TO_TXN,
                v3_and_below_transactional_id=txn,
                v3_and_below_producer_id=r.producer_id,
                v3_and_below_producer_epoch=r.producer_epoch,
                v3_and_below_topics=[{"name": topic, "partitions": [0]}],
            )

        return Step(label, K.ADD_PARTITIONS_TO_TXN, 3, body)

    def batch_of(ids: str, seq: int):
        def build(ctx):
            r = ctx[ids]
            return build_batch(
                records([t0 + seq]),
                producer_id=r.producer_id,
                producer_epoch=r.producer_epoch,
                base_sequence=seq,
                transactional=True,
            )

        return build

    def end(label: str, ids: str) -> Step:
        def body(ctx):
            r = ctx[ids]
            return req(
                K.END_TXN,
                transactional_id=txn,
                producer_id=r.producer_id,
                producer_epoch=r.producer_epoch,
                committed=True,
            )

        return Step(label, K.END_TXN, 3, body)

    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {})]),
            *metadata_ready(topic, 1),
            Step(
                "find transaction coordinator",
                K.FIND_COORDINATOR,
                3,
                req(K.FIND_COORDINATOR, key=txn, key_type=1),
                until=lambda r: r.error_code == 0,
            ),
            init("init (epoch e)"),
            add("add partition", "init (epoch e)"),
            produce("produce in the transaction", topic, batch_of("init (epoch e)", 0), transactional_id=txn),
            init("init again (epoch e+1, aborts the open transaction)"),
            produce("produce with the old epoch", topic, batch_of("init (epoch e)", 1), transactional_id=txn),
            add("add partition with the old epoch", "init (epoch e)"),
            end("end with the old epoch", "init (epoch e)"),
            fetch("read_uncommitted fetch", topic, 0),
        ],
    )


def test_transactional_offset_commit(kafkalog, kafka):
    """AddOffsetsToTxn + TxnOffsetCommit: OffsetFetch v7 sees the offset pending (require_stable:
    UNSTABLE_OFFSET_COMMIT; otherwise none yet) until EndTxn commits it."""
    t = tag()
    topic, txn, group = f"diff-txoff-{t}", f"diff-txoff-{t}", f"diff-txoff-{t}"

    def ids(ctx):
        r = ctx["init producer id"]
        return r.producer_id, r.producer_epoch

    def add_offsets(ctx):
        pid, epoch = ids(ctx)
        return req(K.ADD_OFFSETS_TO_TXN, transactional_id=txn, producer_id=pid, producer_epoch=epoch, group_id=group)

    def commit_offsets(ctx):
        pid, epoch = ids(ctx)
        return req(
            K.TXN_OFFSET_COMMIT,
            transactional_id=txn,
            group_id=group,
            producer_id=pid,
            producer_epoch=epoch,
            topics=[
                {
                    "name": topic,
                    "partitions": [{"partition_index": 0, "committed_offset": 5, "committed_metadata": "tx"}],
                }
            ],
        )

    def end(ctx):
        pid, epoch = ids(ctx)
        return req(K.END_TXN, transactional_id=txn, producer_id=pid, producer_epoch=epoch, committed=True)

    def offset_fetch(label: str, stable: bool, **kw) -> Step:
        return Step(
            label,
            K.OFFSET_FETCH,
            7,
            req(
                K.OFFSET_FETCH,
                group_id=group,
                topics=[{"name": topic, "partition_indexes": [0]}],
                require_stable=stable,
            ),
            **kw,
        )

    committed = lambda r: r.topics[0].partitions[0].committed_offset == 5  # noqa: E731
    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {})]),
            *metadata_ready(topic, 1),
            Step(
                "find transaction coordinator",
                K.FIND_COORDINATOR,
                3,
                req(K.FIND_COORDINATOR, key=txn, key_type=1),
                until=lambda r: r.error_code == 0,
            ),
            Step(
                "find group coordinator",
                K.FIND_COORDINATOR,
                3,
                req(K.FIND_COORDINATOR, key=group, key_type=0),
                until=lambda r: r.error_code == 0,
            ),
            Step(
                "init producer id",
                K.INIT_PRODUCER_ID,
                4,
                req(K.INIT_PRODUCER_ID, transactional_id=txn, transaction_timeout_ms=60000),
                until=lambda r: r.error_code not in (14, 15, 16, 51),
            ),
            Step("add offsets to txn", K.ADD_OFFSETS_TO_TXN, 3, add_offsets),
            Step("txn offset commit", K.TXN_OFFSET_COMMIT, 3, commit_offsets),
            offset_fetch("offset fetch, pending, require_stable", True),
            offset_fetch("offset fetch, pending", False),
            Step("commit", K.END_TXN, 3, end),
            offset_fetch("offset fetch after commit", True, until=committed),
        ],
    )


def test_static_membership(kafkalog, kafka):
    """A static member (group.instance.id) joins without MEMBER_ID_REQUIRED; rejoining with an empty member
    id under the same instance id gives it a new member id and fences the old one (FENCED_INSTANCE_ID)."""
    t = tag()
    topic, group = f"diff-static-{t}", f"diff-static-{t}"
    meta = b"\x00\x00\x00\x00\x00\x01" + struct.pack(">h", len(topic)) + topic.encode() + b"\xff\xff\xff\xff"

    def join(label: str, member=lambda ctx: "", **kw) -> Step:
        return Step(
            label,
            K.JOIN_GROUP,
            5,
            lambda ctx: req(
                K.JOIN_GROUP,
                group_id=group,
                session_timeout_ms=30000,
                rebalance_timeout_ms=30000,
                member_id=member(ctx),
                group_instance_id="instance-1",
                protocol_type="consumer",
                protocols=[{"name": "range", "metadata": meta}],
            ),
            until=lambda r: r.error_code not in (14, 15, 16),
            **kw,
        )

    def sync(label: str, joined: str) -> Step:
        return Step(
            label,
            K.SYNC_GROUP,
            3,
            lambda ctx: req(
                K.SYNC_GROUP,
                group_id=group,
                generation_id=ctx[joined].generation_id,
                member_id=ctx[joined].member_id,
                group_instance_id="instance-1",
                assignments=[{"member_id": ctx[joined].member_id, "assignment": b"static"}],
            ),
        )

    def heartbeat(label: str, joined: str) -> Step:
        return Step(
            label,
            K.HEARTBEAT,
            3,
            lambda ctx: req(
                K.HEARTBEAT,
                group_id=group,
                generation_id=ctx[joined].generation_id,
                member_id=ctx[joined].member_id,
                group_instance_id="instance-1",
            ),
        )

    check(
        kafkalog,
        kafka,
        [
            create("create", [(topic, 1, 1, {})]),
            *metadata_ready(topic, 1),
            Step(
                "find group coordinator",
                K.FIND_COORDINATOR,
                3,
                req(K.FIND_COORDINATOR, key=group, key_type=0),
                until=lambda r: r.error_code == 0,
            ),
            join("static join"),
            sync("sync", "static join"),
            heartbeat("heartbeat", "static join"),
            join("static rejoin without the member id"),
            heartbeat("heartbeat of the old member id", "static join"),
            heartbeat("heartbeat of the new member id", "static rejoin without the member id"),
            Step(
                "leave by instance id",
                K.LEAVE_GROUP,
                3,
                lambda ctx: req(
                    K.LEAVE_GROUP,
                    group_id=group,
                    members=[
                        {
                            "member_id": ctx["static rejoin without the member id"].member_id,
                            "group_instance_id": "instance-1",
                        }
                    ],
                ),
            ),
        ],
    )
