"""GetTelemetrySubscriptions (key 71), v0 (KIP-714): which client metrics this client should push. A client sending
the all-zero ``client_instance_id`` gets a new random one (Kafka's ``Uuid``: never reserved). The answer joins every
client metrics subscription (``CLIENT_METRICS`` config resources, ``kafkalog configs --entity-type
client-metrics``, ``kafka-client-metrics.sh``) whose ``match`` patterns all match the client (client_instance_id,
client_id, client_software_name/version from ApiVersions, client_source_address/port): their metric name prefixes
(``*`` when one asks for all; empty when none matches, and the client then pushes nothing), the shortest
``interval.ms`` (300000 when none matches), the subscription id as Kafka computes it (CRC-32C of the prefixes and
interval XOR the instance id's hash), accepted compression types zstd, lz4, gzip, snappy (Kafka's order),
``telemetry.max.bytes`` and delta temporality. Asking again sooner than the push interval after the instance's last
request is THROTTLING_QUOTA_EXCEEDED (not after a push refused for UNKNOWN_SUBSCRIPTION_ID or
UNSUPPORTED_COMPRESSION_TYPE, and not after a subscription changed). Instance state lives on the broker that
answered (as Kafka's): a client that moves to another broker, or whose connection closed, starts afresh.
Authorization: none beyond an authenticated connection (as Kafka).
"""

from __future__ import annotations

from broker.handlers._telemetry import client_info, track_connection
from broker.telemetry.store import ACCEPTED_COMPRESSION_TYPES
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

API_KEY = ApiKey.GET_TELEMETRY_SUBSCRIPTIONS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    telemetry = ctx.services.telemetry
    answer = telemetry.get_subscriptions(request.client_instance_id, client_info(ctx))
    track_connection(ctx, telemetry, answer.instance_id)
    Resp = _API.Response
    sub = answer.subscription
    if answer.error_code != ErrorCode.NONE or sub is None:
        return Resp(throttle_time_ms=0, error_code=answer.error_code)
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        client_instance_id=answer.instance_id,
        subscription_id=sub.subscription_id,
        accepted_compression_types=list(ACCEPTED_COMPRESSION_TYPES),
        push_interval_ms=sub.interval_ms,
        telemetry_max_bytes=telemetry.max_bytes,
        delta_temporality=True,
        requested_metrics=list(sub.metrics),
    )
