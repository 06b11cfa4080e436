# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DescribeProducersRequest(Message):
    class TopicRequest(Message):
        name: str
        partition_indexes: list[int]
        def __init__(
            self, *, name: str = ..., partition_indexes: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    topics: list[TopicRequest]
    def __init__(self, *, topics: list[TopicRequest] = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

class DescribeProducersResponse(Message):
    class TopicResponse(Message):
        class PartitionResponse(Message):
            class ProducerState(Message):
                producer_id: int
                producer_epoch: int
                last_sequence: int
                last_timestamp: int
                coordinator_epoch: int
                current_txn_start_offset: int
                def __init__(
                    self,
                    *,
                    producer_id: int = ...,
                    producer_epoch: int = ...,
                    last_sequence: int = ...,
                    last_timestamp: int = ...,
                    coordinator_epoch: int = ...,
                    current_txn_start_offset: int = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            partition_index: int
            error_code: int
            error_message: str | None
            active_producers: list[ProducerState]
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
                active_producers: list[ProducerState] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        partitions: list[PartitionResponse]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[PartitionResponse] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    topics: list[TopicResponse]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[TopicResponse] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeProducersRequest, DescribeProducersResponse]
