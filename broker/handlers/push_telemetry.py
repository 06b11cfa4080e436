"""PushTelemetry (key 72), v0 (KIP-714): a client's metrics, an OTLP ``MetricsData`` protobuf compressed with
``compression_type``. Checked as Kafka does, in order: a zero (or reserved) instance id, or any push after the
instance's terminating one, INVALID_REQUEST; a push sooner than the push interval after the previous one (the
first push after a GetTelemetrySubscriptions is always accepted) THROTTLING_QUOTA_EXCEEDED, unless ``terminating``;
a subscription id other than the instance's current one UNKNOWN_SUBSCRIPTION_ID (the client asks again); a
compression type that is not a record codec UNSUPPORTED_COMPRESSION_TYPE; a payload over ``telemetry.max.bytes``
(compressed, or once decompressed) TELEMETRY_TOO_LARGE; a payload that does not decompress or decode INVALID_RECORD.
Accepted gauges and sums (delta sums added up, cumulative ones as sent) go to the broker's Prometheus endpoint
(``metrics.port``) under the clients' own names made Prometheus-safe
(``org_apache_kafka_producer_record_queue_time_avg{client_instance_id=..,client_id=..,<point attributes>}``,
monotonic sums as ``..._total`` counters), kept a minute (or three push intervals) after the client's last push,
for at most ``client.telemetry.max.clients`` clients; histograms and summaries are not kept.
Authorization: none beyond an authenticated connection (as Kafka).
"""

from __future__ import annotations

from broker.handlers._telemetry import client_info, track_connection
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

API_KEY = ApiKey.PUSH_TELEMETRY
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    telemetry = ctx.services.telemetry
    payload = bytes(request.metrics or b"")
    if payload and len(payload) <= telemetry.max_bytes:
        # decompress and decode off the event loop: a payload may be up to telemetry.max.bytes of zstd
        error = await ctx.services.run_blocking(
            telemetry.push,
            request.client_instance_id,
            request.subscription_id,
            request.terminating,
            request.compression_type,
            payload,
            client_info(ctx),
        )
    else:
        error = telemetry.push(
            request.client_instance_id,
            request.subscription_id,
            request.terminating,
            request.compression_type,
            payload,
            client_info(ctx),
        )
    if request.client_instance_id.int > 1:  # not Kafka's reserved zero and one ids, which name no instance
        track_connection(ctx, telemetry, request.client_instance_id)
    return _API.Response(throttle_time_ms=0, error_code=error)
