# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DescribeGroupsRequest(Message):
    groups: list[str]
    include_authorized_operations: bool  # v3+
    def __init__(
        self,
        *,
        groups: list[str] = ...,
        include_authorized_operations: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class DescribeGroupsResponse(Message):
    class DescribedGroup(Message):
        class DescribedGroupMember(Message):
            member_id: str
            group_instance_id: str | None  # v4+
            client_id: str
            client_host: str
            member_metadata: bytes
            member_assignment: bytes
            def __init__(
                self,
                *,
                member_id: str = ...,
                group_instance_id: str | None = ...,
                client_id: str = ...,
                client_host: str = ...,
                member_metadata: bytes = ...,
                member_assignment: bytes = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        error_code: int
        error_message: str | None  # v6+
        group_id: str
        group_state: str
        protocol_type: str
        protocol_data: str
        members: list[DescribedGroupMember]
        authorized_operations: int  # v3+
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            group_id: str = ...,
            group_state: str = ...,
            protocol_type: str = ...,
            protocol_data: str = ...,
            members: list[DescribedGroupMember] = ...,
            authorized_operations: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v1+
    groups: list[DescribedGroup]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        groups: list[DescribedGroup] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeGroupsRequest, DescribeGroupsResponse]
