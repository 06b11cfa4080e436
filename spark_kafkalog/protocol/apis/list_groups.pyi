# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class ListGroupsRequest(Message):
    states_filter: list[str]  # v4+
    types_filter: list[str]  # v5+
    def __init__(
        self,
        *,
        states_filter: list[str] = ...,
        types_filter: list[str] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ListGroupsResponse(Message):
    class ListedGroup(Message):
        group_id: str
        protocol_type: str
        group_state: str  # v4+
        group_type: str  # v5+
        def __init__(
            self,
            *,
            group_id: str = ...,
            protocol_type: str = ...,
            group_state: str = ...,
            group_type: str = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v1+
    error_code: int
    groups: list[ListedGroup]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        groups: list[ListedGroup] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ListGroupsRequest, ListGroupsResponse]
