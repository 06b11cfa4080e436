"""DescribeTransactions (key 65), v0: state, producer id and epoch, timeout, start time and partitions of
transactional ids coordinated here (KIP-664); per id NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or
TRANSACTIONAL_ID_NOT_FOUND otherwise. Authorization (Kafka's ``handleDescribeTransactionsRequest``): DESCRIBE
on each transactional id, else its TRANSACTIONAL_ID_AUTHORIZATION_FAILED (other fields at the schema's
defaults); a described transaction lists only the partitions of topics the principal may DESCRIBE.
"""

from __future__ import annotations

from broker.coordinator.txn_coordinator import TxnError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import authorized_topics
from ._txns import txn_coordinator, txn_id_authorized

API_KEY = ApiKey.DESCRIBE_TRANSACTIONS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    State = Resp.TransactionState
    out = []
    for tid in request.transactional_ids:
        if not txn_id_authorized(ctx, AclOperation.DESCRIBE, tid):
            out.append(
                State(
                    error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                    transactional_id=tid,
                    transaction_state="",
                    transaction_timeout_ms=0,
                    transaction_start_time_ms=0,
                    producer_id=0,
                    producer_epoch=0,
                    topics=[],
                )
            )
            continue
        try:
            m = txn_coordinator(ctx).describe(tid)
        except TxnError as e:
            out.append(
                State(
                    error_code=e.error_code,
                    transactional_id=tid,
                    transaction_state="",
                    transaction_timeout_ms=0,
                    transaction_start_time_ms=-1,
                    producer_id=-1,
                    producer_epoch=-1,
                    topics=[],
                )
            )
            continue
        topics: dict[str, list[int]] = {}
        describable = authorized_topics(ctx, AclOperation.DESCRIBE, (t for t, _ in m.partitions))
        for t, p in m.partitions:
            if t in describable:
                topics.setdefault(t, []).append(p)
        out.append(
            State(
                error_code=ErrorCode.NONE,
                transactional_id=tid,
                transaction_state=m.state.display,
                transaction_timeout_ms=m.timeout_ms,
                transaction_start_time_ms=m.start_ms,
                producer_id=m.producer_id,
                producer_epoch=m.producer_epoch,
                topics=[State.TopicData(topic=t, partitions=sorted(ps)) for t, ps in sorted(topics.items())],
            )
        )
    return Resp(throttle_time_ms=0, transaction_states=out)
