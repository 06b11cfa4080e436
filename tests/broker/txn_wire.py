"""Transaction helpers for broker tests: transactional batches and WriteTxnMarkers / read_committed Fetch /
ListOffsets bodies sent over the wire with our codec."""

from __future__ import annotations

import time

from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.records import RecordBatchBuilder, iter_batches

K = ApiKey
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def txn_batch(pid: int, values, *, seq: int = 0, epoch: int = 0) -> bytes:
    """A transactional batch of producer ``pid`` (fixed id and epoch, as InitProducerId would hand out)."""
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True)
    now = int(time.time() * 1000)
    for v in values:
        b.append(now, None, v)
    return b.build()


def markers_body(*markers):
    """``markers``: ``(pid, epoch, commit, coordinator_epoch, {topic: [partitions]})``."""
    R = API_BY_KEY[K.WRITE_TXN_MARKERS].Request
    return R(
        markers=[
            R.WritableTxnMarker(
                producer_id=pid,
                producer_epoch=epoch,
                transaction_result=commit,
                topics=[
                    R.WritableTxnMarker.WritableTxnMarkerTopic(name=t, partition_indexes=ps) for t, ps in topics.items()
                ],
                coordinator_epoch=coordinator_epoch,
            )
            for pid, epoch, commit, coordinator_epoch, topics in markers
        ]
    )


def write_markers(w, *markers, version: int = 1) -> dict[tuple[int, str, int], int]:
    """Send WriteTxnMarkers; ``{(pid, topic, partition): error code}``."""
    resp = w.call(K.WRITE_TXN_MARKERS, version, markers_body(*markers))
    return {
        (m.producer_id, t.name, p.partition_index): p.error_code
        for m in resp.markers
        for t in m.topics
        for p in t.partitions
    }


def list_latest(w, topic: str, isolation: int, partition: int = 0, version: int = 7) -> int:
    R = API_BY_KEY[K.LIST_OFFSETS].Request
    body = R(
        replica_id=-1,
        isolation_level=isolation,
        topics=[
            R.ListOffsetsTopic(
                name=topic,
                partitions=[R.ListOffsetsTopic.ListOffsetsPartition(partition_index=partition, timestamp=-1)],
            )
        ],
    )
    part = w.call(K.LIST_OFFSETS, version, body).topics[0].partitions[0]
    assert part.error_code == 0, part
    return part.offset


def data_values(records) -> list[bytes]:
    """Values of the data records (control batches skipped) in fetched bytes, partial last batch ignored."""
    return [r.value for v in iter_batches(bytes(records or b"")) if not v.is_control for r in v.records()]


def committed_view(records, aborted) -> list[bytes]:
    """What a read_committed client keeps: data of producers not in an aborted transaction at that offset
    (Kafka's consumer rule: an aborted producer's records from its first offset until its ABORT marker)."""
    starts = sorted((a.first_offset, a.producer_id) for a in aborted or [])
    aborting: set[int] = set()
    out = []
    for v in iter_batches(bytes(records or b"")):
        h = v.header()
        while starts and starts[0][0] <= h.base_offset:
            aborting.add(starts.pop(0)[1])
        if v.is_control:
            aborting.discard(h.producer_id)
            continue
        if h.is_transactional and h.producer_id in aborting:
            continue
        out.extend(r.value for r in v.records())
    return out


def find_txn_coordinator(w, transactional_id: str, attempts: int = 100) -> int:
    """FindCoordinator for ``transactional_id`` until it answers (the first creates ``__transaction_state``):
    the coordinator's node id."""
    R = API_BY_KEY[K.FIND_COORDINATOR].Request
    for _ in range(attempts):
        resp = w.call(K.FIND_COORDINATOR, 1, R(key=transactional_id, key_type=1))
        if resp.error_code == 0:
            return resp.node_id
        time.sleep(0.05)
    raise AssertionError(f"no transaction coordinator for {transactional_id!r}: {resp}")


def init_txn_producer(w, transactional_id: str, *, version: int = 4, attempts: int = 100) -> tuple[int, int]:
    """InitProducerId for ``transactional_id`` (retrying while the coordinator loads): (producer id, epoch)."""
    find_txn_coordinator(w, transactional_id)
    R = API_BY_KEY[K.INIT_PRODUCER_ID].Request
    for _ in range(attempts):
        resp = w.call(
            K.INIT_PRODUCER_ID,
            version,
            R(transactional_id=transactional_id, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1),
        )
        if resp.error_code == 0:
            return resp.producer_id, resp.producer_epoch
        time.sleep(0.05)
    raise AssertionError(f"InitProducerId {transactional_id!r} failed: {resp}")


def add_partitions(w, transactional_id: str, pid: int, epoch: int, topics: dict[str, list[int]], version: int = 3):
    """AddPartitionsToTxn (a producer's, v0-3): ``{(topic, partition): error code}``."""
    R = API_BY_KEY[K.ADD_PARTITIONS_TO_TXN].Request
    body = R(
        v3_and_below_transactional_id=transactional_id,
        v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[R.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in topics.items()],
    )
    resp = w.call(K.ADD_PARTITIONS_TO_TXN, version, body)
    return {
        (t.name, p.partition_index): p.partition_error_code
        for t in resp.results_by_topic_v3_and_below
        for p in t.results_by_partition
    }
