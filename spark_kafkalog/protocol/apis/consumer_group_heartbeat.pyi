# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class ConsumerGroupHeartbeatRequest(Message):
    class TopicPartitions(Message):
        topic_id: UUID
        partitions: list[int]
        def __init__(
            self, *, topic_id: UUID = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    subscribed_topic_names: list[str] | None
    subscribed_topic_regex: str | None  # v1+
    server_assignor: str | None
    topic_partitions: list[TopicPartitions] | None
    def __init__(
        self,
        *,
        group_id: str = ...,
        member_id: str = ...,
        member_epoch: int = ...,
        instance_id: str | None = ...,
        rack_id: str | None = ...,
        rebalance_timeout_ms: int = ...,
        subscribed_topic_names: list[str] | None = ...,
        subscribed_topic_regex: str | None = ...,
        server_assignor: str | None = ...,
        topic_partitions: list[TopicPartitions] | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ConsumerGroupHeartbeatResponse(Message):
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

API: ApiSpec[ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse]
