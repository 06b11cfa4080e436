# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class ShareAcknowledgeRequest(Message):
    class AcknowledgeTopic(Message):
        class AcknowledgePartition(Message):
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
        partitions: list[AcknowledgePartition]
        def __init__(
            self,
            *,
            topic_id: UUID = ...,
            partitions: list[AcknowledgePartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    group_id: str | None
    member_id: str | None
    share_session_epoch: int
    is_renew_ack: bool  # v2+
    topics: list[AcknowledgeTopic]
    def __init__(
        self,
        *,
        group_id: str | None = ...,
        member_id: str | None = ...,
        share_session_epoch: int = ...,
        is_renew_ack: bool = ...,
        topics: list[AcknowledgeTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ShareAcknowledgeResponse(Message):
    class ShareAcknowledgeTopicResponse(Message):
        class PartitionData(Message):
            class LeaderIdAndEpoch(Message):
                leader_id: int
                leader_epoch: int
                def __init__(
                    self, *, leader_id: int = ..., leader_epoch: int = ..., unknown_tags: dict[int, bytes] | None = ...
                ) -> None: ...

            partition_index: int
            error_code: int
            error_message: str | None
            current_leader: LeaderIdAndEpoch
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
                current_leader: LeaderIdAndEpoch = ...,
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
    acquisition_lock_timeout_ms: int  # v2+
    responses: list[ShareAcknowledgeTopicResponse]
    node_endpoints: list[NodeEndpoint]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        acquisition_lock_timeout_ms: int = ...,
        responses: list[ShareAcknowledgeTopicResponse] = ...,
        node_endpoints: list[NodeEndpoint] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ShareAcknowledgeRequest, ShareAcknowledgeResponse]
