# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class DeleteShareGroupOffsetsRequest(Message):
    class DeleteShareGroupOffsetsRequestTopic(Message):
        topic_name: str
        def __init__(self, *, topic_name: str = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

    group_id: str
    topics: list[DeleteShareGroupOffsetsRequestTopic]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[DeleteShareGroupOffsetsRequestTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class DeleteShareGroupOffsetsResponse(Message):
    class DeleteShareGroupOffsetsResponseTopic(Message):
        topic_name: str
        topic_id: UUID
        error_code: int
        error_message: str | None
        def __init__(
            self,
            *,
            topic_name: str = ...,
            topic_id: UUID = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    responses: list[DeleteShareGroupOffsetsResponseTopic]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        responses: list[DeleteShareGroupOffsetsResponseTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse]
