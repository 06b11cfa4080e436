"""ListClientMetricsResources (key 74), v0, flexible (KIP-714).
Names every client metrics subscription (the ``CLIENT_METRICS`` config resources that DescribeConfigs and
IncrementalAlterConfigs manage). The request has no fields; the response lists the resource names, with one
top-level error code."""

from ..schema import declare_api

API = declare_api(
    74,
    "ListClientMetricsResources",
    versions="0",
    flexible="0+",
    request="",
    response="""
        throttle_time_ms           int32
        error_code                 int16
        client_metrics_resources   []ClientMetricsResource
          name                     string
    """,
)
