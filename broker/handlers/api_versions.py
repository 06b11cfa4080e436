"""ApiVersions (key 18), v0-4: the APIs and version ranges this broker serves, from the handler registry.

ConsumerGroupHeartbeat and ConsumerGroupDescribe are left out when ``group.coordinator.rebalance.protocols`` lacks
``consumer``. Versions above 4 never reach this handler: the connection answers them with the v0 error body
(UNSUPPORTED_VERSION plus our ApiVersions range), as KIP-511 clients expect. v3+'s client software name and
version are kept for the connection (``ctx.client``), as Kafka keeps them (KIP-511).

Feature flags (v3+, KIP-584), as a Kafka 4.x broker answers them: ``supported_features`` lists
``transaction.version`` 0-2 (v4+: a v3 response leaves out the features whose minimum is 0, which clients
before KAFKA-17011 refuse); ``finalized_features`` carries it at the level of the broker's
``transaction.version`` config (omitted at level 0, as Kafka omits a feature finalized at 0), with
``finalized_features_epoch`` 0 (clients keep the features of the highest epoch they saw; -1 would be ignored).
A Kafka 4.x client uses transactions v2 (KIP-890 part 2: EndTxn v5, Produce v12, no AddPartitionsToTxn) when
``transaction.version`` is finalized at 2.
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

API_KEY = ApiKey.API_VERSIONS
VERSIONS = (0, 4)
FEATURES_FROM = 3
MIN_VERSION_0_FROM = 4
FINALIZED_FEATURES_EPOCH = 0
_API = API_BY_KEY[API_KEY]


def features(config) -> dict[str, tuple[int, int, int]]:
    """Feature name -> (min supported, max supported, finalized level) of this broker."""
    return {"transaction.version": (0, 2, int(config["transaction.version"]))}


def _hidden(services) -> frozenset[int]:
    """APIs served but turned off by config: ConsumerGroupHeartbeat and ConsumerGroupDescribe without ``consumer`` in
    ``group.coordinator.rebalance.protocols`` (as Kafka leaves them out then)."""
    if services.group_coordinator.consumer_protocol_enabled:
        return frozenset()
    return frozenset({ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE})


async def handle(ctx, request):
    Resp = _API.Response
    hidden = _hidden(ctx.services)
    keys = [
        Resp.ApiVersion(api_key=k, min_version=lo, max_version=hi)
        for k, lo, hi in ctx.services.handlers.version_ranges()
        if k not in hidden
    ]
    if ctx.version < FEATURES_FROM:
        return Resp(error_code=ErrorCode.NONE, api_keys=keys, throttle_time_ms=0)
    ctx.client.name = request.client_software_name
    ctx.client.version = request.client_software_version
    table = features(ctx.services.config)
    return Resp(
        error_code=ErrorCode.NONE,
        api_keys=keys,
        throttle_time_ms=0,
        supported_features=[
            Resp.SupportedFeatureKey(name=name, min_version=lo, max_version=hi)
            for name, (lo, hi, _) in table.items()
            if lo > 0 or ctx.version >= MIN_VERSION_0_FROM
        ],
        finalized_features_epoch=FINALIZED_FEATURES_EPOCH,
        finalized_features=[
            Resp.FinalizedFeatureKey(name=name, max_version_level=level, min_version_level=level)
            for name, (_, _, level) in table.items()
            if level > 0
        ],
    )
