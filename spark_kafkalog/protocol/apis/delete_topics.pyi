# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class DeleteTopicsRequest(Message):
    class DeleteTopicState(Message):
        name: str | None
        topic_id: UUID
        def __init__(
            self, *, name: str | None = ..., topic_id: UUID = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    topics: list[DeleteTopicState]  # v6+
    topic_names: list[str]  # v0-5
    timeout_ms: int
    def __init__(
        self,
        *,
        topics: list[DeleteTopicState] = ...,
        topic_names: list[str] = ...,
        timeout_ms: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class DeleteTopicsResponse(Message):
    class DeletableTopicResult(Message):
        name: str | None  # null v6
        topic_id: UUID  # v6+
        error_code: int
        error_message: str | None  # v5+
        def __init__(
            self,
            *,
            name: str | None = ...,
            topic_id: UUID = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v1+
    responses: list[DeletableTopicResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        responses: list[DeletableTopicResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DeleteTopicsRequest, DeleteTopicsResponse]
