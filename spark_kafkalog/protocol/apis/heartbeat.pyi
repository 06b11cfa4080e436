# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class HeartbeatRequest(Message):
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None  # v3+
    def __init__(
        self,
        *,
        group_id: str = ...,
        generation_id: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class HeartbeatResponse(Message):
    throttle_time_ms: int  # v1+
    error_code: int
    def __init__(
        self, *, throttle_time_ms: int = ..., error_code: int = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

API: ApiSpec[HeartbeatRequest, HeartbeatResponse]
