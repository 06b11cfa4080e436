"""GetTelemetrySubscriptions (key 71), v0, flexible (KIP-714).
Which client metrics the broker wants pushed. A client first sends the all-zero ``client_instance_id``; the broker
assigns one and answers with the subscription: its id (pushes name it), the compression types the broker accepts
for pushed metrics, the push interval, the largest payload, whether to send deltas (else cumulative values) and the
metric name prefixes requested (empty: none, push nothing; a single empty string: all)."""

from ..schema import declare_api

API = declare_api(
    71,
    "GetTelemetrySubscriptions",
    versions="0",
    flexible="0+",
    request="""
        client_instance_id         uuid
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        client_instance_id         uuid
        subscription_id            int32
        accepted_compression_types []int8
        push_interval_ms           int32
        telemetry_max_bytes        int32
        delta_temporality          bool
        requested_metrics          []string
    """,
)
