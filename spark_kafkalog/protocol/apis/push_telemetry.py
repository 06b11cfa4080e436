"""PushTelemetry (key 72), v0, flexible (KIP-714).
A client pushes its metrics to the broker: ``metrics`` is an OpenTelemetry ``MetricsData`` protobuf, compressed
with ``compression_type`` (a record compression code the subscription accepted; 0 = none), for the subscription
``subscription_id`` that GetTelemetrySubscriptions returned. ``terminating`` marks the client's last push before it
closes. The response carries only an error code (e.g. UNKNOWN_SUBSCRIPTION_ID: fetch the subscription again)."""

from ..schema import declare_api

API = declare_api(
    72,
    "PushTelemetry",
    versions="0",
    flexible="0+",
    request="""
        client_instance_id         uuid
        subscription_id            int32
        terminating                bool
        compression_type           int8
        metrics                    bytes
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
    """,
)
