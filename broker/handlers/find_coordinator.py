"""FindCoordinator (key 10), v0-3: served so clients can ask, but group and transaction coordination arrive
in a later issue: every lookup answers COORDINATOR_NOT_AVAILABLE (retriable), which clients treat as
"not yet". Declaring the API also lets librdkafka enable the features it derives from it.
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

API_KEY = ApiKey.FIND_COORDINATOR
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    return _API.Response(
        throttle_time_ms=0,
        error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE,
        error_message="group and transaction coordinators are not available on this broker yet",
        node_id=-1,
        host="",
        port=-1,
    )
