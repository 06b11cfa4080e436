# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DescribeTransactionsRequest(Message):
    transactional_ids: list[str]
    def __init__(self, *, transactional_ids: list[str] = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

class DescribeTransactionsResponse(Message):
    class TransactionState(Message):
        class TopicData(Message):
            topic: str
            partitions: list[int]
            def __init__(
                self, *, topic: str = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        error_code: int
        transactional_id: str
        transaction_state: str
        transaction_timeout_ms: int
        transaction_start_time_ms: int
        producer_id: int
        producer_epoch: int
        topics: list[TopicData]
        def __init__(
            self,
            *,
            error_code: int = ...,
            transactional_id: str = ...,
            transaction_state: str = ...,
            transaction_timeout_ms: int = ...,
            transaction_start_time_ms: int = ...,
            producer_id: int = ...,
            producer_epoch: int = ...,
            topics: list[TopicData] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    transaction_states: list[TransactionState]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        transaction_states: list[TransactionState] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeTransactionsRequest, DescribeTransactionsResponse]
