# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class CreatePartitionsRequest(Message):
    class CreatePartitionsTopic(Message):
        class CreatePartitionsAssignment(Message):
            broker_ids: list[int]
            def __init__(self, *, broker_ids: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

        name: str
        count: int
        assignments: list[CreatePartitionsAssignment] | None
        def __init__(
            self,
            *,
            name: str = ...,
            count: int = ...,
            assignments: list[CreatePartitionsAssignment] | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    topics: list[CreatePartitionsTopic]
    timeout_ms: int
    validate_only: bool
    def __init__(
        self,
        *,
        topics: list[CreatePartitionsTopic] = ...,
        timeout_ms: int = ...,
        validate_only: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class CreatePartitionsResponse(Message):
    class CreatePartitionsTopicResult(Message):
        name: str
        error_code: int
        error_message: str | None
        def __init__(
            self,
            *,
            name: str = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    results: list[CreatePartitionsTopicResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        results: list[CreatePartitionsTopicResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[CreatePartitionsRequest, CreatePartitionsResponse]
