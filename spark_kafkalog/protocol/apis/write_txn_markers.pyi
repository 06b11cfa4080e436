# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class WriteTxnMarkersRequest(Message):
    class WritableTxnMarker(Message):
        class WritableTxnMarkerTopic(Message):
            name: str
            partition_indexes: list[int]
            def __init__(
                self,
                *,
                name: str = ...,
                partition_indexes: list[int] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        producer_id: int
        producer_epoch: int
        transaction_result: bool
        topics: list[WritableTxnMarkerTopic]
        coordinator_epoch: int
        def __init__(
            self,
            *,
            producer_id: int = ...,
            producer_epoch: int = ...,
            transaction_result: bool = ...,
            topics: list[WritableTxnMarkerTopic] = ...,
            coordinator_epoch: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    markers: list[WritableTxnMarker]
    def __init__(
        self, *, markers: list[WritableTxnMarker] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

class WriteTxnMarkersResponse(Message):
    class WritableTxnMarkerResult(Message):
        class WritableTxnMarkerTopicResult(Message):
            class WritableTxnMarkerPartitionResult(Message):
                partition_index: int
                error_code: int
                def __init__(
                    self,
                    *,
                    partition_index: int = ...,
                    error_code: int = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            name: str
            partitions: list[WritableTxnMarkerPartitionResult]
            def __init__(
                self,
                *,
                name: str = ...,
                partitions: list[WritableTxnMarkerPartitionResult] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        producer_id: int
        topics: list[WritableTxnMarkerTopicResult]
        def __init__(
            self,
            *,
            producer_id: int = ...,
            topics: list[WritableTxnMarkerTopicResult] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    markers: list[WritableTxnMarkerResult]
    def __init__(
        self, *, markers: list[WritableTxnMarkerResult] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

API: ApiSpec[WriteTxnMarkersRequest, WriteTxnMarkersResponse]
