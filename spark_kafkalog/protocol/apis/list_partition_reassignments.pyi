# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class ListPartitionReassignmentsRequest(Message):
    class ListPartitionReassignmentsTopics(Message):
        name: str
        partition_indexes: list[int]
        def __init__(
            self, *, name: str = ..., partition_indexes: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    timeout_ms: int
    topics: list[ListPartitionReassignmentsTopics] | None
    def __init__(
        self,
        *,
        timeout_ms: int = ...,
        topics: list[ListPartitionReassignmentsTopics] | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ListPartitionReassignmentsResponse(Message):
    class OngoingTopicReassignment(Message):
        class OngoingPartitionReassignment(Message):
            partition_index: int
            replicas: list[int]
            adding_replicas: list[int]
            removing_replicas: list[int]
            def __init__(
                self,
                *,
                partition_index: int = ...,
                replicas: list[int] = ...,
                adding_replicas: list[int] = ...,
                removing_replicas: list[int] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        partitions: list[OngoingPartitionReassignment]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[OngoingPartitionReassignment] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    topics: list[OngoingTopicReassignment]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        topics: list[OngoingTopicReassignment] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse]
