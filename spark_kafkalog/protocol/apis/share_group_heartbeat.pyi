# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class ShareGroupHeartbeatRequest(Message):
    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None
    subscribed_topic_names: list[str] | None
    def __init__(
        self,
        *,
        group_id: str = ...,
        member_id: str = ...,
        member_epoch: int = ...,
        rack_id: str | None = ...,
        subscribed_topic_names: list[str] | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ShareGroupHeartbeatResponse(Message):
    class Assignment(Message):
        class TopicPartitions(Message):
            topic_id: UUID
            partitions: list[int]
            def __init__(
                self, *, topic_id: UUID = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        topic_partitions: list[TopicPartitions]
        def __init__(
            self, *, topic_partitions: list[TopicPartitions] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    member_id: str | None
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: Assignment | None
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        member_id: str | None = ...,
        member_epoch: int = ...,
        heartbeat_interval_ms: int = ...,
        assignment: Assignment | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse]
