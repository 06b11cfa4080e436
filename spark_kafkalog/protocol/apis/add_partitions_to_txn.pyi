# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class AddPartitionsToTxnRequest(Message):
    class AddPartitionsToTxnTransaction(Message):
        class AddPartitionsToTxnTopic(Message):
            name: str
            partitions: list[int]
            def __init__(
                self, *, name: str = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        transactional_id: str
        producer_id: int
        producer_epoch: int
        verify_only: bool
        topics: list[AddPartitionsToTxnTopic]
        def __init__(
            self,
            *,
            transactional_id: str = ...,
            producer_id: int = ...,
            producer_epoch: int = ...,
            verify_only: bool = ...,
            topics: list[AddPartitionsToTxnTopic] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class AddPartitionsToTxnTopic(Message):
        name: str
        partitions: list[int]
        def __init__(
            self, *, name: str = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    transactions: list[AddPartitionsToTxnTransaction]  # v4+
    v3_and_below_transactional_id: str  # v0-3
    v3_and_below_producer_id: int  # v0-3
    v3_and_below_producer_epoch: int  # v0-3
    v3_and_below_topics: list[AddPartitionsToTxnTopic]  # v0-3
    def __init__(
        self,
        *,
        transactions: list[AddPartitionsToTxnTransaction] = ...,
        v3_and_below_transactional_id: str = ...,
        v3_and_below_producer_id: int = ...,
        v3_and_below_producer_epoch: int = ...,
        v3_and_below_topics: list[AddPartitionsToTxnTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class AddPartitionsToTxnResponse(Message):
    class AddPartitionsToTxnResult(Message):
        class AddPartitionsToTxnTopicResult(Message):
            class AddPartitionsToTxnPartitionResult(Message):
                partition_index: int
                partition_error_code: int
                def __init__(
                    self,
                    *,
                    partition_index: int = ...,
                    partition_error_code: int = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            name: str
            results_by_partition: list[AddPartitionsToTxnPartitionResult]
            def __init__(
                self,
                *,
                name: str = ...,
                results_by_partition: list[AddPartitionsToTxnPartitionResult] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        transactional_id: str
        topic_results: list[AddPartitionsToTxnTopicResult]
        def __init__(
            self,
            *,
            transactional_id: str = ...,
            topic_results: list[AddPartitionsToTxnTopicResult] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class AddPartitionsToTxnTopicResult(Message):
        class AddPartitionsToTxnPartitionResult(Message):
            partition_index: int
            partition_error_code: int
            def __init__(
                self,
                *,
                partition_index: int = ...,
                partition_error_code: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        results_by_partition: list[AddPartitionsToTxnPartitionResult]
        def __init__(
            self,
            *,
            name: str = ...,
            results_by_partition: list[AddPartitionsToTxnPartitionResult] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int  # v4+
    results_by_transaction: list[AddPartitionsToTxnResult]  # v4+
    results_by_topic_v3_and_below: list[AddPartitionsToTxnTopicResult]  # v0-3
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        results_by_transaction: list[AddPartitionsToTxnResult] = ...,
        results_by_topic_v3_and_below: list[AddPartitionsToTxnTopicResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[AddPartitionsToTxnRequest, AddPartitionsToTxnResponse]
