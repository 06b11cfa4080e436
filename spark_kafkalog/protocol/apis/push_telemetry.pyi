# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class PushTelemetryRequest(Message):
    client_instance_id: UUID
    subscription_id: int
    terminating: bool
    compression_type: int
    metrics: bytes
    def __init__(
        self,
        *,
        client_instance_id: UUID = ...,
        subscription_id: int = ...,
        terminating: bool = ...,
        compression_type: int = ...,
        metrics: bytes = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class PushTelemetryResponse(Message):
    throttle_time_ms: int
    error_code: int
    def __init__(
        self, *, throttle_time_ms: int = ..., error_code: int = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

API: ApiSpec[PushTelemetryRequest, PushTelemetryResponse]
