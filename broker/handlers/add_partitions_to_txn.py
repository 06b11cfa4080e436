"""AddPartitionsToTxn (key 24), v0-5.

v0-3 come from a producer: it adds partitions to its transaction (the first add starts it: Empty/
CompleteCommit/CompleteAbort -> Ongoing, written to ``__transaction_state`` before the answer). Every partition
gets the same error: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, INVALID_PRODUCER_ID_MAPPING,
PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2), CONCURRENT_TRANSACTIONS while the previous transaction's
markers are written; partitions that do not exist are UNKNOWN_TOPIC_OR_PARTITION and the others
OPERATION_NOT_ATTEMPTED.

v4-5 come from brokers (KIP-890; v5 only allows TRANSACTION_ABORTABLE): a batch of transactions, each answered
on its own in ``results_by_transaction``. With ``verify_only`` the coordinator only says whether each partition
is in the producer's ongoing transaction (INVALID_TXN_STATE for one that is not; the producer's error for all
otherwise) and writes nothing: a partition leader asks this before appending a transactional batch of a producer
with no transaction ongoing there (``broker.coordinator.txn_verification``). Without it the partitions are added
as by v3, for a transactions-v2 client's Produce v12 or TxnOffsetCommit v5 (the transaction becomes a v2 one:
its EndTxn bumps the epoch). A null transactional id is INVALID_REQUEST at the top level.

Authorization: v0-3, first WRITE on the transactional id, else every partition
TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then WRITE on each topic, else its partitions TOPIC_AUTHORIZATION_FAILED
(checked before existence; the internal topics ``__consumer_offsets``, ``__transaction_state`` and
``__share_group_state`` always, as Kafka never authorizes them here), and when any partition fails a check nothing
is added: the others answer OPERATION_NOT_ATTEMPTED. v4+: CLUSTER_ACTION on the cluster (a broker's request), else the top-level error
CLUSTER_AUTHORIZATION_FAILED; the topics are not checked (the producer's Produce was).
"""

from __future__ import annotations

import functools

from broker.coordinator.txn_coordinator import TxnError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import authorized_topics
from ._txns import txn_coordinator, txn_id_authorized, wire_error

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
API_KEY = ApiKey.ADD_PARTITIONS_TO_TXN
VERSIONS = (0, 5)
BATCHED_FROM = 4
_API = API_BY_KEY[API_KEY]


def _missing(ctx, wanted) -> dict[tuple[str, int], ErrorCode]:
    topics = ctx.services.metadata.topics
    return {
        (t, p): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        for t, p in wanted
        if t not in topics or p not in topics[t].replicas
    }


def _or_none(errors: dict, tp: tuple[str, int]) -> ErrorCode:
    return errors.get(tp, ErrorCode.NONE)


def _results(Topic, topics, error):
    Part = Topic.AddPartitionsToTxnPartitionResult
    return [
        Topic(
            name=t.name,
            results_by_partition=[
                Part(partition_index=p, partition_error_code=error((t.name, p))) for p in t.partitions
            ],
        )
        for t in topics
    ]


async def handle(ctx, request):
    if ctx.version >= BATCHED_FROM:
        return await _handle_batched(ctx, request)
    Resp = _API.Response
    wanted = {(t.name, p) for t in request.v3_and_below_topics for p in t.partitions}
    failed: dict[tuple[str, int], ErrorCode] = {}
    code = ErrorCode.NONE
    if not txn_id_authorized(ctx, AclOperation.WRITE, request.v3_and_below_transactional_id):
        code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    else:
        writable = authorized_topics(ctx, AclOperation.WRITE, (t for t, _ in wanted if t not in INTERNAL_TOPICS))
        for t, p in wanted:
            if t not in writable:
                failed[(t, p)] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        failed |= {tp: c for tp, c in _missing(ctx, wanted).items() if tp not in failed}
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
        results_by_topic_v3_and_below=_results(Resp.AddPartitionsToTxnTopicResult, request.v3_and_below_topics, error),
    )


async def _handle_batched(ctx, request):
    """v4+: a broker's batch (see the module docstring)."""
    Resp = _API.Response
    if not ctx.authorize_cluster(AclOperation.CLUSTER_ACTION):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if any(txn.transactional_id is None for txn in request.transactions):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST)
    coordinator = txn_coordinator(ctx)
    results = []
    for txn in request.transactions:
        wanted = {(t.name, p) for t in txn.topics for p in t.partitions}
        errors = _missing(ctx, wanted)
        if errors:
            errors |= {tp: ErrorCode.OPERATION_NOT_ATTEMPTED for tp in wanted if tp not in errors}
        elif txn.verify_only:
            errors = coordinator.verify_partitions(txn.transactional_id, txn.producer_id, txn.producer_epoch, wanted)
        else:
            try:
                await coordinator.add_partitions(
                    txn.transactional_id, txn.producer_id, txn.producer_epoch, wanted, transactions_v2=True
                )
            except TxnError as e:
                errors = dict.fromkeys(wanted, e.error_code)
        results.append(
            Resp.AddPartitionsToTxnResult(
                transactional_id=txn.transactional_id,
                topic_results=_results(
                    Resp.AddPartitionsToTxnTopicResult, txn.topics, functools.partial(_or_none, errors)
                ),
            )
        )
    return Resp(throttle_time_ms=0, error_code=ErrorCode.NONE, results_by_transaction=results)
