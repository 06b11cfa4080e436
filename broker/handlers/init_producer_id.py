"""InitProducerId (key 22), v0-5: producer ids for idempotent and transactional producers.

Ids are unique across the cluster without coordination: ``broker.id`` in the top 23 bits and a
millisecond clock-based counter below (``broker.producer_ids``), so ids also never repeat across
restarts. v3+ may name the current id and epoch (KIP-360): the same id comes back with the epoch bumped,
or a new id when the epoch would overflow. With a ``transactional_id`` the transaction coordinator answers
(``broker.coordinator.txn_coordinator``): the id's producer id with its epoch bumped (a new id when the epoch
is exhausted), fencing older producers; an open transaction is aborted first (CONCURRENT_TRANSACTIONS until
done, the client retries); INVALID_TRANSACTION_TIMEOUT above ``transaction.max.timeout.ms``;
NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS; PRODUCER_FENCED (v4; INVALID_PRODUCER_EPOCH before) for a
v3+ producer id and epoch that are not the current ones. An empty transactional id is INVALID_REQUEST.
v5 only allows TRANSACTION_ABORTABLE (KIP-890; never answered here). v6 (two-phase commit, KIP-939) is not
served: Kafka 4.4 marks it unstable, so its clients do not send it.

Authorization, before anything else: with a transactional id, WRITE on it (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED); without (an idempotent producer), IDEMPOTENT_WRITE on the cluster or,
failing that, WRITE on some topic (KIP-679's ``authorizeByResourceType``), else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from broker.coordinator.txn_coordinator import TxnError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

from ._txns import txn_coordinator, txn_id_authorized, wire_error

API_KEY = ApiKey.INIT_PRODUCER_ID
VERSIONS = (0, 5)
_API = API_BY_KEY[API_KEY]
MAX_EPOCH = 32767


async def handle(ctx, request):
    Resp = _API.Response
    pid, epoch = getattr(request, "producer_id", -1), getattr(request, "producer_epoch", -1)
    denied = _denied(ctx, request.transactional_id)
    if denied is not None:
        return Resp(throttle_time_ms=0, error_code=denied, producer_id=-1, producer_epoch=-1)
    if request.transactional_id is not None:
        try:
            pid, epoch = await txn_coordinator(ctx).init_producer_id(
                request.transactional_id, request.transaction_timeout_ms, pid, epoch
            )
        except TxnError as e:
            code = wire_error(e.error_code, API_KEY, ctx.version)
            return Resp(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1)
        return Resp(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=pid, producer_epoch=epoch)
    alloc = ctx.services.producer_ids
    if ctx.version >= 3 and pid >= 0:
        if epoch < 0:
            return Resp(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, producer_id=-1, producer_epoch=-1)
        if epoch < MAX_EPOCH - 1:
            return Resp(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=pid, producer_epoch=epoch + 1)
    return Resp(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=alloc.next_id(), producer_epoch=0)


def _denied(ctx, transactional_id: str | None) -> ErrorCode | None:
    """The authorization error of the request, None when it is allowed (see the module docstring)."""
    if transactional_id is not None:
        if txn_id_authorized(ctx, AclOperation.WRITE, transactional_id):
            return None
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if ctx.authorize_cluster(AclOperation.IDEMPOTENT_WRITE):
        return None
    if ctx.authorize_by_resource_type(AclOperation.WRITE, ResourceType.TOPIC):
        return None
    return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
