"""TxnOffsetCommit (key 28), v0-3: offsets a transactional producer commits for a group (a consume-transform-
produce loop). The group's coordinator appends them to ``__consumer_offsets`` as a transactional batch of
the producer (its epoch checked by the log: INVALID_PRODUCER_EPOCH, or PRODUCER_FENCED from v3); they become
the group's committed offsets only when the transaction's COMMIT marker reaches that partition, and are
dropped on ABORT (OffsetFetch with ``require_stable`` answers UNSTABLE_OFFSET_COMMIT meanwhile). v3+: a named
member must be in the group (UNKNOWN_MEMBER_ID) and a generation >= 0 current (ILLEGAL_GENERATION).
Per partition: UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE. Gaps: v4 (KIP-890) is not served;
the transaction coordinator is not asked whether the group's partition was added (AddOffsetsToTxn), as Kafka.

Authorization, in Kafka's order: WRITE on the transactional id (else every partition
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on the group (else every partition GROUP_AUTHORIZATION_FAILED),
then READ on each topic (else its partitions TOPIC_AUTHORIZATION_FAILED, before its existence is checked).
When no partition passes and exists, the coordinator is not asked.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, group_authorized, requested_offsets
from ._txns import txn_id_authorized, wire_error

API_KEY = ApiKey.TXN_OFFSET_COMMIT
VERSIONS = (0, 3)
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
                partitions=[
                    Part(partition_index=p.partition_index, error_code=codes(t.name, p.partition_index))
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )


async def handle(ctx, request):
    if not txn_id_authorized(ctx, AclOperation.WRITE, request.transactional_id):
        return _response(request, lambda t, p: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not group_authorized(ctx, AclOperation.READ, request.group_id):
        return _response(request, lambda t, p: ErrorCode.GROUP_AUTHORIZATION_FAILED)
    gc = coordinator(ctx)
    now = gc.now()
    offsets, errors = requested_offsets(ctx, request.topics, lambda p: now)
    if not offsets:  # nothing authorized that exists: Kafka answers without the coordinator
        return _response(request, lambda t, p: errors[(t, p)])
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
        code = e.error_code
        return _response(request, lambda t, p: errors.get((t, p), code))

    def error(t: str, p: int) -> ErrorCode:
        if (t, p) in errors:
            return errors[(t, p)]
        return wire_error(codes[(t, p)], API_KEY, ctx.version)

    return _response(request, error)
