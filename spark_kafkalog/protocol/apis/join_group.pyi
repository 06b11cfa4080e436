# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class JoinGroupRequest(Message):
    class JoinGroupRequestProtocol(Message):
        name: str
        metadata: bytes
        def __init__(
            self, *, name: str = ..., metadata: bytes = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int  # v1+
    member_id: str
    group_instance_id: str | None  # v5+
    protocol_type: str
    protocols: list[JoinGroupRequestProtocol]
    reason: str | None  # v8+
    def __init__(
        self,
        *,
        group_id: str = ...,
        session_timeout_ms: int = ...,
        rebalance_timeout_ms: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        protocol_type: str = ...,
        protocols: list[JoinGroupRequestProtocol] = ...,
        reason: str | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class JoinGroupResponse(Message):
    class JoinGroupResponseMember(Message):
        member_id: str
        group_instance_id: str | None  # v5+
        metadata: bytes
        def __init__(
            self,
            *,
            member_id: str = ...,
            group_instance_id: str | None = ...,
            metadata: bytes = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v2+
    error_code: int
    generation_id: int
    protocol_type: str | None  # v7+
    protocol_name: str | None  # null v7-9
    leader: str
    skip_assignment: bool  # v9+
    member_id: str
    members: list[JoinGroupResponseMember]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        generation_id: int = ...,
        protocol_type: str | None = ...,
        protocol_name: str | None = ...,
        leader: str = ...,
        skip_assignment: bool = ...,
        member_id: str = ...,
        members: list[JoinGroupResponseMember] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[JoinGroupRequest, JoinGroupResponse]
