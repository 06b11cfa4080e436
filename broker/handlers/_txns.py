"""Helpers shared by the transaction handlers: the coordinator of a request, the fencing error a
request's version knows (PRODUCER_FENCED came with KIP-588: InitProducerId v4, AddPartitionsToTxn v2,
AddOffsetsToTxn v2, EndTxn v2, TxnOffsetCommit v3; older versions get INVALID_PRODUCER_EPOCH), and the
transactional-id authorization check (WRITE to use an id, DESCRIBE to find or describe it; denied:
TRANSACTIONAL_ID_AUTHORIZATION_FAILED)."""

from __future__ import annotations

from spark_kafkalog.protocol import ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

_FENCED_FROM = {
    ApiKey.INIT_PRODUCER_ID: 4,
    ApiKey.ADD_PARTITIONS_TO_TXN: 2,
    ApiKey.ADD_OFFSETS_TO_TXN: 2,
    ApiKey.END_TXN: 2,
    ApiKey.TXN_OFFSET_COMMIT: 3,
}


def txn_coordinator(ctx):
    """The broker's transaction coordinator."""
    return ctx.services.txn_coordinator


def txn_id_authorized(ctx, operation: AclOperation, transactional_id: str | None) -> bool:
    """Whether the request's principal may do ``operation`` (WRITE or DESCRIBE) on ``transactional_id``
    (a null id is never authorized, as Kafka's transactional Produce check)."""
    return transactional_id is not None and bool(
        ctx.authorize(operation, ResourceType.TRANSACTIONAL_ID, transactional_id)
    )


def wire_error(code: ErrorCode, api_key: ApiKey, version: int) -> ErrorCode:
    """``code`` as the request's version knows it."""
    if code == ErrorCode.PRODUCER_FENCED and version < _FENCED_FROM[api_key]:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return code


def txn_verifier(ctx):
    """The leader's side of transaction verification (``broker.coordinator.txn_verification``)."""
    from broker.coordinator.txn_verification import TxnVerifier

    return TxnVerifier(ctx.services.txn_coordinator)
