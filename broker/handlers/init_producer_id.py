"""InitProducerId (key 22), v0-4: producer ids for idempotent producers (no transactions).

Ids are unique across the cluster without coordination: ``broker.id`` in the top 23 bits and a
millisecond clock-based counter below (``broker.producer_ids``), so ids also never repeat across
restarts. v3+ may name the current id and epoch (KIP-360): the same id comes back with the epoch bumped,
or a new id when the epoch would overflow. A non-null ``transactional_id`` is answered with
TRANSACTIONAL_ID_AUTHORIZATION_FAILED: transactions are not supported.
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

API_KEY = ApiKey.INIT_PRODUCER_ID
VERSIONS = (0, 4)
_API = API_BY_KEY[API_KEY]
MAX_EPOCH = 32767


async def handle(ctx, request):
    Resp = _API.Response
    if request.transactional_id is not None:
        return Resp(
            throttle_time_ms=0,
            error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            producer_id=-1,
            producer_epoch=-1,
        )
    alloc = ctx.services.producer_ids
    pid, epoch = getattr(request, "producer_id", -1), getattr(request, "producer_epoch", -1)
    if ctx.version >= 3 and pid >= 0:
        if epoch < 0:
            return Resp(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, producer_id=-1, producer_epoch=-1)
        if epoch < MAX_EPOCH - 1:
            return Resp(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=pid, producer_epoch=epoch + 1)
    return Resp(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=alloc.next_id(), producer_epoch=0)
