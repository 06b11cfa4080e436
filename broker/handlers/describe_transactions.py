"""DescribeTransactions (key 65), v0: state, producer id and epoch, timeout, start time and partitions of
transactional ids coordinated here (KIP-664); per id NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or
TRANSACTIONAL_ID_NOT_FOUND otherwise.
"""

from __future__ import annotations

from broker.coordinator.txn_coordinator import TxnError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ._txns import txn_coordinator

API_KEY = ApiKey.DESCRIBE_TRANSACTIONS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    State = Resp.TransactionState
    out = []
    for tid in request.transactional_ids:
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
        for t, p in m.partitions:
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
