# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class ShareGroupDescribeRequest(Message):
    group_ids: list[str]
    include_authorized_operations: bool
    def __init__(
        self,
        *,
        group_ids: list[str] = ...,
        include_authorized_operations: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ShareGroupDescribeResponse(Message):
    class DescribedGroup(Message):
        class Member(Message):
            class Assignment(Message):
                class TopicPartitions(Message):
                    topic_id: UUID
                    topic_name: str
                    partitions: list[int]
                    def __init__(
                        self,
                        *,
                        topic_id: UUID = ...,
                        topic_name: str = ...,
                        partitions: list[int] = ...,
                        unknown_tags: dict[int, bytes] | None = ...,
                    ) -> None: ...

                topic_partitions: list[TopicPartitions]
                def __init__(
                    self, *, topic_partitions: list[TopicPartitions] = ..., unknown_tags: dict[int, bytes] | None = ...
                ) -> None: ...

            member_id: str
            rack_id: str | None
            member_epoch: int
            client_id: str
            client_host: str
            subscribed_topic_names: list[str]
            assignment: Assignment
            def __init__(
                self,
                *,
                member_id: str = ...,
                rack_id: str | None = ...,
                member_epoch: int = ...,
                client_id: str = ...,
                client_host: str = ...,
                subscribed_topic_names: list[str] = ...,
                assignment: Assignment = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        error_code: int
        error_message: str | None
        group_id: str
        group_state: str
        group_epoch: int
        assignment_epoch: int
        assignor_name: str
        members: list[Member]
        authorized_operations: int
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            group_id: str = ...,
            group_state: str = ...,
            group_epoch: int = ...,
            assignment_epoch: int = ...,
            assignor_name: str = ...,
            members: list[Member] = ...,
            authorized_operations: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    groups: list[DescribedGroup]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        groups: list[DescribedGroup] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ShareGroupDescribeRequest, ShareGroupDescribeResponse]
