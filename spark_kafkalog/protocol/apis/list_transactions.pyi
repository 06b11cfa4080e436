# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class ListTransactionsRequest(Message):
    state_filters: list[str]
    producer_id_filters: list[int]
    duration_filter: int  # v1+
    transactional_id_pattern: str | None  # v2+
    def __init__(
        self,
        *,
        state_filters: list[str] = ...,
        producer_id_filters: list[int] = ...,
        duration_filter: int = ...,
        transactional_id_pattern: str | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ListTransactionsResponse(Message):
    class TransactionState(Message):
        transactional_id: str
        producer_id: int
        transaction_state: str
        def __init__(
            self,
            *,
            transactional_id: str = ...,
            producer_id: int = ...,
            transaction_state: str = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    unknown_state_filters: list[str]
    transaction_states: list[TransactionState]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        unknown_state_filters: list[str] = ...,
        transaction_states: list[TransactionState] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ListTransactionsRequest, ListTransactionsResponse]
