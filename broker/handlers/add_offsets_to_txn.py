"""AddOffsetsToTxn (key 25), v0-4: adds the group's ``__consumer_offsets`` partition to the transaction, so
the transaction's markers reach the offsets a TxnOffsetCommit writes there. Errors as AddPartitionsToTxn
(PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH before); v4 only allows TRANSACTION_ABORTABLE. A
transactions-v2 producer does not send it (TxnOffsetCommit v5 adds the partition).
Authorization, first: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on
the group (else GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from broker.coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from broker.coordinator.txn_coordinator import TxnError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import group_authorized
from ._txns import txn_coordinator, txn_id_authorized, wire_error

API_KEY = ApiKey.ADD_OFFSETS_TO_TXN
VERSIONS = (0, 4)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    code = ErrorCode.NONE
    if not txn_id_authorized(ctx, AclOperation.WRITE, request.transactional_id):
        code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not group_authorized(ctx, AclOperation.READ, request.group_id):
        code = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif not request.group_id:
        code = ErrorCode.INVALID_GROUP_ID
    else:
        p = partition_for(request.group_id, ctx.services.config["offsets.topic.num.partitions"])
        try:
            await txn_coordinator(ctx).add_partitions(
                request.transactional_id, request.producer_id, request.producer_epoch, {(OFFSETS_TOPIC, p)}
            )
        except TxnError as e:
            code = wire_error(e.error_code, API_KEY, ctx.version)
    return _API.Response(throttle_time_ms=0, error_code=code)
