# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class LeaveGroupRequest(Message):
    class MemberIdentity(Message):
        member_id: str
        group_instance_id: str | None
        reason: str | None  # v5+
        def __init__(
            self,
            *,
            member_id: str = ...,
            group_instance_id: str | None = ...,
            reason: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    group_id: str
    member_id: str  # v0-2
    members: list[MemberIdentity]  # v3+
    def __init__(
        self,
        *,
        group_id: str = ...,
        member_id: str = ...,
        members: list[MemberIdentity] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class LeaveGroupResponse(Message):
    class MemberResponse(Message):
        member_id: str
        group_instance_id: str | None
        error_code: int
        def __init__(
            self,
            *,
            member_id: str = ...,
            group_instance_id: str | None = ...,
            error_code: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v1+
    error_code: int
    members: list[MemberResponse]  # v3+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        members: list[MemberResponse] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[LeaveGroupRequest, LeaveGroupResponse]
