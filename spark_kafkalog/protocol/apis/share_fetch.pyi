# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from typing import Any
from uuid import UUID

from ..schema import ApiSpec, Message

class ShareFetchRequest(Message):
    class FetchTopic(Message):
        class FetchPartition(Message):
            class AcknowledgementBatch(Message):
                first_offset: int
                last_offset: int
                acknowledge_types: list[int]
                def __init__(
                    self,
                    *,
                    first_offset: int = ...,
                    last_offset: int = ...,
                    acknowledge_types: list[int] = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            partition_index: int
            acknowledgement_batches: list[AcknowledgementBatch]
            def __init__(
                self,
                *,
                partition_index: int = ...,
                acknowledgement_batches: list[AcknowledgementBatch] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        topic_id: UUID
        partitions: list[FetchPartition]
        def __init__(
            self,
            *,
            topic_id: UUID = ...,
            partitions: list[FetchPartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class ForgottenTopic(Message):
        topic_id: UUID
        partitions: list[int]
        def __init__(
            self, *, topic_id: UUID = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    group_id: str | None
    member_id: str | None
    share_session_epoch: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    max_records: int
    batch_size: int
    share_acquire_mode: int  # v2+
    is_renew_ack: bool  # v2+
    topics: list[FetchTopic]
    forgotten_topics_data: list[ForgottenTopic]
    def __init__(
        self,
        *,
        group_id: str | None = ...,
        member_id: str | None = ...,
        share_session_epoch: int = ...,
        max_wait_ms: int = ...,
        min_bytes: int = ...,
        max_bytes: int = ...,
        max_records: int = ...,
        batch_size: int = ...,
        share_acquire_mode: int = ...,
        is_renew_ack: bool = ...,
        topics: list[FetchTopic] = ...,
        forgotten_topics_data: list[ForgottenTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ShareFetchResponse(Message):
    class ShareFetchableTopicResponse(Message):
        class PartitionData(Message):
            class LeaderIdAndEpoch(Message):
                leader_id: int
                leader_epoch: int
                def __init__(
                    self, *, leader_id: int = ..., leader_epoch: int = ..., unknown_tags: dict[int, bytes] | None = ...
                ) -> None: ...

            class AcquiredRecords(Message):
                first_offset: int
                last_offset: int
                delivery_count: int
                def __init__(
                    self,
                    *,
                    first_offset: int = ...,
                    last_offset: int = ...,
                    delivery_count: int = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            partition_index: int
            error_code: int
            error_message: str | None
            acknowledge_error_code: int
            acknowledge_error_message: str | None
            current_leader: LeaderIdAndEpoch
            records: Any
            acquired_records: list[AcquiredRecords]
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
                acknowledge_error_code: int = ...,
                acknowledge_error_message: str | None = ...,
                current_leader: LeaderIdAndEpoch = ...,
                records: Any = ...,
                acquired_records: list[AcquiredRecords] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        topic_id: UUID
        partitions: list[PartitionData]
        def __init__(
            self,
            *,
            topic_id: UUID = ...,
            partitions: list[PartitionData] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class NodeEndpoint(Message):
        node_id: int
        host: str
        port: int
        rack: str | None
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    acquisition_lock_timeout_ms: int
    responses: list[ShareFetchableTopicResponse]
    node_endpoints: list[NodeEndpoint]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        acquisition_lock_timeout_ms: int = ...,
        responses: list[ShareFetchableTopicResponse] = ...,
        node_endpoints: list[NodeEndpoint] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ShareFetchRequest, ShareFetchResponse]
