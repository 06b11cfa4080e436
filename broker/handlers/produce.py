"""Produce (key 0), v0-13: append producer batches to partitions this broker leads.

v0-2 carry v0/v1 message sets, converted here to RecordBatch v2 before they reach the log (the log only
stores v2; ``broker.log.validation.convert_legacy_message_set``: the client's offsets are ignored as in
Kafka, malformed sets get CORRUPT_MESSAGE, INVALID_RECORD, INVALID_TIMESTAMP or
UNSUPPORTED_COMPRESSION_TYPE); v3+ must carry v2 batches (anything else is INVALID_RECORD). An
unexpected exception fails only its partition (UNKNOWN_SERVER_ERROR, logged), as in Kafka. The log
validates sizes and CRC-32C, assigns offsets in place and checks idempotent-producer sequences; its
errors come back per partition (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, INVALID_RECORD,
OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH, ...), with ``error_message`` from v8. A retried
idempotent batch is acknowledged with its original offsets and not appended again.

acks: 0 sends no response at all (and closes the connection when the append failed, as Kafka does, so the
producer notices); 1 answers once the leader appended; -1 (all) is refused with NOT_ENOUGH_REPLICAS
before the append while the ISR is smaller than ``min.insync.replicas``, and answers once the high
watermark (the smallest log end offset in the ISR) passed the batch: NONE, or
NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR has meanwhile shrunk below ``min.insync.replicas`` (the
batch is committed, but by fewer replicas than asked), or REQUEST_TIMED_OUT after ``timeout_ms``; any
other value is INVALID_REQUIRED_ACKS.
Transactional batches (attributes bit 4) need a producer id and epoch (else INVALID_RECORD) and are checked
like idempotent ones; a non-transactional batch of a producer inside a transaction is INVALID_TXN_STATE;
control batches (transaction markers) from clients are INVALID_RECORD (markers come via WriteTxnMarkers).
Authorization (Kafka's ``handleProduceRequest``): when the first batch of any partition is transactional,
the request needs Write on its ``transactional_id`` (a null id fails too), else every partition answers
TRANSACTIONAL_ID_AUTHORIZATION_FAILED and nothing is appended (CVE-2018-17196); each partition needs Write on
its topic, else TOPIC_AUTHORIZATION_FAILED, checked before the topic's existence so nothing leaks. With
acks=0 any of these errors closes the connection, as every other failure does.
Quotas (KIP-219): with a ``producer_byte_rate`` configured, the request's record bytes are recorded once it is
done; over the quota the response (sent at once) carries ``throttle_time_ms`` and the connection is muted for
it (acks=0 too, without a response).
Transaction verification (KIP-890 part 1, ``transaction.partition.verification.enable``, on by default): a
partition whose first batch is transactional, from a producer with no transaction ongoing there at that
epoch, is appended only once the transaction coordinator of ``transactional_id`` confirmed the partition is
in the transaction (in-process, or AddPartitionsToTxn v4+ ``verify_only`` to another broker:
``broker.coordinator.txn_verification``); else INVALID_TXN_STATE ("the partition was not added to the
transaction"; TRANSACTION_ABORTABLE from v11, as Kafka 4.4), INVALID_PRODUCER_EPOCH for a fenced producer, NOT_ENOUGH_REPLICAS while the coordinator cannot
tell (moving, loading, markers being written: the producer retries). A
marker of the producer landing while its partition is verified voids the verification (NOT_ENOUGH_REPLICAS:
the retry verifies again). v12 is a
transactions-v2 producer (KIP-890 part 2): the coordinator adds the partition to the transaction instead of
only verifying it, so such a producer sends no AddPartitionsToTxn. v10's tagged ``current_leader`` and
``node_endpoints`` (KIP-951) are left at their defaults (unknown): clients refresh metadata as before.
v13 names topics by id (KIP-516), answered with the same ids: an id this broker's metadata does not know (or
the zero id) is UNKNOWN_TOPIC_ID for each of its partitions, decided before authorization as in Kafka (an id
names no topic a client could be refused); a known one is handled as its topic's name.
Gaps: without an authorizer a transactional batch with a null ``transactional_id`` is appended and not verified
(Kafka answers it TRANSACTIONAL_ID_AUTHORIZATION_FAILED even then; kafkalog's own tests produce such batches).
"""

from __future__ import annotations

import asyncio
import logging

from broker.api import NO_RESPONSE, CloseConnection
from broker.log import LogAppendError
from broker.log.validation import convert_legacy_message_set
from broker.replication.notifier import wait_any
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records.batch import ATTRIBUTES_OFFSET, TRANSACTIONAL_BIT
from spark_kafkalog.security.acl import AclOperation, ResourceType

from ._topic_ids import name_topics_by_id
from ._txns import txn_verifier

