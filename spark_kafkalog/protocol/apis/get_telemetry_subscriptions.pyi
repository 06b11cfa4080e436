# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class GetTelemetrySubscriptionsRequest(Message):
    client_instance_id: UUID
    def __init__(self, *, client_instance_id: UUID = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

class GetTelemetrySubscriptionsResponse(Message):
    throttle_time_ms: int
    error_code: int
    client_instance_id: UUID
    subscription_id: int
    accepted_compression_types: list[int]
    push_interval_ms: int
    telemetry_max_bytes: int
    delta_temporality: bool
    requested_metrics: list[str]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        client_instance_id: UUID = ...,
        subscription_id: int = ...,
        accepted_compression_types: list[int] = ...,
        push_interval_ms: int = ...,
        telemetry_max_bytes: int = ...,
        delta_temporality: bool = ...,
        requested_metrics: list[str] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse]
