"""ApiVersions (key 18), v0-4: the APIs and version ranges this broker serves, from the handler registry.

Versions above 4 never reach this handler: the connection answers them with the v0 error body
(UNSUPPORTED_VERSION plus our ApiVersions range), as KIP-511 clients expect. No feature flags are
advertised (``supported_features`` empty, ``finalized_features_epoch`` -1). v3+'s client software name and
version are kept for the connection (``ctx.client``), as Kafka keeps them (KIP-511).
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

API_KEY = ApiKey.API_VERSIONS
VERSIONS = (0, 4)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    if ctx.version >= 3:
        ctx.client.name = request.client_software_name
        ctx.client.version = request.client_software_version
    Resp = _API.Response
    keys = [
        Resp.ApiVersion(api_key=k, min_version=lo, max_version=hi)
        for k, lo, hi in ctx.services.handlers.version_ranges()
    ]
    return Resp(error_code=ErrorCode.NONE, api_keys=keys, throttle_time_ms=0)