API_KEY = ApiKey.PRODUCE
VERSIONS = (0, 13)
TOPIC_IDS_MIN_VERSION = 13
_API = API_BY_KEY[API_KEY]
_MAGIC_POS = 16
log = logging.getLogger("kafkalog.handlers.produce")


def _as_v2(records, version: int) -> bytearray | memoryview:
    """The request's records as v2 batches (a writable buffer); raises LogAppendError when unusable."""
    if records is None or len(records) == 0:
        raise LogAppendError(ErrorCode.INVALID_RECORD, "the produce request carries no records")
    if len(records) <= _MAGIC_POS:
        raise LogAppendError(ErrorCode.CORRUPT_MESSAGE, f"records of {len(records)} bytes are too short for a batch")
    magic = records[_MAGIC_POS]
    if version >= 3:
        if magic != 2:
            raise LogAppendError(
                ErrorCode.INVALID_RECORD, f"Produce v{version} needs record batches of magic 2, got magic {magic}"
            )
        return records
    if magic not in (0, 1):
        raise LogAppendError(
            ErrorCode.INVALID_RECORD, f"Produce v{version} carries message sets of magic 0 or 1, got magic {magic}"
        )
    return convert_legacy_message_set(records)


# Errors answered with log_start_offset -1, as Kafka's ReplicaManager (UNKNOWN_LOG_APPEND_INFO); every other
# append error carries the partition's log start offset, which the Java producer compares with its last
# acked offset on OUT_OF_ORDER_SEQUENCE_NUMBER / UNKNOWN_PRODUCER_ID to tell lost producer state (KIP-360).
_NO_LOG_START_OFFSET = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.MESSAGE_TOO_LARGE,
        ErrorCode.RECORD_LIST_TOO_LARGE,
        ErrorCode.CORRUPT_MESSAGE,
        ErrorCode.KAFKA_STORAGE_ERROR,
        ErrorCode.UNKNOWN_TOPIC_ID,
    }
)

# Kafka (3.6+, KIP-890) verifies a transactional produce with the coordinator before appending; what that
# refuses is answered with -1 too (seen: INVALID_PRODUCER_EPOCH for a fenced epoch). kafkalog checks the same
# in the append and answers alike.
_TXN_VERIFICATION_ERRORS = frozenset(
    {ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_TXN_STATE}
)


def has_transactional_records(request) -> bool:
    """Kafka's ``RequestUtils.hasTransactionalRecords``: the first batch of some partition is a v2 batch with
    the transactional attribute bit."""
    for topic in request.topic_data:
        for pd in topic.partition_data:
            r = pd.records
            if r is not None and len(r) > ATTRIBUTES_OFFSET + 1 and r[_MAGIC_POS] == 2:
                if r[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_BIT:  # the low byte of the big-endian int16
                    return True
    return False


def _refuse_transactional(ctx, request):
    """The answer when the request carries transactional batches without Write on its transactional id: every
    partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED (acks=0: the connection closes); None when allowed."""
    tid = request.transactional_id
    if not ctx.services.authorizer.enabled or not has_transactional_records(request):
        return None  # no authorizer: a null transactional id is let through (see the module's Gaps)
    if tid is not None and ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, tid):
        return None
    if request.acks == 0:
        return CloseConnection(f"acks=0 transactional produce without Write on transactional id {tid!r}")
    Resp = _API.Response
    code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    return Resp(
        responses=[
            Resp.TopicProduceResponse(
                name=t.name,
                topic_id=t.topic_id,
                partition_responses=[
                    Resp.TopicProduceResponse.PartitionProduceResponse(index=pd.index, error_code=code, base_offset=-1)
                    for pd in t.partition_data
                ],
            )
            for t in request.topic_data
        ],
        throttle_time_ms=0,
    )


