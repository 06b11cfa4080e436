"""EndTxn (key 26), v0-3: commit or abort the producer's transaction. Answers once PrepareCommit/
PrepareAbort is written to ``__transaction_state``; the markers (WriteTxnMarkers to the partitions' leaders)
and CompleteCommit/CompleteAbort follow in the background, and the next AddPartitionsToTxn or InitProducerId
answers CONCURRENT_TRANSACTIONS until they are done. A retry of a completed EndTxn succeeds; otherwise
INVALID_TXN_STATE (no transaction, or the opposite outcome), PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before
v2), INVALID_PRODUCER_ID_MAPPING, NOT_COORDINATOR. Gaps: v4 (KIP-890) is not served. Authorization: WRITE on
the transactional id, checked first (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from broker.coordinator.txn_coordinator import TxnError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._txns import txn_coordinator, txn_id_authorized, wire_error

API_KEY = ApiKey.END_TXN
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    if not txn_id_authorized(ctx, AclOperation.WRITE, request.transactional_id):
        return _API.Response(throttle_time_ms=0, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    code = ErrorCode.NONE
    try:
        await txn_coordinator(ctx).end_txn(
            request.transactional_id, request.producer_id, request.producer_epoch, request.committed
        )
    except TxnError as e:
        code = wire_error(e.error_code, API_KEY, ctx.version)
    return _API.Response(throttle_time_ms=0, error_code=code)
