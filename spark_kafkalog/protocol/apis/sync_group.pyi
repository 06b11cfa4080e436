# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class SyncGroupRequest(Message):
    class SyncGroupRequestAssignment(Message):
        member_id: str
        assignment: bytes
        def __init__(
            self, *, member_id: str = ..., assignment: bytes = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None  # v3+
    protocol_type: str | None  # v5+
    protocol_name: str | None  # v5+
    assignments: list[SyncGroupRequestAssignment]
    def __init__(
        self,
        *,
        group_id: str = ...,
        generation_id: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        protocol_type: str | None = ...,
        protocol_name: str | None = ...,
        assignments: list[SyncGroupRequestAssignment] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class SyncGroupResponse(Message):
    throttle_time_ms: int  # v1+
    error_code: int
    protocol_type: str | None  # v5+
    protocol_name: str | None  # v5+
    assignment: bytes
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        protocol_type: str | None = ...,
        protocol_name: str | None = ...,
        assignment: bytes = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[SyncGroupRequest, SyncGroupResponse]
