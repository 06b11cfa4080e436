"""FindCoordinator (key 10), v0-3: the broker coordinating a group (key type 0): the leader of the group's
``__consumer_offsets`` partition, which is created (compacted, ``offsets.topic.num.partitions``) on the
first lookup. COORDINATOR_NOT_AVAILABLE (retriable) while it has no leader. Key type 1 (transactions)
answers COORDINATOR_NOT_AVAILABLE until transactions exist; other key types are INVALID_REQUEST.
Gaps: v4+ (batched keys) is not declared; clients fall back to one key per request.
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ._groups import coordinator
from .metadata import _endpoint

API_KEY = ApiKey.FIND_COORDINATOR
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]


def _error(code: ErrorCode, message: str):
    return _API.Response(throttle_time_ms=0, error_code=code, error_message=message, node_id=-1, host="", port=-1)


async def handle(ctx, request):
    key_type = request.key_type
    if key_type == 1:
        return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, "transaction coordinators are not available yet")
    if key_type != 0:
        return _error(ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type} (0 group, 1 transaction)")
    if not request.key:
        return _error(ErrorCode.INVALID_GROUP_ID, "the group id is empty")
    gc = ctx.services.group_coordinator
    if gc is None or ctx.services.stopping:
        return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, "this broker runs no group coordinator now")
    code, node = await coordinator(ctx).find_coordinator(request.key)
    info = ctx.services.metadata.brokers.get(node)
    if code != ErrorCode.NONE or info is None:
        return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {request.key!r} has no coordinator yet")
    host, port = _endpoint(info, ctx.listener)
    return _API.Response(
        throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, node_id=node, host=host, port=port
    )
