"""ApiVersions (key 18), v0-5: the APIs and version ranges this broker serves, from the handler registry.

ConsumerGroupHeartbeat and ConsumerGroupDescribe are left out when ``group.coordinator.rebalance.protocols`` lacks
``consumer``; the share group APIs (76-79, 90-92) when ``group.share.enable`` is false. Versions above 5 never reach this handler: the connection answers them with the v0 error body
(UNSUPPORTED_VERSION plus our ApiVersions range), as KIP-511 clients expect. v3+'s client software name and
version are kept for the connection (``ctx.client``), as Kafka keeps them (KIP-511).

Feature flags (v3+, KIP-584), as a Kafka 4.x broker answers them: ``supported_features`` lists
``group.version`` 0-1, ``share.version`` 0-1 and ``transaction.version`` 0-2 (v4+: a v3 response leaves out the features whose minimum
is 0, which clients before KAFKA-17011 refuse); ``finalized_features`` carries ``group.version`` at 1 while
``group.coordinator.rebalance.protocols`` has ``consumer`` (KIP-848's groups are on; Kafka 4.4 finalizes it at 1 by
default), ``share.version`` at 1 while ``group.share.enable`` is true (KIP-932's share groups are on) and
``transaction.version`` at the level of the broker's ``transaction.version`` config (a feature at
level 0 is omitted, as Kafka omits a feature finalized at 0), with
``finalized_features_epoch`` 0 (clients keep the features of the highest epoch they saw; -1 would be ignored).
v5 (KIP-1242) checks where the client meant to connect, as Kafka 4.4 does: with both ``cluster_id`` and
``node_id`` (>= 0) given, either one not this broker's is REBOOTSTRAP_REQUIRED (no APIs listed: a client with
``metadata.recovery.strategy=rebootstrap`` bootstraps again); only one of them given is INVALID_REQUEST; neither
is the usual answer.
A Kafka 4.x client uses transactions v2 (KIP-890 part 2: EndTxn v5, Produce v12, no AddPartitionsToTxn) when
``transaction.version`` is finalized at 2.
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

API_KEY = ApiKey.API_VERSIONS
VERSIONS = (0, 5)
TARGET_CHECK_FROM = 5
FEATURES_FROM = 3
MIN_VERSION_0_FROM = 4
FINALIZED_FEATURES_EPOCH = 0
_API = API_BY_KEY[API_KEY]


def features(config, consumer_protocol: bool, share_groups: bool = False) -> dict[str, tuple[int, int, int]]:
    """Feature name -> (min supported, max supported, finalized level) of this broker (``consumer_protocol``: whether
    KIP-848's consumer groups are on; ``share_groups``: KIP-932's share groups), in Kafka 4.4's order."""
    return {
        "group.version": (0, 1, 1 if consumer_protocol else 0),
        "share.version": (0, 1, 1 if share_groups else 0),
        "transaction.version": (0, 2, int(config["transaction.version"])),
    }


#: the share group APIs a broker leaves out of ApiVersions while ``group.share.enable`` is false
SHARE_GROUP_APIS = frozenset(
    {
        ApiKey.SHARE_GROUP_HEARTBEAT,
        ApiKey.SHARE_GROUP_DESCRIBE,
        ApiKey.SHARE_FETCH,
        ApiKey.SHARE_ACKNOWLEDGE,
        ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
        ApiKey.ALTER_SHARE_GROUP_OFFSETS,
        ApiKey.DELETE_SHARE_GROUP_OFFSETS,
    }
)


def _hidden(services) -> frozenset[int]:
    """APIs served but turned off by config: ConsumerGroupHeartbeat and ConsumerGroupDescribe without ``consumer`` in
    ``group.coordinator.rebalance.protocols`` (as Kafka leaves them out then); the share group APIs
    (``SHARE_GROUP_APIS``) while ``group.share.enable`` is false."""
    gc = services.group_coordinator
    hidden = frozenset() if gc.share_groups_enabled else SHARE_GROUP_APIS
    if gc.consumer_protocol_enabled:
        return hidden
    return hidden | {ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE}


def _target_error(ctx, request) -> ErrorCode:
    """v5's check of the cluster id and node id the client meant to reach (the module docstring)."""
    if ctx.version < TARGET_CHECK_FROM:
        return ErrorCode.NONE
    given = (request.cluster_id is not None, request.node_id >= 0)
    if given == (False, False):
        return ErrorCode.NONE
    if given != (True, True):
        return ErrorCode.INVALID_REQUEST
    here = (ctx.services.registry.cluster_id, ctx.services.broker_id)
    return ErrorCode.NONE if (request.cluster_id, request.node_id) == here else ErrorCode.REBOOTSTRAP_REQUIRED


async def handle(ctx, request):
    Resp = _API.Response
    refused = _target_error(ctx, request)
    if refused != ErrorCode.NONE:
        return Resp(error_code=refused, api_keys=[], throttle_time_ms=0)
    hidden = _hidden(ctx.services)
    ranges = ctx.services.handlers.version_ranges()
    if ctx.services.faults.live:  # fault injection's set_api_version (broker.faults) may narrow them
        ranges = ctx.services.faults.api_version_ranges(ranges)
    keys = [Resp.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in ranges if k not in hidden]
    if ctx.version < FEATURES_FROM:
        return Resp(error_code=ErrorCode.NONE, api_keys=keys, throttle_time_ms=0)
    ctx.client.name = request.client_software_name
    ctx.client.version = request.client_software_version
    gc = ctx.services.group_coordinator
    table = features(ctx.services.config, gc.consumer_protocol_enabled, gc.share_groups_enabled)
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
