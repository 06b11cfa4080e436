# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from typing import Any
from uuid import UUID

from ..schema import ApiSpec, Message

class ProduceRequest(Message):
    class TopicProduceData(Message):
        class PartitionProduceData(Message):
            index: int
            records: Any
            def __init__(
                self, *, index: int = ..., records: Any = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        name: str  # v0-12
        topic_id: UUID  # v13+
        partition_data: list[PartitionProduceData]
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: UUID = ...,
            partition_data: list[PartitionProduceData] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    transactional_id: str | None  # v3+
    acks: int
    timeout_ms: int
    topic_data: list[TopicProduceData]
    def __init__(
        self,
        *,
        transactional_id: str | None = ...,
        acks: int = ...,
        timeout_ms: int = ...,
        topic_data: list[TopicProduceData] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ProduceResponse(Message):
    class TopicProduceResponse(Message):
        class PartitionProduceResponse(Message):
            class BatchIndexAndErrorMessage(Message):
                batch_index: int
                batch_index_error_message: str | None
                def __init__(
                    self,
                    *,
                    batch_index: int = ...,
                    batch_index_error_message: str | None = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            class LeaderIdAndEpoch(Message):
                leader_id: int
                leader_epoch: int
                def __init__(
                    self, *, leader_id: int = ..., leader_epoch: int = ..., unknown_tags: dict[int, bytes] | None = ...
                ) -> None: ...

            index: int
            error_code: int
            base_offset: int
            log_append_time_ms: int  # v2+
            log_start_offset: int  # v5+
            record_errors: list[BatchIndexAndErrorMessage]  # v8+
            error_message: str | None  # v8+
            current_leader: LeaderIdAndEpoch  # v10+, tag 0
            def __init__(
                self,
                *,
                index: int = ...,
                error_code: int = ...,
                base_offset: int = ...,
                log_append_time_ms: int = ...,
                log_start_offset: int = ...,
                record_errors: list[BatchIndexAndErrorMessage] = ...,
                error_message: str | None = ...,
                current_leader: LeaderIdAndEpoch = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str  # v0-12
        topic_id: UUID  # v13+
        partition_responses: list[PartitionProduceResponse]
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: UUID = ...,
            partition_responses: list[PartitionProduceResponse] = ...,
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

    responses: list[TopicProduceResponse]
    throttle_time_ms: int  # v1+
    node_endpoints: list[NodeEndpoint]  # v10+, tag 0
    def __init__(
        self,
        *,
        responses: list[TopicProduceResponse] = ...,
        throttle_time_ms: int = ...,
        node_endpoints: list[NodeEndpoint] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ProduceRequest, ProduceResponse]
