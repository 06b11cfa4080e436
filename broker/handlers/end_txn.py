"""EndTxn (key 26), v0-5: commit or abort the producer's transaction. Answers once PrepareCommit/
PrepareAbort is written to ``__transaction_state``; the markers (WriteTxnMarkers to the partitions' leaders)
and CompleteCommit/CompleteAbort follow in the background, and the next AddPartitionsToTxn or InitProducerId
answers CONCURRENT_TRANSACTIONS until they are done. Errors: INVALID_TXN_STATE (no transaction, or the
opposite outcome), PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2), INVALID_PRODUCER_ID_MAPPING,
CONCURRENT_TRANSACTIONS (a retry while the markers are written), NOT_COORDINATOR. v4 only allows
TRANSACTION_ABORTABLE (never answered here).

v5 is transactions v2 (KIP-890 part 2; clients send it when ApiVersions finalizes ``transaction.version`` 2): every EndTxn bumps the
producer epoch (the markers carry the new epoch, fencing late writes of the ended transaction) and the response
carries the producer id and epoch to go on with; an exhausted epoch (32766) moves to a new producer id at epoch
0. A retried v5 EndTxn is recognised by the previous epoch (or the previous id at epoch 32766) and answered
again with the current id and epoch; an abort with no transaction open bumps the epoch too. Before v5 a retry
of a completed EndTxn (same epoch, same outcome) succeeds, as before; the response carries no id or epoch.
Authorization: WRITE on the transactional id, checked first (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from broker.coordinator.txn_coordinator import TxnError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._txns import txn_coordinator, txn_id_authorized, wire_error

API_KEY = ApiKey.END_TXN
VERSIONS = (0, 5)
TRANSACTIONS_V2_FROM = 5
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    if not txn_id_authorized(ctx, AclOperation.WRITE, request.transactional_id):
        return _API.Response(throttle_time_ms=0, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    try:
        pid, epoch = await txn_coordinator(ctx).end_txn(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            request.committed,
            transactions_v2=ctx.version >= TRANSACTIONS_V2_FROM,
        )
    except TxnError as e:
        code = wire_error(e.error_code, API_KEY, ctx.version)
        return _API.Response(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1)
    return _API.Response(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=pid, producer_epoch=epoch)