async def handle(ctx, request):
    b = ctx.services
    Resp = _API.Response
    by_id = ctx.version >= TOPIC_IDS_MIN_VERSION
    unknown_ids = name_topics_by_id(b.metadata, request.topic_data) if by_id else set()
    refused = _refuse_transactional(ctx, request)
    if refused is not None:
        return refused
    acks = request.acks
    writable = {
        t.name
        for t in request.topic_data
        if not (by_id and t.topic_id in unknown_ids) and ctx.authorize(AclOperation.WRITE, ResourceType.TOPIC, t.name)
    }
    verification = await txn_verifier(ctx).verify_produce(
        request, ctx.version, lambda t, i: b.replica_manager.leader_partition(t, i)[0] if t in writable else None
    )
    waits = []  # (partition, required high watermark, response entry)
    responses = []
    for topic in request.topic_data:
        entries = []
        for pd in topic.partition_data:
            entry = Resp.TopicProduceResponse.PartitionProduceResponse(
                index=pd.index, error_code=ErrorCode.NONE, base_offset=-1
            )
            entries.append(entry)
            if by_id and topic.topic_id in unknown_ids:
                entry.error_code = ErrorCode.UNKNOWN_TOPIC_ID
                continue
            if topic.name not in writable:  # before existence: an unauthorized client learns nothing
                entry.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            if acks not in (-1, 0, 1):
                entry.error_code = ErrorCode.INVALID_REQUIRED_ACKS
                entry.error_message = f"acks must be -1, 0 or 1, not {acks}"
                continue
            part, code = b.replica_manager.leader_partition(topic.name, pd.index)
            if part is None:
                entry.error_code = code
                continue
            refusal = verification.refusal((topic.name, pd.index), part)  # KIP-890 transaction verification
            if refusal is not None:
                entry.error_code, entry.error_message = refusal
                continue
            try:
                records = _as_v2(pd.records, ctx.version)
                info = part.append_as_leader(records, required_acks=acks)
            except LogAppendError as e:
                entry.error_code = e.error_code
                entry.error_message = str(e)
                if e.error_code not in _NO_LOG_START_OFFSET and not (
                    request.transactional_id is not None and e.error_code in _TXN_VERIFICATION_ERRORS
                ):  # e.g. OUT_OF_ORDER_SEQUENCE_NUMBER (KIP-360's check)
                    entry.log_start_offset = part.log.log_start_offset
                log.debug("produce to %s-%d from %s rejected: %s", topic.name, pd.index, ctx.peer, e)
                continue
            except Exception as e:  # as Kafka: a bug fails this partition only, not the request or connection
                entry.error_code = ErrorCode.UNKNOWN_SERVER_ERROR
                entry.error_message = f"unexpected error appending to {topic.name}-{pd.index}: {type(e).__name__}"
                log.exception("produce to %s-%d from %s failed", topic.name, pd.index, ctx.peer)
                continue
            if not info.duplicate:
                b.metrics.produced(topic.name, len(records), info.num_records)
            entry.base_offset = info.first_offset
            entry.log_append_time_ms = info.log_append_time
            entry.log_start_offset = info.log_start_offset
            if acks == -1 and part.high_watermark <= info.last_offset:
                waits.append((part, info.last_offset + 1, entry))
        responses.append(
            Resp.TopicProduceResponse(name=topic.name, topic_id=topic.topic_id, partition_responses=entries)
        )
    if waits:
        await _await_replication(b, waits, request.timeout_ms / 1000, ctx.disconnected)
    throttle_ms = _record_quota(ctx, request) if b.quotas.produce.enabled else 0
    if acks == 0:
        failed = [
            (t.name or str(t.topic_id), e.index, e.error_code)
            for t in responses
            for e in t.partition_responses
            if e.error_code
        ]
        if failed:  # as Kafka: the producer gets no response, so it learns of the failure from the closed connection
            name, index, code = failed[0]
            return CloseConnection(f"acks=0 produce failed ({name}-{index}: {ErrorCode(code).name})")
        return NO_RESPONSE
    return Resp(responses=responses, throttle_time_ms=throttle_ms)


def _record_quota(ctx, request) -> int:
    """Record the request's record bytes for ``producer_byte_rate``; over the quota, mute the connection for the
    throttle time, which is returned (Kafka's ``quotas.produce.maybeRecordAndGetThrottleTimeMs``)."""
    nbytes = sum(len(pd.records) for t in request.topic_data for pd in t.partition_data if pd.records is not None)
    throttle_ms = ctx.services.quotas.record_produce(ctx.principal, ctx.header.client_id, nbytes)
    if throttle_ms:
        ctx.throttle(throttle_ms)
    return throttle_ms


async def _await_replication(broker, waits, timeout_s: float, disconnected=None) -> None:
    """acks=all: wait until every partition's high watermark reaches its batch, the request times out, or
    the client disconnects (``disconnected`` done: its answer could not be sent anyway)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        pending = [(p, hw, e) for p, hw, e in waits if p.high_watermark < hw and p.is_leader]
        if not pending or broker.stopping or (disconnected is not None and disconnected.done()):
            break
        remaining = deadline - loop.time()
        if remaining <= 0 or not await wait_any(
            [p.data_notifier for p, _, _ in pending], remaining, abandon=disconnected
        ):
            if loop.time() >= deadline:
                break
    for p, hw, e in waits:
        if not p.is_leader:
            e.error_code = ErrorCode.NOT_LEADER_OR_FOLLOWER
        elif p.high_watermark < hw:
            e.error_code = ErrorCode.REQUEST_TIMED_OUT
            e.error_message = f"replication of offset {hw - 1} did not complete within the request timeout"
        elif len(p.isr) < p.log.config.min_insync_replicas:
            e.error_code = ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
            e.error_message = (
                f"offset {hw - 1} is committed by ISR {list(p.isr)}, smaller than "
                f"min.insync.replicas={p.log.config.min_insync_replicas}"
            )
