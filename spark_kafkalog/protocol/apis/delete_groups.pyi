# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DeleteGroupsRequest(Message):
    groups_names: list[str]
    def __init__(self, *, groups_names: list[str] = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

class DeleteGroupsResponse(Message):
    class DeletableGroupResult(Message):
        group_id: str
        error_code: int
        error_message: str | None  # v3+
        def __init__(
            self,
            *,
            group_id: str = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    results: list[DeletableGroupResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[DeletableGroupResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DeleteGroupsRequest, DeleteGroupsResponse]
