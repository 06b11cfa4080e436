"""TxnOffsetCommit (key 28), v0-6: offsets a transactional producer commits for a group (a consume-transform-
produce loop). The group's coordinator appends them to ``__consumer_offsets`` as a transactional batch of
the producer (its epoch checked by the log: INVALID_PRODUCER_EPOCH, or PRODUCER_FENCED from v3); they become
the group's committed offsets only when the transaction's COMMIT marker reaches that partition, and are
dropped on ABORT (OffsetFetch with ``require_stable`` answers UNSTABLE_OFFSET_COMMIT meanwhile). v3+: a named
member must be in the group (UNKNOWN_MEMBER_ID) and a generation >= 0 current (ILLEGAL_GENERATION).
Per partition: UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE. v4 only allows TRANSACTION_ABORTABLE.

Transaction verification (KIP-890, ``transaction.partition.verification.enable``), as for Produce: when the
producer has no transaction ongoing on the group's ``__consumer_offsets`` partition, the transaction coordinator
is asked whether that partition is in the transaction (AddOffsetsToTxn added it), else every partition answers
INVALID_TXN_STATE (PRODUCER_FENCED for a fenced producer; COORDINATOR_NOT_AVAILABLE while the transaction
coordinator cannot tell, CONCURRENT_TRANSACTIONS while its markers are written or when one landed during the
verification: both retried). v5 is a
transactions-v2 producer: the coordinator adds the partition instead (no AddOffsetsToTxn is sent).
v6 (KIP-1319) names topics by id (named from this broker's metadata once the transactional id and the group are
authorized; an id no topic has is UNKNOWN_TOPIC_ID for each of its partitions; answers carry the ids) and answers
a generation (member epoch) >= 0 for a group that does not exist GROUP_ID_NOT_FOUND and a KIP-848 member's stale
epoch STALE_MEMBER_EPOCH; below v6 both are ILLEGAL_GENERATION, as Kafka maps them.

Authorization, in Kafka's order: WRITE on the transactional id (else every partition
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on the group (else every partition GROUP_AUTHORIZATION_FAILED),
then READ on each topic (else its partitions TOPIC_AUTHORIZATION_FAILED, before its existence is checked).
When no partition passes and exists, the coordinator is not asked.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from broker.coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from broker.coordinator.txn_verification import guard_holds, has_ongoing_transaction, start_guard
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, group_authorized, requested_offsets
from ._topic_ids import answer_by_topic_id
from ._txns import txn_id_authorized, txn_verifier, wire_error

_UNVERIFIED = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.NETWORK_EXCEPTION,
    }
)


async def _verify(ctx, request) -> ErrorCode:
    """Verify (v5: add) the group's ``__consumer_offsets`` partition in the transaction (module docstring)."""
    verifier = txn_verifier(ctx)
    if not verifier.enabled:
        return ErrorCode.NONE
    p = partition_for(request.group_id, ctx.services.config["offsets.topic.num.partitions"])
    part, _ = ctx.services.replica_manager.leader_partition(OFFSETS_TOPIC, p)
    pid, epoch = request.producer_id, request.producer_epoch
    if part is None or has_ongoing_transaction(part, pid, epoch):
        return ErrorCode.NONE  # not the leader: the commit answers NOT_COORDINATOR itself
    token = start_guard(part, pid)
    errors = await verifier.check(
        request.transactional_id, pid, epoch, {(OFFSETS_TOPIC, p)}, add=ctx.version >= TRANSACTIONS_V2_FROM
    )
    code = next(iter(errors.values()), ErrorCode.NONE)
    if code in _UNVERIFIED:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code == ErrorCode.NONE and not guard_holds(part, pid, token):
        return ErrorCode.CONCURRENT_TRANSACTIONS  # a marker landed meanwhile: the retry verifies again
    return code


API_KEY = ApiKey.TXN_OFFSET_COMMIT
VERSIONS = (0, 6)
TRANSACTIONS_V2_FROM = 5
TOPIC_IDS_FROM = 6
_LEGACY_GENERATION_ERRORS = frozenset({ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.STALE_MEMBER_EPOCH})
_API = API_BY_KEY[API_KEY]


def _response(request, codes):
    Resp = _API.Response
    Topic = Resp.TxnOffsetCommitResponseTopic
    Part = Topic.TxnOffsetCommitResponsePartition
    return Resp(
        throttle_time_ms=0,
        topics=[
            Topic(
                name=t.name,
                topic_id=t.topic_id,
                partitions=[
                    Part(partition_index=p.partition_index, error_code=codes(t.name, p.partition_index))
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )


def _wire(code: ErrorCode, version: int) -> ErrorCode:
    """``code`` as the request's version knows it (KIP-1319's errors are ILLEGAL_GENERATION below v6)."""
    if code in _LEGACY_GENERATION_ERRORS and version < TOPIC_IDS_FROM:
        return ErrorCode.ILLEGAL_GENERATION
    return wire_error(code, API_KEY, version)


async def handle(ctx, request):
    if (
        ctx.version < TOPIC_IDS_FROM
        or not txn_id_authorized(ctx, AclOperation.WRITE, request.transactional_id)
        or not group_authorized(ctx, AclOperation.READ, request.group_id)
    ):
        return await _handle(ctx, request)
    Topic = _API.Response.TxnOffsetCommitResponseTopic
    return await answer_by_topic_id(ctx, request, _handle, Topic, Topic.TxnOffsetCommitResponsePartition)


async def _handle(ctx, request):
    if not txn_id_authorized(ctx, AclOperation.WRITE, request.transactional_id):
        return _response(request, lambda t, p: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not group_authorized(ctx, AclOperation.READ, request.group_id):
        return _response(request, lambda t, p: ErrorCode.GROUP_AUTHORIZATION_FAILED)
    gc = coordinator(ctx)
    now = gc.now()
    offsets, errors = requested_offsets(ctx, request.topics, lambda p: now)
    if not offsets:  # nothing authorized that exists: Kafka answers without the coordinator
        return _response(request, lambda t, p: errors[(t, p)])
    unverified = await _verify(ctx, request)
    if unverified != ErrorCode.NONE:
        code = wire_error(unverified, API_KEY, ctx.version)
        return _response(request, lambda t, p: errors.get((t, p), code))
    if ctx.version >= TOPIC_IDS_FROM and request.generation_id >= 0 and _missing(gc, request.group_id):
        return _response(request, lambda t, p: errors.get((t, p), ErrorCode.GROUP_ID_NOT_FOUND))
    try:
        codes = await gc.commit_txn_offsets(
            request.group_id,
            producer_id=request.producer_id,
            producer_epoch=request.producer_epoch,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
            generation=request.generation_id,
            offsets=offsets,
        )
    except GroupError as e:
        code = _wire(e.error_code, ctx.version)
        return _response(request, lambda t, p: errors.get((t, p), code))

    def error(t: str, p: int) -> ErrorCode:
        if (t, p) in errors:
            return errors[(t, p)]
        return _wire(codes[(t, p)], ctx.version)

    return _response(request, error)


def _missing(gc, group_id: str) -> bool:
    """Whether neither a classic nor a consumer group ``group_id`` exists (a coordinator error counts as not
    missing: the commit answers it)."""
    try:
        return gc.describe_group(group_id) is None and group_id not in gc.consumer_groups
    except GroupError:
        return False
