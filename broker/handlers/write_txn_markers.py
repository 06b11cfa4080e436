"""WriteTxnMarkers (key 27), v0-1: the transaction coordinator asks this broker, as partition leader, to end
a producer's transaction with a COMMIT or ABORT marker (a control batch) in each named partition.

Per marker and partition: the leader appends the marker (``PartitionLog.append_control_marker``) with
acks=all semantics, as Kafka does: NOT_ENOUGH_REPLICAS before the append while the ISR is smaller than
``min.insync.replicas``, then the answer waits until the high watermark passed the marker (NONE,
NOT_ENOUGH_REPLICAS_AFTER_APPEND, or REQUEST_TIMED_OUT after 30 s, the coordinator's request timeout).
Per-partition errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, INVALID_PRODUCER_EPOCH (the
marker's epoch is below the producer's current epoch in that partition), TRANSACTION_COORDINATOR_FENCED
(a marker from an older coordinator epoch than the producer's latest marker there), KAFKA_STORAGE_ERROR.
An ABORT marker adds an entry to the partition's aborted-transaction index; both end the producer's
ongoing transaction, which moves the last stable offset. Meant for brokers: needs Alter or ClusterAction on
the cluster, else every partition answers CLUSTER_AUTHORIZATION_FAILED and nothing is written.
Gaps: v2 (Kafka 4.4, KIP-1228: each marker's ``TransactionVersion``, which the leader uses to validate a
transactions-v2 marker's epoch) is not served: the leader checks epochs one way for every marker.
"""

from __future__ import annotations

import logging

from broker.coordinator.txn_verification import clear_guard
from broker.handlers.produce import _await_replication
from broker.log import LogAppendError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

API_KEY = ApiKey.WRITE_TXN_MARKERS
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]
MARKER_TIMEOUT_S = 30.0
log = logging.getLogger("kafkalog.handlers.write_txn_markers")


class _Result:
    """What ``_await_replication`` fills in for one partition."""

    __slots__ = ("error_code", "error_message")

    def __init__(self) -> None:
        self.error_code = ErrorCode.NONE
        self.error_message = None


async def handle(ctx, request):
    b = ctx.services
    Resp = _API.Response
    TopicResult = Resp.WritableTxnMarkerResult.WritableTxnMarkerTopicResult
    PartitionResult = TopicResult.WritableTxnMarkerPartitionResult
    waits = []  # (partition, required high watermark, _Result)
    results = []  # (marker producer id, [(topic, [(partition index, _Result)])])
    allowed = ctx.authorize_cluster(AclOperation.ALTER) or ctx.authorize_cluster(AclOperation.CLUSTER_ACTION)
    for marker in request.markers:
        topics = []
        for topic in marker.topics:
            parts = []
            for index in topic.partition_indexes:
                result = _Result()
                parts.append((index, result))
                if not allowed:
                    result.error_code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                    continue
                part, code = b.replica_manager.leader_partition(topic.name, index)
                if part is None:
                    result.error_code = code
                    continue
                isr_needed = part.log.config.min_insync_replicas
                if len(part.isr) < isr_needed:
                    result.error_code = ErrorCode.NOT_ENOUGH_REPLICAS
                    continue
                try:
                    info = part.log.append_control_marker(
                        marker.producer_id,
                        marker.producer_epoch,
                        marker.transaction_result,
                        marker.coordinator_epoch,
                        part.leader_epoch,
                    )
                except LogAppendError as e:
                    result.error_code = e.error_code
                    log.info("marker for producer %d in %s-%d refused: %s", marker.producer_id, topic.name, index, e)
                    continue
                clear_guard(part, marker.producer_id)  # verifications started before the marker are void
                part.append_notifier.notify()
                part.maybe_advance_high_watermark()
                if part.high_watermark <= info.last_offset:
                    waits.append((part, info.last_offset + 1, result))
            topics.append((topic.name, parts))
        results.append((marker.producer_id, topics))
    if waits:
        await _await_replication(b, waits, MARKER_TIMEOUT_S, ctx.disconnected)
    return Resp(
        markers=[
            Resp.WritableTxnMarkerResult(
                producer_id=pid,
                topics=[
                    TopicResult(
                        name=name,
                        partitions=[PartitionResult(partition_index=i, error_code=r.error_code) for i, r in parts],
                    )
                    for name, parts in topics
                ],
            )
            for pid, topics in results
        ]
    )
