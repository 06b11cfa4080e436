"""AddPartitionsToTxn (key 24), v0-3: a producer adds partitions to its transaction (the first add starts
it: Empty/CompleteCommit/CompleteAbort -> Ongoing, written to ``__transaction_state`` before the answer).
Every partition gets the same error: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2), CONCURRENT_TRANSACTIONS
while the previous transaction's markers are written; partitions that do not exist are
UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED. Gaps: v4+ (batched, from brokers:
KIP-890) is not served.

Authorization, first: WRITE on the transactional id, else every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
then WRITE on each topic, else its partitions TOPIC_AUTHORIZATION_FAILED (checked before existence; the
internal topics ``__consumer_offsets`` and ``__transaction_state`` always, as Kafka never authorizes them
here), and when any partition fails a check nothing is added: the others answer OPERATION_NOT_ATTEMPTED.
"""

from __future__ import annotations

from broker.coordinator.txn_coordinator import TxnError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import authorized_topics
from ._txns import txn_coordinator, txn_id_authorized, wire_error

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
API_KEY = ApiKey.ADD_PARTITIONS_TO_TXN
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    Topic = Resp.AddPartitionsToTxnTopicResult
    Part = Topic.AddPartitionsToTxnPartitionResult
    wanted = {(t.name, p) for t in request.v3_and_below_topics for p in t.partitions}
    topics = ctx.services.metadata.topics
    failed: dict[tuple[str, int], ErrorCode] = {}
    code = ErrorCode.NONE
    if not txn_id_authorized(ctx, AclOperation.WRITE, request.v3_and_below_transactional_id):
        code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    else:
        writable = authorized_topics(ctx, AclOperation.WRITE, (t for t, _ in wanted if t not in INTERNAL_TOPICS))
        for t, p in wanted:
            if t not in writable:
                failed[(t, p)] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif t not in topics or p not in topics[t].replicas:
                failed[(t, p)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if code == ErrorCode.NONE and not failed:
        try:
            await txn_coordinator(ctx).add_partitions(
                request.v3_and_below_transactional_id,
                request.v3_and_below_producer_id,
                request.v3_and_below_producer_epoch,
                wanted,
            )
        except TxnError as e:
            code = wire_error(e.error_code, API_KEY, ctx.version)

    def error(tp) -> int:
        if failed:
            return failed.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED)
        return code

    return Resp(
        throttle_time_ms=0,
        results_by_topic_v3_and_below=[
            Topic(
                name=t.name,
                results_by_partition=[
                    Part(partition_index=p, partition_error_code=error((t.name, p))) for p in t.partitions
                ],
            )
            for t in request.v3_and_below_topics
        ],
    )
